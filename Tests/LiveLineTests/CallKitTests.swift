import Foundation
import LiveAuth
import LiveCore
import LiveNet
import LiveLine
import LiveRTMP
import LiveServer
import LiveSignal
import LiveTestSupport
import Testing

/// What one user's call kit reported: its state changes, its events, the peer's picture
/// (the centre colour of each frame) and the peer's sound (the share of two tones).
final class CallLog: Sendable {
    let states = Locked<[CallStateChange]>([])
    let events = Locked<[CallSessionEvent]>([])
    let colours = Locked<[YUVColor]>([])
    let tones = Locked<[(low: Double, high: Double)]>([])

    /// How many state changes came so far: a `wait(since:)` looks only at later ones.
    var mark: Int { states.value.count }

    /// The last state change with `state` and `reason` (after the first `since`), waiting
    /// up to `seconds` for it.
    func wait(_ state: CallState, _ reason: CallStateReason? = nil, since: Int = 0, seconds: Double = 8) -> CallStateChange? {
        var found: CallStateChange?
        _ = eventually(seconds: seconds) {
            found = states.value.dropFirst(since).last { $0.state == state && (reason == nil || $0.reason == reason) }
            return found != nil
        }
        return found
    }

    func saw(_ event: CallSessionEvent, seconds: Double = 5) -> Bool {
        eventually(seconds: seconds) { events.value.contains(event) }
    }

    /// True once the last `count` frames of the peer were near `colour`.
    func sees(_ colour: YUVColor, count: Int = 5, seconds: Double = 8) -> Bool {
        eventually(seconds: seconds) {
            let last = colours.value.suffix(count)
            return last.count == count && last.allSatisfy { near($0, colour, tolerance: 24) }
        }
    }

    /// True once the last `count` blocks of the peer's sound were mostly the low (440 Hz)
    /// or the high (1100 Hz) tone; `silent`: neither.
    func hears(low: Bool = false, high: Bool = false, count: Int = 10, seconds: Double = 8) -> Bool {
        eventually(seconds: seconds) {
            let last = tones.value.suffix(count)
            guard last.count == count else { return false }
            return last.allSatisfy { ($0.low > 0.5) == low && ($0.high > 0.5) == high }
        }
    }
}

/// The call kit end to end on loopback: `liveline serve`'s relay (its /call signaling and
/// the call- streams), two or three `CallSession`s with colour pictures and tones.
@Suite("CallSession: 1v1 calls through the relay (colours seen, tones heard, the CallAPI's reasons)", .serialized)
struct CallKitTests {
    static let red = YUVColor(y: 81, u: 90, v: 240)
    static let blue = YUVColor(y: 41, u: 240, v: 110)

    static func relay(auth: TokenVerifier? = nil) throws -> RelayServer {
        var configuration = RelayServer.Configuration(rtmp: RTMPServer.Configuration(port: 0), httpPort: 0, loops: 2)
        configuration.auth = auth
        return try RelayServer(configuration: configuration)
    }

    /// A prepared call kit for `user` on `relay`, sending `colour` and `tone` (Hz), its
    /// signaling found from the RTMP server.
    static func user(_ user: String, colour: String, tone: Int, on relay: RelayServer,
                     _ configure: (inout CallSession.Options) -> Void = { _ in }) throws -> (CallSession, CallLog) {
        var options = CallSession.Options(server: RTMPURL(host: "127.0.0.1", port: Int(relay.rtmpPort), app: "call", streamName: ""), userId: user)
        options.local.source = colour
        options.local.audioSource = "tone:\(tone)"
        (options.local.width, options.local.height, options.local.fps, options.local.bitrateKbps) = (320, 240, 15, 300)
        configure(&options)
        let session = CallSession(options: options)
        let log = CallLog()
        session.onStateChanged = { change in log.states.update { $0.append(change) } }
        session.onEvent = { event in log.events.update { $0.append(event) } }
        session.onRemoteFrame = { frame in
            let centre = frame.pixel(x: frame.width / 2, y: frame.height / 2)
            log.colours.update { $0.append(centre) }
        }
        session.onRemoteAudio = { frame in
            let samples = frame.channel(0)
            let low = ToneDetector(frequency: 440, sampleRate: frame.sampleRate).share(in: samples)
            let high = ToneDetector(frequency: 1100, sampleRate: frame.sampleRate).share(in: samples)
            log.tones.update { $0.append((low, high)) }
        }
        let prepared = Locked<LiveError??>(nil)
        session.prepareForCall { error in prepared.update { $0 = .some(error) } }
        #expect(eventually(seconds: 8) { prepared.value != nil })
        if let error = prepared.value ?? nil { throw error }
        #expect(session.state == .prepared)
        return (session, log)
    }

    /// Closes the kits and waits for them to stop.
    static func close(_ sessions: CallSession...) {
        let done = Locked(0)
        for session in sessions { session.close { done.update { $0 += 1 } } }
        #expect(eventually(seconds: 10) { done.value == sessions.count })
    }

    /// alice (red, 440 Hz) calls bob (blue, 1100 Hz) and bob accepts: both connected.
    static func connect(_ alice: CallSession, _ aliceLog: CallLog, _ bob: CallSession, _ bobLog: CallLog,
                        audioOnly: Bool = false) throws {
        try alice.call("bob", audioOnly: audioOnly)
        #expect(bobLog.saw(.incomingCall(from: "alice", callId: alice.currentCall?.callId ?? "?", audioOnly: audioOnly, userExtension: nil)))
        try bob.accept()
        #expect(aliceLog.wait(.connected, .recvRemoteFirstFrame) != nil)
        #expect(bobLog.wait(.connected, .recvRemoteFirstFrame) != nil)
    }

    @Test("alice calls bob, bob accepts: both connected, each sees the other's colour and hears the other's tone; alice hangs up: localHangup / remoteHangup with the reason")
    func callAcceptHangup() throws {
        let relay = try Self.relay()
        defer { relay.shutdown() }
        let (alice, aliceLog) = try Self.user("alice", colour: "color:red", tone: 440, on: relay)
        let (bob, bobLog) = try Self.user("bob", colour: "color:blue", tone: 1100, on: relay)
        defer { Self.close(alice, bob) }

        try Self.connect(alice, aliceLog, bob, bobLog)
        let calling = try #require(aliceLog.states.value.first { $0.state == .calling })
        #expect(calling.reason == .localVideoCall && calling.info["remoteUserId"] == "bob")
        #expect(bobLog.states.value.first { $0.state == .calling }?.reason == .remoteVideoCall)
        #expect(aliceLog.states.value.map(\.state) == [.prepared, .calling, .connecting, .connected])
        #expect(bobLog.states.value.map(\.reason) == [.none, .remoteVideoCall, .localAccepted, .recvRemoteFirstFrame])
        #expect(aliceLog.sees(Self.blue), "alice sees \(aliceLog.colours.value.suffix(3))")
        #expect(bobLog.sees(Self.red), "bob sees \(bobLog.colours.value.suffix(3))")
        #expect(aliceLog.hears(high: true), "alice hears \(aliceLog.tones.value.suffix(3))")
        #expect(bobLog.hears(low: true), "bob hears \(bobLog.tones.value.suffix(3))")
        #expect(aliceLog.saw(.publishFirstLocalVideoFrame) && aliceLog.saw(.remoteJoined))
        #expect(bobLog.saw(.captureFirstLocalVideoFrame) && bobLog.saw(.publishFirstLocalVideoFrame))

        let stats = alice.stats
        #expect((stats.setupMs ?? 0) > 0 && (stats.acceptToFirstFrameMs ?? 0) > 0)
        #expect(stats.remote.frames > 0 && stats.local.encoded > 0)
        #expect(bob.stats.setupMs == nil && (bob.stats.acceptToFirstFrameMs ?? 0) > 0)
        // Glass-to-glass of the peer's picture (the capture time each frame carries).
        #expect(eventually(seconds: 5) { (alice.stats.remote.latencyP95Ms ?? 0) > 0 }, "\(alice.stats.remote)")

        alice.hangup(reason: "bye")
        #expect(aliceLog.wait(.prepared, .localHangup) != nil)
        let ended = try #require(bobLog.wait(.prepared, .remoteHangup))
        #expect(ended.eventReason == "bye" && ended.info["hangupReason"] == "bye")
        #expect(alice.stats.endedReason == .localHangup && bob.stats.endedReason == .remoteHangup)
        // Free again: bob calls alice this time (a fresh room), alice rejects it with a reason.
        #expect(bob.currentCall == nil)
        try bob.call("alice")
        #expect(aliceLog.wait(.calling, .remoteVideoCall) != nil)
        alice.reject(reason: "not now")
        #expect(aliceLog.wait(.prepared, .localRejected) != nil)
        let rejected = try #require(bobLog.wait(.prepared, .remoteRejected))
        #expect(rejected.eventReason == "not now")
    }

    @Test("busy: carol calls bob mid-call and gets remoteCallBusy at once; alice and bob stay connected")
    func busy() throws {
        let relay = try Self.relay()
        defer { relay.shutdown() }
        let (alice, aliceLog) = try Self.user("alice", colour: "color:red", tone: 440, on: relay)
        let (bob, bobLog) = try Self.user("bob", colour: "color:blue", tone: 1100, on: relay)
        // carol names the signaling herself (the others find it from the RTMP server).
        let (carol, carolLog) = try Self.user("carol", colour: "color:green", tone: 440, on: relay) {
            $0.signalURL = "ws://127.0.0.1:\(relay.httpPort)/call"
        }
        defer { Self.close(alice, bob, carol) }
        try Self.connect(alice, aliceLog, bob, bobLog)

        try carol.call("bob")
        let busy = try #require(carolLog.wait(.prepared, .remoteCallBusy))
        #expect(busy.eventReason == "busy" && busy.info["rejectReason"] == "busy")
        // A call to someone not registered fails at once.
        try carol.call("nobody")
        #expect(carolLog.wait(.prepared, .remoteOffline) != nil)
        #expect(alice.state == .connected && bob.state == .connected)
        #expect(aliceLog.states.value.last?.state == .connected && bobLog.states.value.last?.state == .connected)
        #expect(!bobLog.events.value.contains { if case .incomingCall(from: "carol", _, _, _) = $0 { return true }; return false })
        #expect(aliceLog.sees(Self.blue) && bobLog.sees(Self.red))
        // A second call, or prepareForCall, while in one is refused as busy.
        let second = try #require(throws: LiveError.self) { try alice.call("carol") }
        #expect(second.code == .alreadyOpen)
        let prepared = Locked<LiveError??>(nil)
        alice.prepareForCall { error in prepared.update { $0 = .some(error) } }
        #expect(eventually(seconds: 2) { prepared.value != nil })
        #expect((prepared.value ?? nil)?.code == .alreadyOpen && alice.state == .connected)
    }

    @Test("the calling timer on both sides: the caller's runs out (callingTimeout / remoteCallingTimeout), then the callee's")
    func callingTimeout() throws {
        let relay = try Self.relay()
        defer { relay.shutdown() }
        let (alice, aliceLog) = try Self.user("alice", colour: "color:red", tone: 440, on: relay) { $0.callTimeoutMilliseconds = 700 }
        let (bob, bobLog) = try Self.user("bob", colour: "color:blue", tone: 1100, on: relay) { $0.callTimeoutMilliseconds = 3_000 }
        defer { Self.close(alice, bob) }

        try alice.call("bob")
        let timedOut = try #require(aliceLog.wait(.prepared, .callingTimeout))
        #expect(timedOut.info["remoteUserId"] == "bob")
        #expect(bobLog.wait(.prepared, .remoteCallingTimeout) != nil)
        #expect(bob.state == .prepared)

        // The callee's timer, shorter this time, runs out before it answers.
        let (aliceMark, bobMark) = (aliceLog.mark, bobLog.mark)
        try bob.call("alice")
        #expect(aliceLog.wait(.calling, .remoteVideoCall, since: aliceMark) != nil)
        #expect(aliceLog.wait(.prepared, .callingTimeout, since: aliceMark, seconds: 2.5) != nil)
        #expect(bobLog.wait(.prepared, .remoteCallingTimeout, since: bobMark) != nil)
        #expect(bobLog.states.value.dropFirst(bobMark).map(\.reason) == [.localVideoCall, .remoteCallingTimeout])
    }

    @Test("mute and hold are seen by the peer: peerMicMuted and silence; peerHeld on both sides and a black picture; resumed, the colour is back")
    func muteAndHold() throws {
        let relay = try Self.relay()
        defer { relay.shutdown() }
        let (alice, aliceLog) = try Self.user("alice", colour: "color:red", tone: 440, on: relay)
        let (bob, bobLog) = try Self.user("bob", colour: "color:blue", tone: 1100, on: relay)
        defer { Self.close(alice, bob) }
        try Self.connect(alice, aliceLog, bob, bobLog)
        #expect(bobLog.hears(low: true))

        alice.muteMyAudio(true)
        #expect(bobLog.saw(.peerMicMuted))
        #expect(bobLog.hears(), "bob still hears \(bobLog.tones.value.suffix(3))")
        alice.muteMyAudio(false)
        #expect(bobLog.saw(.peerMicUnmuted))
        #expect(bobLog.hears(low: true))

        alice.hold(true)
        #expect(bobLog.saw(.peerHeld) && aliceLog.saw(.peerHeld))
        #expect(bobLog.sees(YUVColor.black), "bob sees \(bobLog.colours.value.suffix(3))")
        alice.hold(false)
        #expect(bobLog.saw(.peerUnheld) && aliceLog.saw(.peerUnheld))
        #expect(bobLog.sees(Self.red))
        #expect(alice.state == .connected && bob.state == .connected)
    }

    @Test("an audio-only call: audio-mode pushes, connected on the first sound, each hears the other's tone and sees no picture")
    func audioOnly() throws {
        let relay = try Self.relay()
        defer { relay.shutdown() }
        let (alice, aliceLog) = try Self.user("alice", colour: "color:red", tone: 440, on: relay)
        let (bob, bobLog) = try Self.user("bob", colour: "color:blue", tone: 1100, on: relay)
        defer { Self.close(alice, bob) }
        try Self.connect(alice, aliceLog, bob, bobLog, audioOnly: true)
        #expect(aliceLog.states.value.first { $0.state == .calling }?.reason == .localAudioCall)
        #expect(bobLog.states.value.first { $0.state == .calling }?.info["audioOnly"] == "1")
        #expect(aliceLog.hears(high: true) && bobLog.hears(low: true))
        #expect(aliceLog.saw(.remoteFirstAudio) && bobLog.saw(.remoteFirstAudio))
        #expect(aliceLog.colours.value.isEmpty && bobLog.colours.value.isEmpty)
        #expect(!aliceLog.events.value.contains(.publishFirstLocalVideoFrame))
        #expect(alice.stats.remote.audioFrames > 0 && alice.stats.remote.frames == 0)
    }

    @Test("both call each other at once: one call goes on (alice's: her id sorts first), both connected in it")
    func crossedCalls() throws {
        let relay = try Self.relay()
        defer { relay.shutdown() }
        let (alice, aliceLog) = try Self.user("alice", colour: "color:red", tone: 440, on: relay)
        let (bob, bobLog) = try Self.user("bob", colour: "color:blue", tone: 1100, on: relay)
        defer { Self.close(alice, bob) }
        try bob.call("alice")
        // alice may already have bob's invitation (then her call is refused as busy, and she accepts).
        do {
            try alice.call("bob")
        } catch {
            #expect(error.code == .alreadyOpen)
            try alice.accept()
        }
        #expect(aliceLog.wait(.connected) != nil && bobLog.wait(.connected) != nil)
        let (aliceCall, bobCall) = (try #require(alice.currentCall), try #require(bob.currentCall))
        #expect(aliceCall.callId == bobCall.callId && aliceCall.isCaller != bobCall.isCaller)
        #expect(aliceLog.sees(Self.blue) && bobLog.sees(Self.red))
    }

    @Test("maxCallSeconds: connected that long, the side hangs up with maxCallTimeExceeded; the peer hears remoteHangup with it")
    func maxCallTime() throws {
        let relay = try Self.relay()
        defer { relay.shutdown() }
        let (alice, aliceLog) = try Self.user("alice", colour: "color:red", tone: 440, on: relay) { $0.maxCallSeconds = 0.5 }
        let (bob, bobLog) = try Self.user("bob", colour: "color:blue", tone: 1100, on: relay)
        defer { Self.close(alice, bob) }
        try Self.connect(alice, aliceLog, bob, bobLog)
        #expect(aliceLog.wait(.prepared, .maxCallTimeExceeded, seconds: 3) != nil)
        #expect(bobLog.wait(.prepared, .remoteHangup)?.eventReason == "maxCallTimeExceeded")
    }

    @Test("a peer whose signaling vanishes (peerGone) or whose media never comes (mediaTimeout) ends the call with networkUnstable")
    func networkUnstable() throws {
        let relay = try Self.relay()
        defer { relay.shutdown() }
        let (alice, aliceLog) = try Self.user("alice", colour: "color:red", tone: 440, on: relay) { $0.mediaTimeout = .milliseconds(800) }
        defer { Self.close(alice) }
        let loop = try EventLoop(name: "bob")
        loop.start()
        defer { loop.shutdown() }
        // bob speaks the protocol itself: he accepts, but publishes nothing.
        func rawBob() throws -> (CallClient, Locked<[CallMessage]>) {
            let bob = CallClient(url: "ws://127.0.0.1:\(relay.httpPort)/call", loop: loop)
            let received = Locked<[CallMessage]>([])
            bob.onEvent = { event in if let message = event.call { received.update { $0.append(message) } } }
            bob.connect()
            let registered = Locked<LiveCode?>(nil)
            bob.register(userId: "bob") { reply in registered.update { $0 = reply.liveCode } }
            #expect(eventually(seconds: 5) { registered.value == .ok })
            return (bob, received)
        }
        func acceptInvitation(_ bob: CallClient, _ received: Locked<[CallMessage]>) throws {
            let before = received.value.filter { $0.action == .videoCall }.count
            try alice.call("bob")
            #expect(eventually(seconds: 5) { received.value.filter { $0.action == .videoCall }.count > before })
            let invitation = try #require(received.value.last { $0.action == .videoCall })
            bob.send(message: CallMessage(action: .accept, fromUserId: "bob", remoteUserId: "alice", callId: invitation.callId))
            #expect(aliceLog.wait(.connecting, .remoteAccepted, since: aliceLog.mark - 1) != nil)
        }

        let (bob, received) = try rawBob()
        try acceptInvitation(bob, received)
        let mark = aliceLog.mark
        let ended = try #require(aliceLog.wait(.prepared, .networkUnstable, since: mark, seconds: 4))
        #expect(ended.eventReason == "networkUnstable")
        #expect(eventually(seconds: 5) { received.value.last?.action == .hangup && received.value.last?.hangupReason == "networkUnstable" })

        // Accepted again, then bob's connection drops: the server tells alice (peerGone).
        try acceptInvitation(bob, received)
        let second = aliceLog.mark
        bob.disconnect()
        #expect(aliceLog.wait(.prepared, .networkUnstable, since: second, seconds: 4) != nil)
    }

    @Test("with tokens: the provider's token registers each user and goes on the call's push and play; another user's id is refused")
    func tokens() throws {
        let secret = Array("call-kit-token-secret-0123456789".utf8)
        let relay = try Self.relay(auth: TokenVerifier(secret: secret))
        defer { relay.shutdown() }
        func provider(_ sub: String) -> TokenProvider {
            {
                let claims = AccessClaims(sub: sub, exp: Int64(Date().timeIntervalSince1970) + 120,
                                          perm: [AccessPermission(action: .call, path: sub), AccessPermission(action: .publish, path: "call/*"),
                                                 AccessPermission(action: .play, path: "call/*")])
                return IssuedToken(token: AccessToken.mint(claims, secret: secret), uid: sub, expiresAt: claims.exp)
            }
        }
        let (alice, aliceLog) = try Self.user("alice", colour: "color:red", tone: 440, on: relay) { $0.tokenProvider = provider("alice") }
        let (bob, bobLog) = try Self.user("bob", colour: "color:blue", tone: 1100, on: relay) { $0.tokenProvider = provider("bob") }
        defer { Self.close(alice, bob) }
        try Self.connect(alice, aliceLog, bob, bobLog)
        #expect(aliceLog.sees(Self.blue) && bobLog.sees(Self.red))
        // mallory's token cannot register carol.
        #expect(throws: LiveError.self) {
            _ = try Self.user("carol", colour: "color:green", tone: 440, on: relay) { $0.tokenProvider = provider("mallory") }
        }
    }

    @Test("tokens that live 3 s: the server's tokenWillExpire gets a fresh one from the provider (renewToken), so the registration outlives the first token")
    func tokenRenewal() throws {
        let secret = Array("call-kit-renew-secret-0123456789".utf8)
        let relay = try Self.relay(auth: TokenVerifier(secret: secret))
        defer { relay.shutdown() }
        let issued = Locked(0)
        let provider: TokenProvider = {
            let count = issued.update { value -> Int in value += 1; return value }
            let now = Int64(Date().timeIntervalSince1970)
            // iat differs for each: every token is a new one.
            let claims = AccessClaims(sub: "alice", iat: now - Int64(count), exp: now + 3,
                                      perm: [AccessPermission(action: .call, path: "alice")])
            return IssuedToken(token: AccessToken.mint(claims, secret: secret), uid: "alice", expiresAt: claims.exp)
        }
        let (alice, aliceLog) = try Self.user("alice", colour: "color:red", tone: 440, on: relay) { $0.tokenProvider = provider }
        defer { Self.close(alice) }
        #expect(eventually(seconds: 4) { issued.value >= 2 })
        Thread.sleep(forTimeInterval: 2.5)
        #expect(alice.state == .prepared && !aliceLog.states.value.contains { $0.state == .failed })
    }

    @Test("prepareForCall: a user id already registered elsewhere is refused (604), a server that is not there fails; close in a call hangs up")
    func prepareAndClose() throws {
        let relay = try Self.relay()
        defer { relay.shutdown() }
        let (alice, aliceLog) = try Self.user("alice", colour: "color:red", tone: 440, on: relay)
        let (bob, bobLog) = try Self.user("bob", colour: "color:blue", tone: 1100, on: relay)
        defer { Self.close(alice, bob) }
        let error = try #require(throws: LiveError.self) { _ = try Self.user("alice", colour: "color:red", tone: 440, on: relay) }
        #expect(error.code == .alreadyOpen && error.isRefusal)
        var nowhere = CallSession.Options(server: RTMPURL(host: "127.0.0.1", port: 1, app: "call", streamName: ""), userId: "dan")
        nowhere.signalURL = "ws://127.0.0.1:1/call"
        let failed = Locked<LiveError??>(nil)
        let dan = CallSession(options: nowhere)
        dan.prepareForCall { error in failed.update { $0 = .some(error) } }
        #expect(eventually(seconds: 5) { failed.value != nil })
        #expect((failed.value ?? nil)?.code == .networkError && dan.state == .idle)

        try Self.connect(alice, aliceLog, bob, bobLog)
        let closed = Locked(false)
        bob.close { closed.update { $0 = true } }
        #expect(bobLog.wait(.idle) != nil)
        #expect(aliceLog.wait(.prepared, .remoteHangup) != nil)
        #expect(eventually(seconds: 5) { closed.value } && bob.state == .idle)
    }

    @Test("close from the kit's own handler (on its loop thread) in a call still hangs up: the peer hears remoteHangup, not networkUnstable")
    func closeFromHandler() throws {
        let relay = try Self.relay()
        defer { relay.shutdown() }
        let (alice, aliceLog) = try Self.user("alice", colour: "color:red", tone: 440, on: relay)
        let (bob, bobLog) = try Self.user("bob", colour: "color:blue", tone: 1100, on: relay)
        defer { Self.close(alice) }
        let closed = Locked(false)
        bob.onStateChanged = { [weak bob] change in
            bobLog.states.update { $0.append(change) }
            if change.state == .connected { bob?.close { closed.update { $0 = true } } }
        }
        try alice.call("bob")
        #expect(bobLog.saw(.incomingCall(from: "alice", callId: alice.currentCall?.callId ?? "?", audioOnly: false, userExtension: nil)))
        try bob.accept()
        #expect(aliceLog.wait(.prepared, .remoteHangup) != nil)
        #expect(eventually(seconds: 5) { closed.value } && bob.state == .idle)
        #expect(!aliceLog.states.value.contains { $0.reason == .networkUnstable })
    }

    @Test("the signaling lost (the server went away) is failed with networkUnstable; prepareForCall again, once the server is back, is prepared")
    func failedAndPreparedAgain() throws {
        let first = try Self.relay()
        let (rtmpPort, httpPort) = (first.rtmpPort, first.httpPort)
        let (alice, aliceLog) = try Self.user("alice", colour: "color:red", tone: 440, on: first)
        defer { Self.close(alice) }
        first.shutdown()
        #expect(aliceLog.wait(.failed, .networkUnstable) != nil)
        #expect(throws: LiveError.self) { try alice.call("bob") }

        let second = try RelayServer(configuration: RelayServer.Configuration(
            rtmp: RTMPServer.Configuration(port: rtmpPort), httpPort: httpPort, loops: 2))
        defer { second.shutdown() }
        let prepared = Locked<LiveError??>(nil)
        alice.prepareForCall { error in prepared.update { $0 = .some(error) } }
        #expect(eventually(seconds: 8) { prepared.value != nil })
        #expect(prepared.value == .some(nil) && alice.state == .prepared)
        #expect(aliceLog.states.value.last?.state == .prepared)
    }

    @Test("media that cannot start (an audio-only call with no sound to send) ends the call with joinRTCFailed; the peer hears remoteHangup")
    func mediaFailed() throws {
        let relay = try Self.relay()
        defer { relay.shutdown() }
        let (alice, aliceLog) = try Self.user("alice", colour: "color:red", tone: 440, on: relay) { $0.local.audioSource = "none" }
        let (bob, bobLog) = try Self.user("bob", colour: "color:blue", tone: 1100, on: relay)
        defer { Self.close(alice, bob) }
        try alice.call("bob", audioOnly: true)
        #expect(bobLog.wait(.calling, .remoteAudioCall) != nil)
        try bob.accept()
        let failed = try #require(aliceLog.wait(.prepared, .joinRTCFailed))
        #expect(!failed.eventReason.isEmpty)
        #expect(bobLog.wait(.prepared, .remoteHangup)?.eventReason == "joinRTCFailed")
    }

    @Test("cancel crossing accept through the server: both end in prepared (alice localCancelled; bob remoteCancelled, or messageFailed when the server refused his accept first), and a new call works")
    func cancelCrossingAccept() throws {
        let relay = try Self.relay()
        defer { relay.shutdown() }
        let (alice, aliceLog) = try Self.user("alice", colour: "color:red", tone: 440, on: relay)
        let (bob, bobLog) = try Self.user("bob", colour: "color:blue", tone: 1100, on: relay)
        defer { Self.close(alice, bob) }
        try alice.call("bob")
        #expect(bobLog.wait(.calling, .remoteVideoCall) != nil)
        let bobMark = bobLog.mark
        alice.cancelCall()
        try bob.accept()
        #expect(aliceLog.wait(.prepared, .localCancelled) != nil)
        let ended = try #require(bobLog.wait(.prepared, since: bobMark))
        #expect([.remoteCancelled, .messageFailed].contains(ended.reason), "\(ended)")
        #expect(alice.currentCall == nil && bob.currentCall == nil)
        try Self.connect(alice, aliceLog, bob, bobLog)
    }

    @Test("CallClient against the relay: register, a send to nobody is 203, renewToken answered; once the server is gone a send is answered at once with 101")
    func callClient() throws {
        let relay = try Self.relay()
        let loop = try EventLoop(name: "call-client")
        loop.start()
        defer { loop.shutdown() }
        let client = CallClient(url: "ws://127.0.0.1:\(relay.httpPort)/call", loop: loop, heartbeatInterval: .milliseconds(100))
        let replies = Locked<[CallEvent]>([])
        let closed = Locked<UInt16?>(nil)
        client.onEvent = { event in if event.event == .reply { replies.update { $0.append(event) } } }
        client.onClose = { code, _ in closed.update { $0 = code } }
        let register = client.register(userId: "dana")
        client.connect()
        let offline = client.send(message: CallMessage(action: .videoCall, fromUserId: "dana", remoteUserId: "nobody",
                                                       callId: "c1", fromRoomId: CallStreams.newRoomId()))
        let renew = client.renewToken("whatever")
        #expect(eventually(seconds: 5) { replies.value.count >= 3 })
        func reply(_ id: Int) -> CallEvent? { replies.value.first { $0.id == id } }
        #expect(reply(register)?.liveCode == .ok && reply(register)?.op == "register")
        #expect(reply(offline)?.liveCode == .noSuchUser && reply(offline)?.op == "send")
        #expect(reply(renew) != nil)
        // Heartbeats (without an id) go out at the interval and are answered too.
        #expect(eventually(seconds: 2) { replies.value.filter { $0.op == "heartbeat" }.count >= 2 })
        let numbered = replies.value.compactMap(\.id)
        #expect(Set(numbered) == [register, offline, renew] && numbered.count == 3)

        relay.shutdown()
        #expect(eventually(seconds: 5) { closed.value != nil })
        let late = Locked<CallEvent?>(nil)
        let id = client.send(message: CallMessage(action: .hangup, fromUserId: "dana", remoteUserId: "bob", callId: "c1")) { event in
            late.update { $0 = event }
        }
        #expect(eventually(seconds: 2) { late.value != nil })
        #expect(late.value?.id == id && late.value?.liveCode == .networkDisconnected && late.value?.op == "send")
        #expect(late.value?.message?.contains("call connection") == true)
    }
}
