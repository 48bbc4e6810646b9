import Foundation
import LiveAuth
import LiveCore
import LiveLine
import LiveMix
import LiveRTMP
import LiveServer
import LiveSignal
import Testing

/// Every line event a kit reported, in order.
final class LineEventLog: @unchecked Sendable {
    // @unchecked: `events` under `lock`.
    private let lock = NSLock()
    private var events: [LineSessionEvent] = []

    func append(_ event: LineSessionEvent) {
        lock.lock()
        events.append(event)
        lock.unlock()
    }

    var all: [LineSessionEvent] {
        lock.lock()
        defer { lock.unlock() }
        return events
    }

    /// The first event `match` accepts, waiting up to `timeout` seconds.
    func wait<T>(timeout: Double = 5, _ match: (LineSessionEvent) -> T?) -> T? {
        let deadline = Date().addingTimeInterval(timeout)
        repeat {
            if let hit = all.lazy.compactMap(match).first { return hit }
            Thread.sleep(forTimeInterval: 0.02)
        } while Date() < deadline
        return nil
    }
}

@Suite("Hoster and Guest kits on the co-host line", .serialized)
struct LineKitTests {
    @Test("LineServer: the signal address defaults to the RTMP host on 8080; co-host streams sit beside the live stream")
    func lineServer() throws {
        let server = LineServer(rtmp: try RTMPURL(parsing: "rtmp://example.org:1936/live/room"))
        #expect(server.signalURL == "ws://example.org:8080/line")
        #expect(server.streamURL(pubId: "line-abc", query: "line=s3cret").streamNameWithQuery == "line-abc?line=s3cret")
        #expect(LineServer(rtmp: try RTMPURL(parsing: "rtmp://[::1]/live/x"), httpPort: 9000).signalURL == "ws://[::1]:9000/line")
    }

    @Test("LineSessionEvent: each server event maps to its kit event with the anyRTC SDK's code")
    func eventMapping() {
        #expect(LineSessionEvent(LineEvent(.reply, id: 1, op: "apply", code: .ok)) == nil)
        #expect(LineSessionEvent(LineEvent(.applicationResult, code: .lineFull, reason: "lineFull", peerId: "p"))
            == .applicationResult(code: .lineFull, peerId: "p", reason: "lineFull"))
        #expect(LineSessionEvent(LineEvent(.cohostOpened, peerId: "p", pubId: "line-x", userId: "u", userData: "d"))
            == .cohostOpened(peerId: "p", pubId: "line-x", userId: "u", userData: "d"))
        #expect(LineSessionEvent(LineEvent(.memberCount, total: 4), serverId: "ws://h:1/line", roomId: "r")
            == .memberCount(serverId: "ws://h:1/line", roomId: "r", total: 4))
        // Message types: the SDK's numbers, the wire's names; an unknown name reads as normal.
        #expect(LineMessageType.allCases.map(\.rawValue) == [0, 1] && LineMessageType.allCases.map(\.name) == ["normal", "barrage"])
        #expect(LineSessionEvent(LineEvent(.message, userId: "u", type: "barrage", userName: "U", content: "c"))
            == .message(type: .barrage, userId: "u", userName: "U", header: "", content: "c"))
        #expect(LineSessionEvent(LineEvent(.message, userId: "u", type: "shout", userName: "U", content: "c"))
            == .message(type: .normal, userId: "u", userName: "U", header: "", content: "c"))
        #expect(LineSessionEvent.lineClosed(code: .forcedExit, reason: "r").fields.map(\.key) == ["code", "reason"])
        #expect(LineSessionEvent(LineEvent(.liveStop)) == .liveStop)
        #expect(LineSessionEvent.refused(op: "accept", code: .lineFull, message: "full").fields.map(\.key) == ["op", "code", "message"])
        // Tokens: the warning carries the seconds left; an expired token is an auth failure with 212.
        #expect(LineSessionEvent(LineEvent(.tokenWillExpire, seconds: 300)) == .tokenWillExpire(seconds: 300))
        #expect(LineSessionEvent(LineEvent(.tokenExpired, code: .authTimeout, message: "expired")) == .authFailed(code: .authTimeout, message: "expired"))
        #expect(LineSessionEvent.authFailed(code: .authFailed, message: "m").name == "authFailed")
        #expect(LineSessionEvent.tokenRenewed(expiresAt: 5).fields.map(\.key) == ["expiresAt"])
    }

    @Test("hoster kit + guest kit through a relay: apply, accept, the co-host's frames reach the mix, messages, AV status, live template change, hangup, close")
    func kitsEndToEnd() throws {
        var configuration = RelayServer.Configuration(rtmp: RTMPServer.Configuration(port: 0), httpPort: 0, loops: 2)
        configuration.line = LineLimits()
        let relay = try RelayServer(configuration: configuration)
        defer { relay.shutdown() }
        // The push carries the lineKey that lets this hoster (and nobody else) open line "kits".
        let rtmp = LineServer.hosterPushURL(try RTMPURL(parsing: "rtmp://127.0.0.1:\(relay.rtmpPort)/live/kits"))
        let server = LineServer(signalURL: "ws://127.0.0.1:\(relay.httpPort)/line", rtmp: rtmp)

        var options = Hoster.Options()
        options.configuration.source = "color:white"
        (options.configuration.width, options.configuration.height) = (320, 180)
        let hoster = try Hoster(options: options)
        let hosterLog = LineEventLog()
        hoster.onLineEvent = { hosterLog.append($0) }
        // Before a line exists a line call is answered, not dropped.
        hoster.acceptLine(peerId: "nobody")
        #expect(hosterLog.wait { event -> LiveCode? in if case .refused(_, let code, _) = event { return code }; return nil } == .lineNotStarted)
        try hoster.startPush(url: rtmp)
        defer { hoster.stopPush() }
        try hoster.createLine(server: server, liveId: "kits", userId: "host", liveInfo: "{\"liveTopic\":\"kits\"}")
        #expect(hosterLog.wait { event -> LiveCode? in if case .lineResult(let code, _) = event { return code }; return nil } == .ok)

        var guestOptions = Guest.Options()
        guestOptions.cohost.source = "color:red"
        (guestOptions.cohost.width, guestOptions.cohost.height) = (160, 90)
        let guest = Guest(options: guestOptions)
        let guestLog = LineEventLog()
        guest.onLineEvent = { guestLog.append($0) }
        try guest.joinLine(server: server, liveId: "kits", userId: "g1", userData: "hello")
        defer { guest.leaveLine() }
        #expect(guestLog.wait { event -> Bool? in if case .liveStart = event { return true }; return nil } == true)
        guest.applyLine()
        let peerId = try #require(hosterLog.wait { event -> String? in if case .application(let peer, "g1", "hello") = event { return peer }; return nil })
        hoster.acceptLine(peerId: peerId)
        #expect(guestLog.wait { event -> LiveCode? in if case .applicationResult(let code, peerId, _) = event { return code }; return nil } == .ok)
        #expect(guestLog.wait { event -> Bool? in if case .cohostPush(.ok) = event { return true }; return nil } == true)
        #expect(guest.isCohosting)
        let size = hosterLog.wait(timeout: 10) { event -> (Int, Int)? in if case .cohostFirstFrame(peerId, let w, let h) = event { return (w, h) }; return nil }
        #expect(size?.0 == 160 && size?.1 == 90)
        #expect(hoster.mixedCohosts == [peerId])

        // Messages both ways; the guest's video switch reaches the hoster.
        hoster.sendMessage(type: .barrage, userName: "Host", content: "welcome")
        #expect(guestLog.wait { event -> String? in if case .message(.barrage, "host", "Host", _, let content) = event { return content }; return nil } == "welcome")
        guest.sendMessage(userName: "G1", content: "hi")
        #expect(hosterLog.wait { event -> String? in if case .message(.normal, "g1", _, _, let content) = event { return content }; return nil } == "hi")
        guest.setLocalVideoEnable(false)
        #expect(hosterLog.wait { event -> Bool? in if case .remoteAVStatus(_, _, let video) = event { return video }; return nil } == false)

        // The template changes live; one that does not fit is refused and the old one stays.
        try hoster.setMixVideoModel(.equal)
        var tight = MixOptions()
        tight.horPad = 1000
        #expect(throws: (any Error).self) { try hoster.setVideoTemplate(.full, options: tight) }

        // The guest hangs up: the hoster hears the co-host close and the mix drops it.
        guest.hangupLine()
        #expect(hosterLog.wait { event -> String? in if case .cohostClosed(peerId, _, _, let reason) = event { return reason }; return nil } == "hungUpByGuest")
        #expect(eventually { hoster.mixedCohosts.isEmpty })
        #expect(eventually { !guest.isCohosting })

        hoster.closeLine()
        #expect(guestLog.wait { event -> LiveCode? in if case .lineLeave(let code, _) = event { return code }; return nil } == .ok)
    }

    @Test("hosterPushURL adds one fresh lineKey and keeps the query; the kit's create without it is refused (104) on a server without tokens")
    func hosterPushURL() throws {
        let url = LineServer.hosterPushURL(try RTMPURL(parsing: "rtmp://h/live/room?x=1"))
        let key = try #require(LineStreams.queryValue("lineKey", in: url.query))
        #expect(key.count == 32 && url.query == "x=1&lineKey=\(key)")
        #expect(LineServer.hosterPushURL(url) == url)
        #expect(LineServer.hosterPushURL(try RTMPURL(parsing: "rtmp://h/live/room")).query?.hasPrefix("lineKey=") == true)

        let relay = try RelayServer(configuration: RelayServer.Configuration(rtmp: RTMPServer.Configuration(port: 0), httpPort: 0, loops: 1))
        defer { relay.shutdown() }
        var options = Hoster.Options()
        options.configuration.source = "color:white"
        (options.configuration.width, options.configuration.height) = (160, 90)
        let hoster = try Hoster(options: options)
        let log = LineEventLog()
        hoster.onLineEvent = { log.append($0) }
        let plain = try RTMPURL(parsing: "rtmp://127.0.0.1:\(relay.rtmpPort)/live/bare")
        try hoster.startPush(url: plain)
        defer { hoster.stopPush() }
        try hoster.createLine(server: LineServer(signalURL: "ws://127.0.0.1:\(relay.httpPort)/line", rtmp: plain), liveId: "bare")
        #expect(log.wait { event -> LiveCode? in if case .lineResult(let code, _) = event { return code }; return nil } == .unauthorized)
        hoster.closeLine()
    }

    @Test("tokens lasting 20 s: a guest with a TokenProvider renews on tokenWillExpire and stays; one with a fixed token is dropped with 212")
    func tokenRenewal() throws {
        let secret = Array("kit-renewal-test-secret-0123456789".utf8)
        var configuration = RelayServer.Configuration(rtmp: RTMPServer.Configuration(port: 0), httpPort: 0, loops: 2)
        configuration.auth = TokenVerifier(secret: secret, leewaySeconds: 0)
        configuration.line.tokenWillExpireSeconds = 15
        let relay = try RelayServer(configuration: configuration)
        defer { relay.shutdown() }
        let server = LineServer(signalURL: "ws://127.0.0.1:\(relay.httpPort)/line",
                                rtmp: try RTMPURL(parsing: "rtmp://127.0.0.1:\(relay.rtmpPort)/live/tok"))
        @Sendable func mint(_ sub: String, _ action: AccessAction, seconds: Int64) -> IssuedToken {
            let exp = Int64(Date().timeIntervalSince1970) + seconds
            return IssuedToken(token: AccessToken.mint(AccessClaims(sub: sub, exp: exp, perm: [AccessPermission(action: action, path: "tok")]),
                                                       secret: secret), uid: sub, expiresAt: exp)
        }

        let hosterLog = LineEventLog()
        let hoster = try Hoster(options: Hoster.Options())
        hoster.onLineEvent = { hosterLog.append($0) }
        try hoster.createLine(server: server, liveId: "tok", userId: "host", token: mint("host", .lineHost, seconds: 120).token)
        #expect(hosterLog.wait { event -> LiveCode? in if case .lineResult(let code, _) = event { return code }; return nil } == .ok)
        defer { hoster.closeLine() }

        let calls = LineEventLog()
        let renewing = Guest(options: Guest.Options())
        let renewingLog = LineEventLog()
        renewing.onLineEvent = { renewingLog.append($0) }
        try renewing.joinLine(server: server, liveId: "tok", userId: "ann", tokenProvider: {
            calls.append(.liveStart)
            return mint("ann", .lineGuest, seconds: 20)
        })
        defer { renewing.leaveLine() }
        let fixed = Guest(options: Guest.Options())
        let fixedLog = LineEventLog()
        fixed.onLineEvent = { fixedLog.append($0) }
        try fixed.joinLine(server: server, liveId: "tok", userId: "bob", token: mint("bob", .lineGuest, seconds: 20).token)
        defer { fixed.leaveLine() }
        for log in [renewingLog, fixedLog] {
            #expect(log.wait { event -> LiveCode? in if case .lineResult(let code, _) = event { return code }; return nil } == .ok)
        }

        // Both hear tokenWillExpire half-way (10 s in: 15 s ahead is more than half of 20 s);
        // only the provider's guest renews.
        #expect(fixedLog.wait(timeout: 13) { event -> Int? in if case .tokenWillExpire(let seconds) = event { return seconds }; return nil } != nil)
        #expect(renewingLog.wait(timeout: 5) { event -> Int64? in if case .tokenRenewed(let expiresAt) = event { return expiresAt }; return nil } != nil)
        // Past the first tokens' 20 s: the fixed guest is gone with 212, the renewing one stays.
        #expect(fixedLog.wait(timeout: 12) { event -> LiveCode? in if case .authFailed(let code, _) = event { return code }; return nil } == .authTimeout)
        #expect(fixedLog.wait { event -> LiveCode? in if case .lineClosed(let code, _) = event { return code }; return nil } == .authTimeout)
        #expect(hosterLog.wait { event -> Bool? in if case .memberCount(_, "tok", 2) = event { return true }; return nil } == true)
        #expect(relay.line.memberPage(liveId: "tok", page: 1)?.members.map(\.userId) == ["host", "ann"])
        #expect(!renewingLog.all.contains { if case .authFailed = $0 { true } else if case .lineClosed = $0 { true } else { false } })
        #expect(calls.all.count >= 2)
    }

    @Test("tokens lasting 6 s: a guest that renews by hand with renewLineToken on tokenWillExpire stays; one that does not is dropped with 212")
    func tokenRenewedByHand() throws {
        let secret = Array("kit-renew-by-hand-secret-0123456789".utf8)
        var configuration = RelayServer.Configuration(rtmp: RTMPServer.Configuration(port: 0), httpPort: 0, loops: 2)
        configuration.auth = TokenVerifier(secret: secret, leewaySeconds: 0)
        configuration.line.tokenWillExpireSeconds = 4
        let relay = try RelayServer(configuration: configuration)
        defer { relay.shutdown() }
        let server = LineServer(signalURL: "ws://127.0.0.1:\(relay.httpPort)/line",
                                rtmp: try RTMPURL(parsing: "rtmp://127.0.0.1:\(relay.rtmpPort)/live/hand"))
        func mint(_ sub: String, _ action: AccessAction, seconds: Int64) -> String {
            AccessToken.mint(AccessClaims(sub: sub, exp: Int64(Date().timeIntervalSince1970) + seconds,
                                          perm: [AccessPermission(action: action, path: "hand")]), secret: secret)
        }
        let hosterLog = LineEventLog()
        let hoster = try Hoster(options: Hoster.Options())
        hoster.onLineEvent = { hosterLog.append($0) }
        try hoster.createLine(server: server, liveId: "hand", userId: "host", token: mint("host", .lineHost, seconds: 120))
        #expect(hosterLog.wait { event -> LiveCode? in if case .lineResult(let code, _) = event { return code }; return nil } == .ok)
        defer { hoster.closeLine() }

        var guests: [(Guest, LineEventLog)] = []
        for user in ["ann", "bob"] {
            let guest = Guest(options: Guest.Options())
            let log = LineEventLog()
            guest.onLineEvent = { log.append($0) }
            try guest.joinLine(server: server, liveId: "hand", userId: user, token: mint(user, .lineGuest, seconds: 6))
            #expect(log.wait { event -> LiveCode? in if case .lineResult(let code, _) = event { return code }; return nil } == .ok)
            guests.append((guest, log))
        }
        defer { guests.forEach { $0.0.leaveLine() } }
        let (ann, annLog) = guests[0]
        let bobLog = guests[1].1
        #expect(annLog.wait(timeout: 6) { event -> Int? in if case .tokenWillExpire(let seconds) = event { return seconds }; return nil } != nil)
        ann.renewLineToken(mint("ann", .lineGuest, seconds: 120))
        let renewed = annLog.wait { event -> Int64? in if case .tokenRenewed(let expiresAt) = event { return expiresAt }; return nil }
        #expect((renewed ?? 0) > Int64(Date().timeIntervalSince1970) + 60)
        // Past the first tokens' 6 s: bob is gone with 212, ann stays.
        #expect(bobLog.wait(timeout: 8) { event -> LiveCode? in if case .lineClosed(let code, _) = event { return code }; return nil } == .authTimeout)
        #expect(relay.line.memberPage(liveId: "hand", page: 1)?.members.map(\.userId) == ["host", "ann"])
        #expect(!annLog.all.contains { if case .authFailed = $0 { true } else if case .lineClosed = $0 { true } else { false } })
    }

    @Test("with tokens: a join without one is refused with 213, with a bad one 202, with another line's 104; the kit joins as the token's user")
    func tokenRefusals() throws {
        let secret = Array("kit-refusal-test-secret-0123456789".utf8)
        var configuration = RelayServer.Configuration(rtmp: RTMPServer.Configuration(port: 0), httpPort: 0, loops: 1)
        configuration.auth = TokenVerifier(secret: secret)
        let relay = try RelayServer(configuration: configuration)
        defer { relay.shutdown() }
        let server = LineServer(signalURL: "ws://127.0.0.1:\(relay.httpPort)/line",
                                rtmp: try RTMPURL(parsing: "rtmp://127.0.0.1:\(relay.rtmpPort)/live/sec"))
        func token(_ sub: String, _ action: AccessAction, _ path: String, secret: [UInt8] = secret) -> String {
            AccessToken.mint(AccessClaims(sub: sub, exp: Int64(Date().timeIntervalSince1970) + 60,
                                          perm: [AccessPermission(action: action, path: path)]), secret: secret)
        }
        let hoster = try Hoster(options: Hoster.Options())
        let hosterLog = LineEventLog()
        hoster.onLineEvent = { hosterLog.append($0) }
        // A guest's token cannot open the line; the host's can.
        try hoster.createLine(server: server, liveId: "sec", userId: "host", token: token("host", .lineGuest, "sec"))
        #expect(hosterLog.wait { event -> LiveCode? in if case .lineResult(let code, _) = event { return code }; return nil } == .unauthorized)
        let hosterLog2 = LineEventLog()
        hoster.onLineEvent = { hosterLog2.append($0) }
        try hoster.createLine(server: server, liveId: "sec", userId: "host", token: token("host", .lineHost, "sec"))
        #expect(hosterLog2.wait { event -> LiveCode? in if case .lineResult(let code, _) = event { return code }; return nil } == .ok)
        defer { hoster.closeLine() }
        let cases: [(String?, String, LiveCode)] = [
            (nil, "g", .tokenMustBeVerified),
            (token("g", .lineGuest, "sec", secret: Array("a-different-secret-0123456789abc".utf8)), "g", .authFailed),
            (token("g", .lineGuest, "other"), "g", .unauthorized),
            // The kit speaks as the token's user whatever userId it was given.
            (token("g", .lineGuest, "sec"), "someone-else", .ok),
            (token("g", .lineGuest, "sec"), "g", .ok),
        ]
        for (given, userId, expected) in cases {
            let guest = Guest(options: Guest.Options())
            let log = LineEventLog()
            guest.onLineEvent = { log.append($0) }
            try guest.joinLine(server: server, liveId: "sec", userId: userId, token: given)
            #expect(log.wait { event -> LiveCode? in if case .lineResult(let code, _) = event { return code }; return nil } == expected,
                    "\(userId) with \(given == nil ? "no token" : "a token")")
            guest.leaveLine()
        }
        #expect(relay.line.memberPage(liveId: "sec", page: 1)?.members.map(\.userId) == ["host"])
    }
}
