import Foundation
import LiveAuth
import LiveCore
import LiveRTMP
import LiveServer
import Testing
@testable import LiveLine

@Suite("Token renewal through reconnects", .serialized)
struct TokenRenewalTests {
    static let secret = Array("renewal-test-secret-0123456789".utf8)

    /// A provider minting `ttl`-second tokens for `permission`, counting its calls.
    final class Minter: @unchecked Sendable {
        // @unchecked: `calls` is touched only under `lock`.
        private let lock = NSLock()
        private var calls = 0
        let permission: AccessPermission
        let ttl: Int64

        init(_ permission: AccessPermission, ttl: Int64) {
            self.permission = permission
            self.ttl = ttl
        }

        var count: Int {
            lock.lock()
            defer { lock.unlock() }
            return calls
        }

        private func called() {
            lock.lock()
            calls += 1
            lock.unlock()
        }

        var provider: TokenProvider {
            { [self] in
                called()
                let now = Int64(Date().timeIntervalSince1970)
                let token = AccessToken.mint(AccessClaims(sub: "alice", iat: now, exp: now + ttl, perm: [permission]),
                                             secret: TokenRenewalTests.secret)
                return IssuedToken(token: token, uid: "alice", expiresAt: now + ttl)
            }
        }
    }

    @Test("a relay closing sessions at expiry (--on-expiry close): the hoster and the guest come back with a fresh token each time and frames keep coming")
    func renewByReconnect() throws {
        var rtmp = RTMPServer.Configuration(port: 0)
        rtmp.auth = TokenVerifier(secret: TokenRenewalTests.secret, leewaySeconds: 0)
        rtmp.onExpiry = .close
        rtmp.pingInterval = .milliseconds(200)
        let relay = try RelayServer(configuration: .init(rtmp: rtmp, httpPort: 0, loops: 2))
        defer { relay.shutdown() }
        let url = try RTMPURL(parsing: "rtmp://127.0.0.1:\(relay.rtmpPort)/live/renew")

        let publishTokens = Minter(AccessPermission(action: .publish, path: "live/renew"), ttl: 2)
        var push = RTMPPublishSink.Options()
        push.tokenProvider = publishTokens.provider
        push.backoff = ReconnectBackoff(baseSeconds: 0.2, factor: 1, capSeconds: 1, jitter: 0, maxTries: 20)
        var configuration = HosterConfiguration()
        (configuration.width, configuration.height, configuration.bitrateKbps) = (320, 240, 300)
        configuration.keyframeIntervalSeconds = 0.5
        let hoster = try HosterPipeline(configuration: configuration)
        let sink = RTMPPublishSink(url: url, options: push)
        hoster.addSink(sink)
        try hoster.start(frameLimit: 30 * 7)

        let playTokens = Minter(AccessPermission(action: .play, path: "live/*"), ttl: 2)
        var guestConfiguration = GuestPipeline.Configuration(url: url)
        guestConfiguration.tokenProvider = playTokens.provider
        guestConfiguration.duration = 6
        guestConfiguration.reconnect = ReconnectBackoff(baseSeconds: 0.2, factor: 1, capSeconds: 1, jitter: 0, maxTries: 20)
        let guest = try GuestPipeline(configuration: guestConfiguration)
        try guest.start()
        _ = try guest.wait(seconds: 15)
        let reconnects = sink.status.reconnects
        hoster.stop()
        try hoster.wait()

        print("renewal by reconnect: \(publishTokens.count) publish tokens, \(reconnects) hoster reconnects, "
              + "\(playTokens.count) play tokens, \(guest.stats.reconnects) guest reconnects, \(guest.stats.frames) guest frames in 6 s")
        #expect(publishTokens.count >= 3, "the hoster asked for \(publishTokens.count) tokens")
        #expect(reconnects >= 2, "\(reconnects) reconnects")
        #expect(playTokens.count >= 3, "the guest asked for \(playTokens.count) tokens")
        #expect(guest.stats.reconnects >= 2)
        #expect(guest.endReason == .duration)
        // 6 s at 30 fps, minus the gaps of both sides' reconnects.
        #expect(guest.stats.frames > 60, "\(guest.stats.frames) frames")
    }
}
