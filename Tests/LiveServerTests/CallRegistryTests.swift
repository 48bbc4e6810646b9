import Foundation
import LiveCore
import LiveSignal
import LiveTestSupport
import Testing
@testable import LiveServer

/// The 1v1 calls as a pure state machine: a registry, a hand-moved clock and numbered
/// connections, checked on the deliveries each step returns.
struct CallHarness {
    var registry: CallRegistry
    var nowMicros: UInt64 = 1_000_000
    var last: [CallDelivery] = []
    private var counter = 0

    static let alice = CallConnectionID(1), bob = CallConnectionID(2), carol = CallConnectionID(3), dave = CallConnectionID(4)
    static let room = "room-0123456789abcdef"
    static let room2 = "room-fedcba9876543210"

    init(limits: CallLimits = CallLimits()) {
        // Predictable secrets: s1, s2, ... in the order they are made.
        let tokens = Locked(0)
        registry = CallRegistry(limits: limits) { _ in
            "s\(tokens.update { value -> Int in value += 1; return value })"
        }
    }

    /// Sends `request` (numbered); `admission` answers a register or renewToken.
    @discardableResult
    mutating func request(_ connection: CallConnectionID, _ request: CallRequest, admission: LineAdmission = .open) -> [CallDelivery] {
        counter += 1
        var request = request
        request.id = counter
        last = registry.handle(request, from: connection, nowMicros: nowMicros) { _, _ in admission }
        return last
    }

    @discardableResult
    mutating func register(_ connection: CallConnectionID, _ userId: String, admission: LineAdmission = .open) -> LiveCode? {
        request(connection, CallRequest(op: .register, userId: userId), admission: admission)
        return reply(connection)
    }

    @discardableResult
    mutating func send(_ connection: CallConnectionID, _ message: CallMessage) -> LiveCode? {
        request(connection, CallRequest(op: .send, message: message))
        return reply(connection)
    }

    @discardableResult
    mutating func advance(seconds: Double) -> [CallDelivery] {
        nowMicros += UInt64(seconds * 1_000_000)
        last = registry.tick(nowMicros: nowMicros)
        return last
    }

    @discardableResult
    mutating func disconnect(_ connection: CallConnectionID) -> [CallDelivery] {
        last = registry.disconnect(connection)
        return last
    }

    /// The events `connection` got from the last step.
    func events(_ connection: CallConnectionID) -> [CallEvent] { last.filter { $0.reaches(connection) }.compactMap(\.event) }
    func event(_ connection: CallConnectionID, _ kind: CallEvent.Kind) -> CallEvent? { events(connection).first { $0.event == kind } }
    /// The code of the reply `connection` got in the last step.
    func reply(_ connection: CallConnectionID) -> LiveCode? { event(connection, .reply)?.code.flatMap(LiveCode.init(rawValue:)) }
    /// The rooms whose streams the last step asked the relay to end.
    var endedRooms: [String] { last.compactMap { if case .endStreams(let roomId) = $0.action { roomId } else { nil } } }
    /// The connections the last step closed.
    var closed: [CallConnectionID] { last.compactMap { if case .disconnect = $0.action { $0.recipients.first } else { nil } } }

    static func message(_ action: CallAction, _ from: String, _ to: String, callId: String = "c1", room: String? = nil,
                        reason: String? = nil) -> CallMessage {
        CallMessage(action: action, fromUserId: from, remoteUserId: to, callId: callId, timestamp: 1,
                    fromRoomId: room ?? (action.isInvitation ? Self.room : nil), rejectReason: action == .reject ? reason : nil,
                    hangupReason: action == .hangup ? reason : nil)
    }

    /// alice, bob (and carol) registered.
    mutating func registerAll() {
        #expect(register(Self.alice, "alice") == .ok)
        #expect(register(Self.bob, "bob") == .ok)
        #expect(register(Self.carol, "carol") == .ok)
    }

    /// alice invites bob to call "c1" in `room`.
    mutating func invite(room: String = Self.room) {
        #expect(send(Self.alice, Self.message(.videoCall, "alice", "bob", room: room)) == .ok)
    }

    /// alice invites bob and bob accepts; returns the callMedia each got (alice's, bob's).
    mutating func startCall(room: String = Self.room) throws -> (CallEvent, CallEvent) {
        invite(room: room)
        #expect(send(Self.bob, Self.message(.accept, "bob", "alice")) == .ok)
        return (try #require(event(Self.alice, .callMedia)), try #require(event(Self.bob, .callMedia)))
    }
}

@Suite("1v1 calls (pure)")
struct CallRegistryTests {
    typealias H = CallHarness

    @Test("register: a valid free user id once per connection; bad ids 4, a taken id 604, another id on the same connection 4, full 209, token refusals and another sub passed on", arguments: [
        ("", LiveCode.invalidParams), ("has space", .invalidParams), (String(repeating: "u", count: 65), .invalidParams),
        ("ali/ce", .invalidParams), ("a.b-c_d@e", .ok), (String(repeating: "u", count: 64), .ok),
    ])
    func registerIds(userId: String, code: LiveCode) {
        var h = H()
        #expect(h.register(H.alice, userId) == code)
        #expect(h.registry.userCount == (code == .ok ? 1 : 0))
    }

    @Test("register: duplicates, the same connection, the cap, tokens")
    func registerRules() {
        var h = H(limits: changed(CallLimits()) { $0.maxUsers = 2 })
        h.request(H.alice, CallRequest(op: .register))
        #expect(h.reply(H.alice) == .invalidParams)
        #expect(h.register(H.alice, "alice") == .ok)
        // A second connection for a live user id: 604; the first keeps it.
        #expect(h.register(H.bob, "alice") == .alreadyOpen)
        #expect(h.registry.connection(of: "alice") == H.alice)
        // The same connection: again as itself is fine, as another user is not.
        #expect(h.register(H.alice, "alice") == .ok)
        #expect(h.register(H.alice, "mallory") == .invalidParams)
        #expect(h.registry.connection(of: "mallory") == nil)
        #expect(h.register(H.bob, "bob") == .ok)
        #expect(h.register(H.carol, "carol") == .noResources)
        // A token refusal is passed on with its code; a token for another user is 104.
        h.disconnect(H.bob)
        #expect(h.register(H.carol, "carol", admission: .refused(code: .tokenMustBeVerified, message: "no token given")) == .tokenMustBeVerified)
        #expect(h.register(H.carol, "carol", admission: .admitted(userId: "dave", expiresAtMicros: nil)) == .unauthorized)
        #expect(h.registry.connection(of: "carol") == nil)
        #expect(h.register(H.carol, "carol", admission: .admitted(userId: "carol", expiresAtMicros: nil)) == .ok)
        // Once its connection is gone, the user id is free again.
        h.disconnect(H.alice)
        #expect(h.register(H.dave, "alice") == .ok)
        #expect(h.registry.connection(of: "alice") == H.dave)
    }

    @Test("send: refused with the right code and carried nowhere", arguments: [
        ("unregistered sender", LiveCode.notInitialized),
        ("no message", .invalidParams),
        ("spoofed fromUserId", .invalidParams),
        ("bad remoteUserId", .invalidParams),
        ("calls itself", .invalidParams),
        ("empty callId", .invalidParams),
        ("long callId", .invalidParams),
        ("long version", .invalidParams),
        ("long extension", .invalidParams),
        ("long reject reason", .invalidParams),
        ("long hangup reason", .invalidParams),
        ("offline callee", .noSuchUser),
    ])
    func sendRefused(case name: String, code: LiveCode) {
        var h = H()
        if name != "unregistered sender" { h.registerAll() }
        var message = H.message(.videoCall, "alice", "bob")
        switch name {
        case "spoofed fromUserId": message.fromUserId = "carol"
        case "bad remoteUserId": message.remoteUserId = "b o b"
        case "calls itself": message.remoteUserId = "alice"
        case "empty callId": message.callId = ""
        case "long callId": message.callId = String(repeating: "c", count: 65)
        case "long version": message.version = String(repeating: "1", count: 257)
        case "long extension": message.fromUserExtension = String(repeating: "x", count: 1025)
        case "long reject reason": message = H.message(.reject, "alice", "bob", reason: String(repeating: "r", count: 257))
        case "long hangup reason": message = H.message(.hangup, "alice", "bob", reason: String(repeating: "r", count: 257))
        case "offline callee": message.remoteUserId = "zoe"
        default: break
        }
        h.request(H.alice, CallRequest(op: .send, message: name == "no message" ? nil : message))
        #expect(h.reply(H.alice) == code, "\(name)")
        #expect(h.last.count == 1, "\(name) did more than answer: \(h.last)")
        if name == "offline callee" { #expect(h.event(H.alice, .reply)?.message == "zoe is not registered (offline)") }
        #expect(h.registry.callCount == 0)
    }

    @Test("an invitation is carried untouched and recorded; a bad or used room, a taken callId or a caller already calling is refused with 4")
    func invitations() throws {
        var h = H()
        h.registerAll()
        var invitation = H.message(.audioCall, "alice", "bob")
        invitation.fromUserExtension = "{\"topic\":\"hi\"}"
        #expect(h.send(H.alice, invitation) == .ok)
        #expect(h.event(H.bob, .message)?.call == invitation)
        #expect(h.events(H.carol).isEmpty)
        let call = try #require(h.registry.call("c1"))
        #expect(call.caller == "alice" && call.callee == "bob" && call.audioOnly && !call.isActive)
        for (message, why) in [
            (H.message(.videoCall, "carol", "bob", callId: "c2", room: "short"), "a room id must be"),
            (H.message(.videoCall, "carol", "bob", callId: "c2", room: "room-0123456789abcdef!"), "a room id must be"),
            (changed(H.message(.videoCall, "carol", "bob", callId: "c2")) { $0.fromRoomId = nil }, "a room id must be"),
            (H.message(.videoCall, "carol", "bob", callId: "c2", room: H.room), "already used"),
            (H.message(.videoCall, "carol", "bob", callId: "c1", room: H.room2), "call c1 already exists"),
            (H.message(.videoCall, "alice", "carol", callId: "c2", room: H.room2), "alice is already in call c1"),
        ] {
            #expect(h.send(message.fromUserId == "alice" ? H.alice : H.carol, message) == .invalidParams, "\(why)")
            #expect(h.last.count == 1)
            #expect(h.event(message.fromUserId == "alice" ? H.alice : H.carol, .reply)?.message?.contains(why) == true,
                    "\(String(describing: h.last.first?.event?.message)) for \(why)")
        }
        // A room once used stays used after its call ended.
        #expect(h.send(H.alice, H.message(.cancelCall, "alice", "bob")) == .ok)
        #expect(h.registry.isUsed(roomId: H.room))
        #expect(h.send(H.carol, H.message(.videoCall, "carol", "bob", callId: "c3", room: H.room)) == .invalidParams)
        #expect(h.send(H.carol, H.message(.videoCall, "carol", "bob", callId: "c3", room: H.room2)) == .ok)
    }

    @Test("accept: only the invitation's callee; then callMedia to both (callee first, the caller just before the accept), matching streams, one secret each")
    func accept() throws {
        var h = H()
        h.registerAll()
        h.invite()
        for (connection, message) in [(H.carol, H.message(.accept, "carol", "alice")),   // not the callee
                                      (H.bob, H.message(.accept, "bob", "alice", callId: "nope")), // unknown callId
                                      (H.alice, H.message(.accept, "alice", "bob")),     // the caller
                                      (H.bob, H.message(.accept, "bob", "carol"))] {     // wrong caller named
            #expect(h.send(connection, message) == .invalidParams, "\(message)")
            #expect(h.last.count == 1)
        }
        #expect(h.send(H.bob, H.message(.accept, "bob", "alice")) == .ok)
        // In order: bob's reply, bob's callMedia, alice's callMedia, alice's accept message.
        #expect(h.last.map(\.recipients) == [[H.bob], [H.bob], [H.alice], [H.alice]])
        #expect(h.last.compactMap(\.event).map(\.event) == [.reply, .callMedia, .callMedia, .message])
        let aliceMedia = try #require(h.event(H.alice, .callMedia)), bobMedia = try #require(h.event(H.bob, .callMedia))
        #expect(aliceMedia == CallEvent(.callMedia, callId: "c1", roomId: H.room, publishStream: "call-\(H.room)-1", publishQuery: "call=s1",
                                        playStream: "call-\(H.room)-2", playQuery: "call=s1"))
        #expect(bobMedia == CallEvent(.callMedia, callId: "c1", roomId: H.room, publishStream: "call-\(H.room)-2", publishQuery: "call=s2",
                                      playStream: "call-\(H.room)-1", playQuery: "call=s2"))
        #expect(h.event(H.alice, .message)?.call?.action == .accept)
        #expect(h.events(H.carol).isEmpty)
        // Accepting again is refused.
        #expect(h.send(H.bob, H.message(.accept, "bob", "alice")) == .invalidParams)
    }

    @Test("a call ends by cancel (pending), reject (pending) or hangup (accepted) from either user: carried, forgotten, an accepted one's streams ended", arguments: [
        (CallAction.cancelCall, false, H.alice), (.reject, false, H.bob), (.hangup, true, H.alice), (.hangup, true, H.bob),
        (.reject, true, H.bob), (.cancelCall, true, H.alice),
    ])
    func ending(action: CallAction, accepted: Bool, by connection: CallConnectionID) throws {
        var h = H()
        h.registerAll()
        if accepted { _ = try h.startCall() } else { h.invite() }
        let (user, peer, peerConnection) = connection == H.alice ? ("alice", "bob", H.bob) : ("bob", "alice", H.alice)
        // Not for someone outside the call, nor naming the wrong peer.
        #expect(h.send(H.carol, H.message(action, "carol", peer)) == .invalidParams)
        #expect(h.send(connection, H.message(action, user, "carol")) == .invalidParams)
        #expect(h.registry.callCount == 1)
        #expect(h.send(connection, H.message(action, user, peer, reason: "bye")) == .ok)
        #expect(h.event(peerConnection, .message)?.call?.action == action)
        #expect(h.endedRooms == (accepted ? [H.room] : []))
        #expect(h.registry.callCount == 0)
        // Nothing more about it is carried.
        #expect(h.send(connection, H.message(.hangup, user, peer)) == .invalidParams)
        #expect(h.registry.publishRefusal(streamName: "call-\(H.room)-1", query: "call=s1", userId: nil, checksUsers: false) != nil)
    }

    @Test("a user whose connection closes or goes silent during a pending or accepted call: the peer gets peerGone (networkUnstable), the call ends", arguments: [
        (false, false, H.alice), (false, false, H.bob), (true, false, H.alice), (true, false, H.bob), (true, true, H.bob), (false, true, H.alice),
    ])
    func peerGone(accepted: Bool, silent: Bool, gone: CallConnectionID) throws {
        var h = H()
        h.registerAll()
        if accepted { _ = try h.startCall() } else { h.invite() }
        let (goneUser, peerConnection) = gone == H.alice ? ("alice", H.bob) : ("bob", H.alice)
        if silent {
            // The peer keeps talking; the gone one says nothing for the heartbeat timeout.
            h.advance(seconds: 20)
            h.request(peerConnection, CallRequest(op: .heartbeat))
            h.request(H.carol, CallRequest(op: .heartbeat))
            h.advance(seconds: 10)
            #expect(h.closed == [gone])
        } else {
            h.disconnect(gone)
        }
        #expect(h.event(peerConnection, .peerGone) == CallEvent(.peerGone, callId: "c1", userId: goneUser, reason: "networkUnstable"))
        #expect(h.endedRooms == (accepted ? [H.room] : []))
        #expect(h.registry.callCount == 0)
        #expect(h.registry.connection(of: goneUser) == nil)
        #expect(h.events(H.carol).isEmpty)
    }

    @Test("an unanswered invitation is forgotten after pendingTimeout; its room stays used; an accepted call is not timed out")
    func pendingTimeout() throws {
        var h = H(limits: changed(CallLimits()) { $0.pendingTimeout = .seconds(10); $0.heartbeatTimeout = .seconds(3600) })
        h.registerAll()
        h.invite()
        h.advance(seconds: 9.9)
        #expect(h.registry.call("c1") != nil)
        h.advance(seconds: 0.1)
        #expect(h.registry.call("c1") == nil)
        #expect(h.last.isEmpty)
        #expect(h.send(H.bob, H.message(.accept, "bob", "alice")) == .invalidParams)
        #expect(h.registry.isUsed(roomId: H.room))
        _ = try h.startCall(room: H.room2)
        h.advance(seconds: 60)
        #expect(h.registry.call("c1")?.isActive == true)
    }

    @Test("the stream rules before, during and after a call", arguments: [false, true])
    func streamRules(checksUsers: Bool) throws {
        var h = H()
        h.registerAll()
        let one = "call-\(H.room)-1", two = "call-\(H.room)-2"
        func publish(_ name: String, _ query: String?, _ user: String?) -> Bool {
            h.registry.publishRefusal(streamName: name, query: query, userId: user, checksUsers: checksUsers) == nil
        }
        func play(_ name: String, _ query: String?, _ user: String?) -> Bool {
            h.registry.playRefusal(streamName: name, query: query, userId: user, checksUsers: checksUsers) == nil
        }
        // Other names are not the call's business.
        #expect(publish("room1", nil, nil) && play("room1", nil, nil) && publish("line-x", nil, nil))
        // Before: nothing call- goes, not even with a guessed secret.
        h.invite()
        #expect(!publish(one, "call=s1", "alice") && !play(two, "call=s1", "alice"))
        #expect(h.send(H.bob, H.message(.accept, "bob", "alice")) == .ok)
        // During: each its own stream with its own secret; the other's to play with its own secret.
        #expect(publish(one, "call=s1", "alice") && publish(two, "call=s2", "bob"))
        #expect(play(two, "call=s1", "alice") && play(one, "call=s2", "bob"))
        #expect(publish(one, "x=1&call=s1", "alice"))
        for (name, query, user) in [
            (one, "call=s2", "bob"), (two, "call=s1", "alice"),            // the peer's stream
            (one, nil, "alice"), (one, "call=", "alice"), (one, "call=s1x", "alice"), (one, "line=s1", "alice"),
            ("call-\(H.room)-3", "call=s1", "alice"), ("call-\(H.room)", "call=s1", "alice"), ("call-", "call=s1", "alice"),
            ("call-\(H.room2)-1", "call=s1", "alice"),
        ] as [(String, String?, String?)] {
            #expect(!publish(name, query, user), "publish \(name)?\(query ?? "")")
        }
        for (name, query, user) in [
            (one, "call=s1", "alice"), (two, "call=s2", "bob"),            // one's own stream
            (one, nil, "carol"), (one, "call=", "carol"), (two, "call=s2", "carol"), (one, "call=s2x", "bob"),
        ] as [(String, String?, String?)] {
            #expect(!play(name, query, user), "play \(name)?\(query ?? "")")
        }
        // With tokens, the secret alone is not enough: the token's user must be the one.
        #expect(publish(one, "call=s1", "carol") == !checksUsers)
        #expect(play(one, "call=s2", "carol") == !checksUsers)
        #expect(publish(one, "call=s1", nil) == !checksUsers)
        // After: nothing, for the former users too.
        #expect(h.send(H.alice, H.message(.hangup, "alice", "bob")) == .ok)
        #expect(!publish(one, "call=s1", "alice") && !publish(two, "call=s2", "bob"))
        #expect(!play(two, "call=s1", "alice") && !play(one, "call=s2", "bob"))
    }

    @Test("a former peer is refused after the call: alice's next call is with carol, bob's old secret opens nothing")
    func formerPeer() throws {
        var h = H()
        h.registerAll()
        _ = try h.startCall()
        #expect(h.send(H.bob, H.message(.hangup, "bob", "alice")) == .ok)
        #expect(h.send(H.alice, H.message(.videoCall, "alice", "carol", callId: "c2", room: H.room2)) == .ok)
        #expect(h.send(H.carol, H.message(.accept, "carol", "alice", callId: "c2")) == .ok)
        let carolMedia = try #require(h.event(H.carol, .callMedia))
        #expect(carolMedia.playQuery == "call=s4")
        let aliceStream = "call-\(H.room2)-1"
        #expect(h.registry.playRefusal(streamName: aliceStream, query: "call=s4", userId: "carol", checksUsers: true) == nil)
        for secret in ["s1", "s2", "s3"] {
            #expect(h.registry.playRefusal(streamName: aliceStream, query: "call=\(secret)", userId: "bob", checksUsers: false) != nil)
        }
        // bob cannot speak into the new call either.
        #expect(h.send(H.bob, H.message(.hangup, "bob", "alice", callId: "c2")) == .invalidParams)
        #expect(h.send(H.bob, H.message(.mute, "bob", "alice", callId: "c1")) == .invalidParams)
        #expect(h.registry.call("c2")?.isActive == true)
    }

    @Test("mute, unmute, hold and unhold are carried only within an accepted call, to its peer", arguments: [CallAction.mute, .unmute, .hold, .unhold])
    func muteHold(action: CallAction) throws {
        var h = H()
        h.registerAll()
        #expect(h.send(H.alice, H.message(action, "alice", "bob")) == .invalidParams)
        h.invite()
        #expect(h.send(H.alice, H.message(action, "alice", "bob")) == .invalidParams)
        #expect(h.send(H.bob, H.message(.accept, "bob", "alice")) == .ok)
        #expect(h.send(H.carol, H.message(action, "carol", "bob")) == .invalidParams)
        #expect(h.send(H.alice, H.message(action, "alice", "carol")) == .invalidParams)
        #expect(h.send(H.bob, H.message(action, "bob", "alice")) == .ok)
        #expect(h.event(H.alice, .message)?.call?.action == action)
    }

    @Test("busy: an invitation to a user in a call is carried (its kit rejects it, busy); it may reject but not accept while in the call")
    func busy() throws {
        var h = H()
        h.registerAll()
        _ = try h.startCall()
        #expect(h.send(H.carol, H.message(.videoCall, "carol", "bob", callId: "c2", room: H.room2)) == .ok)
        #expect(h.event(H.bob, .message)?.call?.callId == "c2")
        #expect(h.send(H.bob, H.message(.accept, "bob", "carol", callId: "c2")) == .invalidParams)
        var busy = H.message(.reject, "bob", "carol", callId: "c2", reason: "busy")
        busy.rejectByInternal = 1
        #expect(h.send(H.bob, busy) == .ok)
        #expect(h.event(H.carol, .message)?.call == busy)
        #expect(h.registry.call("c1")?.isActive == true)
        #expect(h.endedRooms.isEmpty)
        // A caller that took another call meanwhile cannot be in two: its callee's accept is refused.
        var h2 = H()
        h2.registerAll()
        h2.invite()
        #expect(h2.send(H.carol, H.message(.videoCall, "carol", "alice", callId: "c2", room: H.room2)) == .ok)
        #expect(h2.send(H.alice, H.message(.accept, "alice", "carol", callId: "c2")) == .ok)
        #expect(h2.send(H.bob, H.message(.accept, "bob", "alice")) == .invalidParams)
        #expect(h2.event(H.bob, .reply)?.message == "alice is already in call c2")
        #expect(h2.registry.call("c1")?.isActive == false)
    }

    @Test("bad input: not JSON, an unknown op, wrong types are answered with 4 (the id kept when readable); heartbeat is answered 0")
    func badInput() {
        var h = H()
        for (text, id) in [("not json", nil), ("{\"op\":\"dance\",\"id\":1}", 1), ("{\"op\":\"register\",\"id\":2,\"userId\":7}", 2),
                           ("[]", nil), ("{\"id\":3}", 3), ("{\"op\":\"send\",\"id\":4,\"message\":{\"message_action\":99}}", 4)] as [(String, Int?)] {
            let out = h.registry.receive(text, from: H.alice, nowMicros: h.nowMicros)
            #expect(out.count == 1)
            #expect(out.first?.event?.code == LiveCode.invalidParams.rawValue, "\(text)")
            #expect(out.first?.event?.id == id)
        }
        let out = h.registry.receive("{\"op\":\"heartbeat\",\"id\":9}", from: H.alice, nowMicros: h.nowMicros)
        #expect(out.first?.event == CallEvent(.reply, id: 9, op: "heartbeat", code: .ok, message: "ok"))
    }

    @Test("requests over 20/s (burst 40) are answered with 201; a client that keeps going is closed and its call ends")
    func rateLimit() throws {
        var h = H()
        h.registerAll()
        _ = try h.startCall()
        for _ in 0..<38 {
            h.request(H.alice, CallRequest(op: .heartbeat))
            #expect(h.reply(H.alice) == .ok)
        }
        h.request(H.alice, CallRequest(op: .heartbeat))
        #expect(h.reply(H.alice) == .badRequest)
        var dropped = false
        for _ in 0..<100 where !dropped {
            h.request(H.alice, CallRequest(op: .heartbeat))
            dropped = h.closed == [H.alice]
        }
        #expect(dropped)
        #expect(h.event(H.bob, .peerGone)?.userId == "alice")
        #expect(h.endedRooms == [H.room])
        // Pings count too.
        var pinger = H()
        pinger.registerAll()
        let drops = (0..<100).flatMap { _ in pinger.registry.touch(H.carol, nowMicros: pinger.nowMicros) }
        #expect(drops.contains { $0.reaches(H.carol) && $0.event == nil })
    }

    @Test("tokens: tokenWillExpire once before the expiry, renewToken for the same user only, an expired token ends the registration (212) and the call")
    func tokenExpiry() throws {
        var h = H(limits: changed(CallLimits()) { $0.heartbeatTimeout = .seconds(3600) })
        let expiry = h.nowMicros + 600_000_000
        #expect(h.register(H.alice, "alice", admission: .admitted(userId: "alice", expiresAtMicros: expiry)) == .ok)
        #expect(h.register(H.bob, "bob") == .ok)
        h.request(H.carol, CallRequest(op: .renewToken, token: "t"))
        #expect(h.reply(H.carol) == .notInitialized)
        _ = try h.startCall()
        h.advance(seconds: 299)
        #expect(h.event(H.alice, .tokenWillExpire) == nil)
        h.advance(seconds: 1)
        #expect(h.event(H.alice, .tokenWillExpire)?.seconds == 300)
        h.advance(seconds: 1)
        #expect(h.event(H.alice, .tokenWillExpire) == nil)
        h.request(H.alice, CallRequest(op: .renewToken, token: "t"), admission: .admitted(userId: "mallory", expiresAtMicros: nil))
        #expect(h.reply(H.alice) == .unauthorized)
        h.request(H.alice, CallRequest(op: .renewToken, token: "t"), admission: .refused(code: .authFailed, message: "bad signature"))
        #expect(h.reply(H.alice) == .authFailed)
        h.request(H.bob, CallRequest(op: .heartbeat))
        h.advance(seconds: 299)
        #expect(h.event(H.alice, .tokenExpired)?.code == LiveCode.authTimeout.rawValue)
        #expect(h.closed == [H.alice])
        #expect(h.event(H.bob, .peerGone)?.userId == "alice")
        // A renewal in time keeps it.
        var renewed = H()
        #expect(renewed.register(H.alice, "alice", admission: .admitted(userId: "alice", expiresAtMicros: renewed.nowMicros + 10_000_000)) == .ok)
        renewed.request(H.alice, CallRequest(op: .renewToken, token: "t"),
                        admission: .admitted(userId: "alice", expiresAtMicros: renewed.nowMicros + 100_000_000))
        #expect(renewed.reply(H.alice) == .ok)
        renewed.advance(seconds: 20)
        #expect(renewed.closed.isEmpty)
    }

    @Test("with tokens required, a connection that has not registered within the admission timeout is closed (212)")
    func admissionTimeout() {
        var h = H(limits: changed(CallLimits()) { $0.heartbeatTimeout = .seconds(3600) })
        h.registry.requiresAdmission = true
        h.registry.connect(H.alice, nowMicros: h.nowMicros)
        h.registry.connect(H.bob, nowMicros: h.nowMicros)
        #expect(h.register(H.bob, "bob", admission: .admitted(userId: "bob", expiresAtMicros: nil)) == .ok)
        h.advance(seconds: 29)
        #expect(h.closed.isEmpty)
        h.request(H.alice, CallRequest(op: .heartbeat))
        h.advance(seconds: 1)
        #expect(h.closed == [H.alice])
        #expect(h.event(H.alice, .tokenExpired)?.code == LiveCode.authTimeout.rawValue)
    }

    @Test("used rooms are remembered up to maxRememberedRooms, the oldest forgotten first")
    func roomMemory() throws {
        var h = H(limits: changed(CallLimits()) { $0.maxRememberedRooms = 3 })
        h.registerAll()
        let rooms = (0..<5).map { "room-\($0)-0123456789abcdef" }
        for (n, room) in rooms.enumerated() {
            #expect(h.send(H.alice, H.message(.videoCall, "alice", "bob", callId: "c\(n)", room: room)) == .ok)
            #expect(h.registry.isUsed(roomId: room))
            #expect(h.send(H.alice, H.message(.cancelCall, "alice", "bob", callId: "c\(n)")) == .ok)
        }
        #expect(h.registry.rememberedRoomCount == 3)
        #expect(rooms.map { h.registry.isUsed(roomId: $0) } == [false, false, true, true, true])
        #expect(CallLimits().maxRememberedRooms == 100_000)
    }
}
