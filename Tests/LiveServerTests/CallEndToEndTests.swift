import Foundation
import LiveAuth
import LiveCore
import LiveNet
import LiveSignal
import LiveTestSupport
import Testing
@testable import LiveRTMP
@testable import LiveServer

/// A user of `/call` over a raw WebSocket client: numbered requests and every event it got.
final class CallUser: Sendable {
    let loop: EventLoop
    private let socket: Locked<WebSocketConnection?> = Locked(nil)
    let events = Locked<[CallEvent]>([])
    let closed = Locked<UInt16?>(nil)
    private let ids = Locked(0)

    init(url: String, loop: EventLoop) throws {
        self.loop = loop
        let events = self.events, closed = self.closed, socket = self.socket
        let failure = Locked<WebSocketError?>(nil)
        WebSocketClient.connect(url: url, on: loop) { result in
            switch result {
            case .failure(let error):
                failure.update { $0 = error }
            case .success(let opened):
                opened.onMessage = { _, message in
                    if case .text(let text) = message, let event = CallEvent.parse(text) { events.update { $0.append(event) } }
                }
                opened.onClose = { _, code, _ in closed.update { $0 = code } }
                socket.update { $0 = opened }
            }
        }
        #expect(eventually(5) { socket.value != nil || failure.value != nil })
        if let error = failure.value { throw error }
    }

    convenience init(port: UInt16, loop: EventLoop, query: String = "") throws {
        try self.init(url: "ws://127.0.0.1:\(port)/call\(query)", loop: loop)
    }

    /// Sends `text` as one text message on the socket's loop.
    func send(text: String) {
        guard let socket = socket.value else { return }
        _ = loop.execute { _ = socket.send(text: text) }
    }

    /// Sends `request` numbered; returns its id.
    @discardableResult
    func send(_ request: CallRequest) -> Int {
        var request = request
        request.id = ids.update { value -> Int in value += 1; return value }
        send(text: request.jsonText)
        return request.id!
    }

    /// The first event of `kind` matching `filter`, waiting up to 5 s for it.
    func wait(_ kind: CallEvent.Kind, timeout: Double = 5, _ filter: @escaping (CallEvent) -> Bool = { _ in true }) -> CallEvent? {
        var found: CallEvent?
        _ = eventually(timeout) {
            found = events.value.first { $0.event == kind && filter($0) }
            return found != nil
        }
        return found
    }

    /// The code of the reply to request `id`.
    func replyCode(_ id: Int) -> LiveCode? { wait(.reply) { $0.id == id }?.code.flatMap(LiveCode.init(rawValue:)) }

    func register(_ userId: String, token: String? = nil) -> LiveCode? {
        replyCode(send(CallRequest(op: .register, userId: userId, token: token)))
    }

    func send(_ message: CallMessage) -> LiveCode? {
        replyCode(send(CallRequest(op: .send, message: message)))
    }

    /// Sends `bytes` as one binary message.
    func send(binary bytes: [UInt8]) {
        guard let socket = socket.value else { return }
        _ = loop.execute { _ = socket.send(binary: bytes) }
    }

    func close() {
        guard let socket = socket.value else { return }
        _ = loop.execute { socket.close() }
    }
}

@Suite("1v1 call signaling end to end", .serialized)
struct CallEndToEndTests {
    private func startServer(auth: TokenVerifier? = nil, _ configure: (inout CallLimits) -> Void = { _ in }) throws -> RelayServer {
        var configuration = RelayServer.Configuration(rtmp: RTMPServer.Configuration(port: 0), httpPort: 0, loops: 2)
        configuration.auth = auth
        configure(&configuration.call)
        return try RelayServer(configuration: configuration)
    }

    private static func message(_ action: CallAction, _ from: String, _ to: String, callId: String, room: String? = nil) -> CallMessage {
        CallMessage(action: action, fromUserId: from, remoteUserId: to, callId: callId, fromRoomId: room)
    }

    /// An RTMP start that should be refused: true when it failed with the refusal.
    private static func refused(_ client: TestRTMPClient) throws -> Bool {
        if case .failed = try client.start() { return true }
        return false
    }

    /// Publishes a sequence header and a few frames.
    private static func sendFrames(_ publisher: TestRTMPClient, from index: Int = 0) throws {
        if index == 0 { try publisher.sendVideo(SyntheticVideo.sequenceHeader, timestamp: 0) }
        for n in index..<(index + 5) {
            try publisher.sendVideo(SyntheticVideo.frame(index: n, keyframe: n % 5 == 0), timestamp: UInt32(n * 40))
        }
    }

    @Test("alice calls bob: invitation, accept, callMedia to both; bob's stream plays for alice with her secret only; hangup ends the publisher and every later publish or play")
    func fullCall() throws {
        let server = try startServer()
        defer { server.shutdown() }
        let clients = try EventLoopGroup(count: 1, name: "call-e2e")
        defer { clients.shutdown() }
        let port = server.httpPort
        let alice = try CallUser(port: port, loop: clients.loops[0])
        let bob = try CallUser(port: port, loop: clients.loops[0])
        let carol = try CallUser(port: port, loop: clients.loops[0])
        #expect(alice.register("alice") == .ok)
        #expect(bob.register("bob") == .ok)
        #expect(carol.register("carol") == .ok)
        #expect(eventually(5) { server.call.userCount == 3 })

        let room = CallStreams.newRoomId()
        let callId = UUID().uuidString
        #expect(alice.send(Self.message(.videoCall, "alice", "bob", callId: callId, room: room)) == .ok)
        #expect(bob.wait(.message)?.call?.fromRoomId == room)
        #expect(bob.send(Self.message(.accept, "bob", "alice", callId: callId)) == .ok)
        let aliceMedia = try #require(alice.wait(.callMedia))
        let bobMedia = try #require(bob.wait(.callMedia))
        #expect(alice.wait(.message) { $0.call?.action == .accept } != nil)
        // callMedia reaches alice before the accept message.
        let aliceKinds = alice.events.value.map(\.event).filter { $0 != .reply }
        #expect(aliceKinds == [.callMedia, .message])
        #expect(aliceMedia.publishStream == CallStreams.streamName(roomId: room, caller: true))
        #expect(aliceMedia.playStream == bobMedia.publishStream && bobMedia.playStream == aliceMedia.publishStream)
        #expect(aliceMedia.playQuery != bobMedia.playQuery)
        #expect(carol.events.value.allSatisfy { $0.event == .reply })

        // bob publishes his stream (in an app of his choosing) with his secret.
        let bobStream = try #require(bobMedia.publishStream), bobQuery = try #require(bobMedia.publishQuery)
        let aliceQuery = try #require(aliceMedia.playQuery)
        let publisher = try TestRTMPClient(port: server.rtmpPort, path: "call/\(bobStream)?\(bobQuery)", mode: .publish)
        #expect(try publisher.start().map { if case .publishing = $0 { true } else { false } } == true)
        try Self.sendFrames(publisher)
        // alice plays it with her own secret; carol (not in the call), no secret and bob's secret are refused.
        let player = try TestRTMPClient(port: server.rtmpPort, path: "call/\(bobStream)?\(aliceQuery)", mode: .play)
        #expect(try player.start().map { if case .playing = $0 { true } else { false } } == true)
        try Self.sendFrames(publisher, from: 5)
        #expect(try player.pump(timeout: 5) { if case .video(let raw) = $0 { SyntheticVideo.index(of: raw.payload) != nil } else { false } } != nil)
        for path in ["call/\(bobStream)", "call/\(bobStream)?call=", "call/\(bobStream)?\(bobQuery)", "call/\(bobStream)?call=guess"] {
            #expect(try Self.refused(TestRTMPClient(port: server.rtmpPort, path: path, mode: .play)), "play \(path)")
        }
        // Nobody else publishes either stream; the call's streams are not listed.
        #expect(try Self.refused(TestRTMPClient(port: server.rtmpPort, path: "call/\(aliceMedia.publishStream!)?\(bobQuery)", mode: .publish)))
        #expect(try Self.refused(TestRTMPClient(port: server.rtmpPort, path: "call/\(aliceMedia.publishStream!)", mode: .publish)))
        #expect(try apiStreams(server).isEmpty)
        let metrics = try httpGet(port: port, "/metrics").body
        #expect(!metrics.contains(room))
        #expect(metrics.contains("liveline_call_users 3\n") && metrics.contains("liveline_calls 1\n"))
        #expect(metrics.contains("liveline_hidden_streams 1\n"))

        // alice hangs up: bob hears it, his publisher is ended, nothing of the room works again.
        #expect(alice.send(Self.message(.hangup, "alice", "bob", callId: callId)) == .ok)
        #expect(bob.wait(.message) { $0.call?.action == .hangup } != nil)
        _ = try publisher.pump(timeout: 5) { _ in false }
        #expect(publisher.closedByServer, "the call ended but bob still publishes")
        #expect(eventually(5) { server.rtmp.streams().allSatisfy { $0.publisher == nil } })
        for (path, mode) in [("call/\(bobStream)?\(bobQuery)", RTMPClientSessionCore.Mode.publish),
                             ("call/\(aliceMedia.publishStream!)?\(aliceMedia.publishQuery!)", .publish),
                             ("call/\(bobStream)?\(aliceQuery)", .play),
                             ("call/\(aliceMedia.publishStream!)?\(bobQuery)", .play)] {
            #expect(try Self.refused(TestRTMPClient(port: server.rtmpPort, path: path, mode: mode)), "\(mode) \(path) after the call")
        }
        // The room is used for good.
        let again = alice.send(Self.message(.videoCall, "alice", "bob", callId: UUID().uuidString, room: room))
        #expect(again == .invalidParams)
        #expect(server.call.callCount == 0)
    }

    @Test("offline callee 203, spoofed sender 4, a taken user id 604, bad input 4, an oversized message closes the connection")
    func refusals() throws {
        let server = try startServer()
        defer { server.shutdown() }
        let clients = try EventLoopGroup(count: 1, name: "call-refusals")
        defer { clients.shutdown() }
        let port = server.httpPort
        let alice = try CallUser(port: port, loop: clients.loops[0])
        #expect(alice.register("alice") == .ok)
        let offline = alice.send(CallRequest(op: .send, message: Self.message(.videoCall, "alice", "zoe", callId: "c1",
                                                                             room: CallStreams.newRoomId())))
        #expect(alice.replyCode(offline) == .noSuchUser)
        #expect(alice.wait(.reply) { $0.id == offline }?.message == "zoe is not registered (offline)")
        let twin = try CallUser(port: port, loop: clients.loops[0])
        #expect(twin.register("alice") == .alreadyOpen)
        #expect(twin.register("bob") == .ok)
        #expect(alice.send(Self.message(.videoCall, "bob", "alice", callId: "c2", room: CallStreams.newRoomId())) == .invalidParams)
        #expect(twin.events.value.filter { $0.event == .message }.isEmpty)
        let inputs = ["not json", "{\"op\":\"dance\",\"id\":71}", "{\"op\":\"register\",\"id\":72,\"userId\":7}", "[]"]
        for input in inputs { alice.send(text: input) }
        alice.send(binary: [0, 1, 2])
        #expect(eventually(5) { alice.events.value.filter { $0.code == LiveCode.invalidParams.rawValue }.count >= inputs.count + 2 })
        #expect(alice.events.value.compactMap(\.id).contains(71) && alice.events.value.compactMap(\.id).contains(72))
        // A message beyond 16 KiB closes the connection (1009), and alice is unregistered.
        alice.send(text: "{\"op\":\"heartbeat\",\"pad\":\"" + String(repeating: "x", count: CallService.maxMessageBytes) + "\"}")
        #expect(eventually(5) { alice.closed.value != nil })
        #expect(alice.closed.value == 1009)
        #expect(eventually(5) { server.call.userCount == 1 })
    }

    @Test("a user gone during a call (closed, or silent past the heartbeat timeout): the peer gets peerGone and the call's publishers end")
    func peerGone() throws {
        let server = try startServer { $0.heartbeatTimeout = .milliseconds(1500) }
        defer { server.shutdown() }
        let clients = try EventLoopGroup(count: 1, name: "call-gone")
        defer { clients.shutdown() }
        let port = server.httpPort
        for silent in [false, true] {
            let alice = try CallUser(port: port, loop: clients.loops[0])
            let bob = try CallUser(port: port, loop: clients.loops[0])
            #expect(alice.register("alice") == .ok)
            #expect(bob.register("bob") == .ok)
            let callId = UUID().uuidString
            #expect(alice.send(Self.message(.audioCall, "alice", "bob", callId: callId, room: CallStreams.newRoomId())) == .ok)
            #expect(bob.send(Self.message(.accept, "bob", "alice", callId: callId)) == .ok)
            let media = try #require(alice.wait(.callMedia))
            let publisher = try TestRTMPClient(port: server.rtmpPort, path: "call/\(media.publishStream!)?\(media.publishQuery!)", mode: .publish)
            #expect(try publisher.start().map { if case .publishing = $0 { true } else { false } } == true)
            if silent {
                // alice keeps sending heartbeats; bob says nothing.
                for _ in 0..<5 {
                    alice.send(CallRequest(op: .heartbeat))
                    usleep(500_000)
                }
                #expect(eventually(3) { bob.closed.value != nil })
                #expect(bob.closed.value == 4101) // 4000 + 101: network disconnected
            } else {
                bob.close()
            }
            let gone = try #require(alice.wait(.peerGone))
            #expect(gone == CallEvent(.peerGone, callId: callId, userId: "bob", reason: "networkUnstable"))
            _ = try publisher.pump(timeout: 5) { _ in false }
            #expect(publisher.closedByServer, "silent \(silent): the call ended but alice still publishes")
            alice.close()
            #expect(eventually(5) { server.call.userCount == 0 && server.call.callCount == 0 })
        }
    }

    @Test("with tokens: register needs a token of that user granting call; another sub, none, or no call grant are refused; the call's streams need the user's own token")
    func tokens() throws {
        let secret = Array("call-e2e-token-secret-0123456789".utf8)
        let server = try startServer(auth: TokenVerifier(secret: secret))
        defer { server.shutdown() }
        let clients = try EventLoopGroup(count: 1, name: "call-tokens")
        defer { clients.shutdown() }
        func token(_ sub: String, _ permissions: [AccessPermission]) -> String {
            AccessToken.mint(AccessClaims(sub: sub, exp: Int64(Date().timeIntervalSince1970) + 60, perm: permissions), secret: secret)
        }
        func userToken(_ sub: String) -> String {
            token(sub, [AccessPermission(action: .call, path: sub), AccessPermission(action: .publish, path: "call/*"),
                        AccessPermission(action: .play, path: "call/*")])
        }
        let port = server.httpPort
        let alice = try CallUser(port: port, loop: clients.loops[0], query: "?token=" + userToken("alice"))
        let mallory = try CallUser(port: port, loop: clients.loops[0])
        // A token for another sub (even one granting call on every user), none, or one without call.
        #expect(mallory.register("bob", token: token("mallory", [AccessPermission(action: .call, path: "*")])) == .unauthorized)
        #expect(mallory.register("bob", token: userToken("alice")) == .unauthorized)
        #expect(mallory.register("bob") == .tokenMustBeVerified)
        #expect(mallory.register("bob", token: token("bob", [AccessPermission(action: .play, path: "*")])) == .unauthorized)
        #expect(mallory.register("bob", token: "not.a.token") == .authFailed)
        // The URL's token registers alice; bob brings his in the request.
        #expect(alice.register("alice") == .ok)
        let bob = try CallUser(port: port, loop: clients.loops[0])
        #expect(bob.register("bob", token: userToken("bob")) == .ok)
        #expect(bob.replyCode(bob.send(CallRequest(op: .renewToken, token: userToken("alice")))) == .unauthorized)
        #expect(bob.replyCode(bob.send(CallRequest(op: .renewToken, token: userToken("bob")))) == .ok)
        let callId = UUID().uuidString
        #expect(alice.send(Self.message(.videoCall, "alice", "bob", callId: callId, room: CallStreams.newRoomId())) == .ok)
        #expect(bob.send(Self.message(.accept, "bob", "alice", callId: callId)) == .ok)
        let media = try #require(bob.wait(.callMedia))
        let stream = try #require(media.publishStream), query = try #require(media.publishQuery)
        // bob's secret with mallory's token (allowed to publish call/*) is refused; with bob's own it goes.
        let malloryPublish = token("mallory", [AccessPermission(action: .publish, path: "call/*")])
        #expect(try Self.refused(TestRTMPClient(port: server.rtmpPort, path: "call/\(stream)?\(query)&token=\(malloryPublish)", mode: .publish)))
        let publisher = try TestRTMPClient(port: server.rtmpPort, path: "call/\(stream)?\(query)&token=\(userToken("bob"))", mode: .publish)
        #expect(try publisher.start().map { if case .publishing = $0 { true } else { false } } == true)
        let aliceQuery = try #require(alice.wait(.callMedia)?.playQuery)
        #expect(try Self.refused(TestRTMPClient(port: server.rtmpPort, path: "call/\(stream)?\(aliceQuery)&token=\(userToken("carol"))", mode: .play)))
        let player = try TestRTMPClient(port: server.rtmpPort, path: "call/\(stream)?\(aliceQuery)&token=\(userToken("alice"))", mode: .play)
        #expect(try player.start().map { if case .playing = $0 { true } else { false } } == true)
        // /call is open to the WebSocket without an api token (it checks its own), unlike the API.
        #expect(try httpGet(port: port, "/api/streams").status == 401)
    }

    @Test("a user spamming requests far over the rate limit is answered 201 and then closed; its peer gets peerGone")
    func spamClosed() throws {
        let server = try startServer()
        defer { server.shutdown() }
        let clients = try EventLoopGroup(count: 1, name: "call-spam")
        defer { clients.shutdown() }
        let alice = try CallUser(port: server.httpPort, loop: clients.loops[0])
        #expect(alice.register("alice") == .ok)
        let spammer = try RawLineSocket(port: server.httpPort, path: "/call")
        spammer.send(CallRequest(op: .register, id: 1, userId: "spammer").jsonText)
        #expect(eventually(5) { server.call.userCount == 2 })
        let callId = UUID().uuidString
        #expect(alice.send(Self.message(.videoCall, "alice", "spammer", callId: callId, room: CallStreams.newRoomId())) == .ok)
        for n in 0..<200 { spammer.send("{\"op\":\"heartbeat\",\"id\":\(n)}") }
        let (closed, text) = spammer.readUntilClosed(timeout: 5)
        #expect(closed)
        #expect(text.contains("\"code\":201"))
        #expect(text.contains("\"event\":\"message\""))
        #expect(alice.wait(.peerGone)?.userId == "spammer")
        #expect(alice.closed.value == nil)
    }

    @Test("a user that stops reading is closed once its unread events pass the budget; its call ends for the peer")
    func slowReaderClosed() throws {
        let server = try startServer {
            $0.requestsPerSecond = 1_000_000
            $0.requestBurst = 1_000_000
            $0.maxQueuedBytes = 64 << 10
        }
        defer { server.shutdown() }
        let clients = try EventLoopGroup(count: 1, name: "call-slow")
        defer { clients.shutdown() }
        let alice = try CallUser(port: server.httpPort, loop: clients.loops[0])
        #expect(alice.register("alice") == .ok)
        let sleeper = try RawLineSocket(port: server.httpPort, path: "/call", receiveBufferSize: 4096)
        sleeper.send(CallRequest(op: .register, id: 1, userId: "sleeper").jsonText)
        #expect(eventually(5) { server.call.userCount == 2 })
        let callId = UUID().uuidString
        #expect(alice.send(Self.message(.videoCall, "alice", "sleeper", callId: callId, room: CallStreams.newRoomId())) == .ok)
        sleeper.send(CallRequest(op: .send, id: 2, message: Self.message(.accept, "sleeper", "alice", callId: callId)).jsonText)
        #expect(alice.wait(.callMedia) != nil)
        var mute = Self.message(.mute, "alice", "sleeper", callId: callId)
        mute.fromUserExtension = String(repeating: "x", count: 1000)
        var closed = false
        // Batches of 50 (about 60 KB) stay inside the budget of a user that reads.
        for _ in 0..<200 where !closed {
            let ids = (0..<50).map { _ in alice.send(CallRequest(op: .send, message: mute)) }
            #expect(alice.wait(.reply, timeout: 10) { $0.id == ids.last } != nil)
            closed = server.call.userCount == 1
        }
        #expect(closed, "the sleeping user was never closed")
        #expect(sleeper.readUntilClosed(timeout: 5).closed)
        #expect(alice.wait(.peerGone)?.userId == "sleeper")
        #expect(server.call.callCount == 0)
        #expect(alice.closed.value == nil)
    }

    @Test("with tokens over the wire: tokenWillExpire half-way through a short token, then tokenExpired (212) and the connection closed (4212); the peer gets peerGone")
    func tokenExpiry() throws {
        let secret = Array("call-e2e-expiry-secret-012345678".utf8)
        let server = try startServer(auth: TokenVerifier(secret: secret))
        defer { server.shutdown() }
        let clients = try EventLoopGroup(count: 1, name: "call-expiry")
        defer { clients.shutdown() }
        func token(_ sub: String, seconds: Int64) -> String {
            AccessToken.mint(AccessClaims(sub: sub, exp: Int64(Date().timeIntervalSince1970) + seconds,
                                          perm: [AccessPermission(action: .call, path: "*")]), secret: secret)
        }
        let alice = try CallUser(port: server.httpPort, loop: clients.loops[0])
        let bob = try CallUser(port: server.httpPort, loop: clients.loops[0])
        #expect(alice.register("alice", token: token("alice", seconds: 600)) == .ok)
        #expect(bob.register("bob", token: token("bob", seconds: 2)) == .ok)
        let callId = UUID().uuidString
        #expect(alice.send(Self.message(.videoCall, "alice", "bob", callId: callId, room: CallStreams.newRoomId())) == .ok)
        #expect(bob.wait(.tokenWillExpire, timeout: 3) != nil)
        #expect(bob.wait(.tokenExpired, timeout: 4)?.code == LiveCode.authTimeout.rawValue)
        #expect(eventually(3) { bob.closed.value != nil })
        #expect(bob.closed.value == 4212)
        #expect(alice.wait(.peerGone)?.userId == "bob")
        #expect(alice.events.value.allSatisfy { $0.event != .tokenWillExpire })
    }
}
