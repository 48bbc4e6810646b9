import LiveCore
import LiveLine
import LiveSignal
import Testing

/// The 1v1 call's state machine, pure: every (state, input) pair from a table, then the
/// outputs that matter (messages, timers, media) and the races, as two machines
/// exchanging messages.
@Suite("CallStateMachine: the CallAPI's states, every state × input, and the races")
struct CallStateMachineTests {
    static let roomA = "roomAAAAAAAAAAAAAAAAAA"
    static let roomB = "roomBBBBBBBBBBBBBBBBBB"
    static let roomC = "roomCCCCCCCCCCCCCCCCCC"

    static func config(_ user: String) -> CallStateMachine.Config {
        var config = CallStateMachine.Config(userId: user)
        config.maxCallMilliseconds = 60_000
        return config
    }

    /// Where a machine starts: its state, and for the call states who called.
    enum Start: String, CaseIterable, CustomStringConvertible {
        case idle, prepared, callingOut, callingIn, connectingOut, connectingIn, connectedOut, connectedIn, failed
        var description: String { rawValue }

        /// alice's machine in this state; the call (if any) is with bob, callId "c1".
        func machine() -> CallStateMachine {
            var m = CallStateMachine(config: CallStateMachineTests.config("alice"))
            if self == .idle { return m }
            _ = m.handle(.registered)
            switch self {
            case .idle, .prepared: break
            case .failed: _ = m.handle(.signalingLost(reason: "gone"))
            case .callingOut, .connectingOut, .connectedOut:
                _ = m.handle(.call(remoteUserId: "bob", audioOnly: false, callId: "c1", roomId: CallStateMachineTests.roomA))
                if self != .callingOut { _ = m.handle(.received(msg(.accept, from: "bob"))) }
            case .callingIn, .connectingIn, .connectedIn:
                _ = m.handle(.received(msg(.videoCall, from: "bob", room: CallStateMachineTests.roomB)))
                if self != .callingIn { _ = m.handle(.accept) }
            }
            if self == .connectedOut || self == .connectedIn {
                _ = m.handle(.callMedia(CallStateMachineTests.media("c1")))
                _ = m.handle(.remoteFirstFrame(callId: "c1", width: 320, height: 240))
            }
            return m
        }
    }

    enum Outcome: Equatable, CustomStringConvertible {
        /// No output at all; nothing changes.
        case ignored
        /// Only a refusal; nothing changes.
        case refused
        /// Outputs (messages, events, media), the state unchanged.
        case same
        /// The state changes to this, for this reason (the last state output).
        case to(CallState, CallStateReason)

        var description: String {
            switch self {
            case .ignored: "ignored"
            case .refused: "refused"
            case .same: "same"
            case .to(let state, let reason): "\(state.name)/\(reason.name)"
            }
        }
    }

    static func msg(_ action: CallAction, from: String, to: String = "alice", callId: String = "c1", room: String? = nil,
                    cancelByInternal: Int? = nil, rejectReason: String? = nil, rejectByInternal: Int? = nil,
                    hangupReason: String? = nil) -> CallMessage {
        CallMessage(action: action, fromUserId: from, remoteUserId: to, callId: callId, timestamp: 0, fromRoomId: room,
                    cancelCallByInternal: cancelByInternal, rejectReason: rejectReason, rejectByInternal: rejectByInternal,
                    hangupReason: hangupReason)
    }

    static func media(_ callId: String) -> CallMedia {
        CallMedia(callId: callId, roomId: roomA, publishStream: "call-\(roomA)-1", publishQuery: "call=s",
                  playStream: "call-\(roomA)-2", playQuery: "call=s")
    }

    typealias I = CallStateMachine.Input
    static let P = Outcome.to(.prepared, .none)

    /// Each input, and what it does in each start (in `Start.allCases` order: idle,
    /// prepared, callingOut, callingIn, connectingOut, connectingIn, connectedOut,
    /// connectedIn, failed).
    static let table: [(String, I, [Outcome])] = {
        let r = Outcome.refused, i = Outcome.ignored, s = Outcome.same
        func to(_ state: CallState, _ reason: CallStateReason) -> Outcome { .to(state, reason) }
        let inCall = { (o: Outcome) in [o, o, o, o, o, o] }
        return [
            ("registered", .registered, [P, P, r, r, r, r, r, r, P]),
            ("signaling lost", .signalingLost(reason: "x"), [i] + [to(.failed, .networkUnstable)] + inCall(to(.failed, .networkUnstable)) + [i]),
            ("call carol", .call(remoteUserId: "carol", audioOnly: false, callId: "c9", roomId: roomC),
             [r, to(.calling, .localVideoCall), r, r, r, r, r, r, r]),
            ("cancel", .cancel, [r, r, to(.prepared, .localCancelled), r, to(.prepared, .localCancelled), r, r, r, r]),
            ("accept", .accept, [r, r, r, to(.connecting, .localAccepted), r, r, r, r, r]),
            ("reject", .reject(reason: "no"), [r, r, r, to(.prepared, .localRejected), r, r, r, r, r]),
            ("hangup", .hangup(reason: "bye"),
             [r, r, to(.prepared, .localCancelled), to(.prepared, .localRejected)] + Array(repeating: to(.prepared, .localHangup), count: 4) + [r]),
            ("mute", .mute(true), [r, r, r, r, s, s, s, s, r]),
            ("hold", .hold(true), [r, r, r, r, s, s, s, s, r]),
            ("unmute, not muted", .mute(false), [r, r, r, r, i, i, i, i, r]),
            ("resume, not held", .hold(false), [r, r, r, r, i, i, i, i, r]),
            ("close", .close, [i] + Array(repeating: to(.idle, .none), count: 8)),
            ("invitation from carol", .received(msg(.videoCall, from: "carol", callId: "c9", room: roomC)),
             [i, to(.calling, .remoteVideoCall)] + inCall(s) + [i]),
            ("audio invitation from carol", .received(msg(.audioCall, from: "carol", callId: "c9", room: roomC)),
             [i, to(.calling, .remoteAudioCall)] + inCall(s) + [i]),
            // alice's id sorts first: her own outgoing call to bob goes on (callingOut ignores it).
            ("a new invitation from the peer", .received(msg(.videoCall, from: "bob", callId: "c8", room: roomC)),
             [i, to(.calling, .remoteVideoCall), i, s, s, s, s, s, i]),
            ("the same invitation again", .received(msg(.videoCall, from: "bob", callId: "c1", room: roomB)),
             [i, to(.calling, .remoteVideoCall), i, i, i, i, i, i, i]),
            ("accept received", .received(msg(.accept, from: "bob")), [i, i, to(.connecting, .remoteAccepted), i, i, i, i, i, i]),
            ("cancelCall received", .received(msg(.cancelCall, from: "bob")), [i, i] + inCall(to(.prepared, .remoteCancelled)) + [i]),
            ("cancelCall by timer received", .received(msg(.cancelCall, from: "bob", cancelByInternal: 1)),
             [i, i] + inCall(to(.prepared, .remoteCallingTimeout)) + [i]),
            ("reject received", .received(msg(.reject, from: "bob", rejectReason: "no")),
             [i, i, to(.prepared, .remoteRejected), i, to(.prepared, .remoteRejected), i, i, i, i]),
            ("busy reject received", .received(msg(.reject, from: "bob", rejectReason: "busy", rejectByInternal: 1)),
             [i, i, to(.prepared, .remoteCallBusy), i, to(.prepared, .remoteCallBusy), i, i, i, i]),
            ("hangup received", .received(msg(.hangup, from: "bob", hangupReason: "bye")), [i, i] + inCall(to(.prepared, .remoteHangup)) + [i]),
            ("mute received", .received(msg(.mute, from: "bob")), [i, i, i, i, s, s, s, s, i]),
            ("unmute received", .received(msg(.unmute, from: "bob")), [i, i, i, i, s, s, s, s, i]),
            ("hold received", .received(msg(.hold, from: "bob")), [i, i, i, i, s, s, s, s, i]),
            ("unhold received", .received(msg(.unhold, from: "bob")), [i, i, i, i, s, s, s, s, i]),
            ("stale accept", .received(msg(.accept, from: "bob", callId: "old")), Array(repeating: i, count: 9)),
            ("hangup from a stranger", .received(msg(.hangup, from: "mallory")), Array(repeating: i, count: 9)),
            ("hangup for someone else", .received(msg(.hangup, from: "bob", to: "carol")), Array(repeating: i, count: 9)),
            ("callMedia", .callMedia(media("c1")), [i, i, i, i, s, s, i, i, i]),
            ("callMedia of another call", .callMedia(media("c9")), Array(repeating: i, count: 9)),
            ("peerGone", .peerGone(callId: "c1", reason: "networkUnstable"), [i, i] + inCall(to(.prepared, .networkUnstable)) + [i]),
            ("invitation refused 203", .sendFailed(callId: "c1", action: .videoCall, code: 203, message: "bob is offline"),
             [i, i, to(.prepared, .remoteOffline), i, i, i, i, i, i]),
            ("invitation refused 4", .sendFailed(callId: "c1", action: .videoCall, code: 4, message: "room used"),
             [i, i, to(.prepared, .messageFailed), i, i, i, i, i, i]),
            ("accept refused", .sendFailed(callId: "c1", action: .accept, code: 4, message: "no invitation"),
             [i, i, i, i, i, to(.prepared, .messageFailed), i, to(.prepared, .messageFailed), i]),
            ("hangup refused", .sendFailed(callId: "c1", action: .hangup, code: 4, message: "x"), Array(repeating: i, count: 9)),
            ("calling timer", .timerFired(.calling, callId: "c1"),
             [i, i, to(.prepared, .callingTimeout), to(.prepared, .callingTimeout), to(.prepared, .callingTimeout),
              to(.prepared, .callingTimeout), i, i, i]),
            ("calling timer of an old call", .timerFired(.calling, callId: "old"), Array(repeating: i, count: 9)),
            ("max call timer", .timerFired(.maxCall, callId: "c1"),
             [i, i, i, i, i, i, to(.prepared, .maxCallTimeExceeded), to(.prepared, .maxCallTimeExceeded), i]),
            ("media timer", .timerFired(.media, callId: "c1"), [i, i, i, i] + Array(repeating: to(.prepared, .networkUnstable), count: 4) + [i]),
            ("remote first frame", .remoteFirstFrame(callId: "c1", width: 320, height: 240),
             [i, i, i, i, to(.connected, .recvRemoteFirstFrame), to(.connected, .recvRemoteFirstFrame), s, s, i]),
            ("remote first frame of an old call", .remoteFirstFrame(callId: "old", width: 320, height: 240), Array(repeating: i, count: 9)),
            ("remote first audio (video call)", .remoteFirstAudio(callId: "c1"), [i, i, i, i, s, s, s, s, i]),
            ("remote media stalled", .remoteMediaStalled(callId: "c1"), [i, i, i, i, i, i, s, s, i]),
            ("remote media resumed", .remoteMediaResumed(callId: "c1"), [i, i, i, i, i, i, s, s, i]),
            ("media failed", .mediaFailed(callId: "c1", reason: "push refused"),
             [i, i, i, i] + Array(repeating: to(.prepared, .joinRTCFailed), count: 4) + [i]),
        ]
    }()

    static var cells: [(Start, Int)] {
        Start.allCases.flatMap { start in table.indices.map { (start, $0) } }
    }

    @Test("every (state, input) pair does what the table says", arguments: cells)
    func everyPair(start: Start, row: Int) throws {
        let (name, input, outcomes) = Self.table[row]
        try #require(outcomes.count == Start.allCases.count, "row \(name)")
        let expected = outcomes[Start.allCases.firstIndex(of: start)!]
        var machine = start.machine()
        let before = machine.state
        let beforeCall = machine.call
        let outputs = machine.handle(input)
        let states = outputs.compactMap { output -> CallStateChange? in if case .state(let c) = output { return c }; return nil }
        let refused = outputs.contains { if case .refused = $0 { return true }; return false }
        switch expected {
        case .ignored:
            #expect(outputs.isEmpty, "\(name) in \(start): \(outputs)")
            #expect(machine.state == before)
        case .refused:
            #expect(refused && outputs.count == 1, "\(name) in \(start): \(outputs)")
            #expect(machine.state == before && machine.call == beforeCall)
        case .same:
            #expect(!outputs.isEmpty && !refused && states.isEmpty, "\(name) in \(start): \(outputs)")
            #expect(machine.state == before)
        case .to(let state, let reason):
            let last = try #require(states.last, "\(name) in \(start): no state change in \(outputs)")
            #expect(last.state == state && last.reason == reason, "\(name) in \(start): \(last.state.name)/\(last.reason.name)")
            #expect(machine.state == state)
        }
        // Leaving a call stops every timer and, when they ran, the media.
        if case .to(let state, _) = expected, [.prepared, .failed, .idle].contains(state), beforeCall != nil {
            for timer in CallStateMachine.Timer.allCases { #expect(outputs.contains(.stopTimer(timer)), "\(name) in \(start)") }
            #expect(outputs.contains(.stopMedia) == (beforeCall?.mediaStarted ?? false), "\(name) in \(start)")
            #expect(machine.call == nil)
        }
    }

    // MARK: outputs

    static func sent(_ outputs: [CallStateMachine.Output]) -> [CallMessage] {
        outputs.compactMap { if case .send(let m) = $0 { return m }; return nil }
    }

    @Test("call: the invitation carries callId, room, extension; calling with localVideoCall and the 15 s calling timer")
    func callOutputs() throws {
        var config = Self.config("alice")
        config.userExtension = "hi bob"
        var m = CallStateMachine(config: config)
        _ = m.handle(.registered)
        let out = m.handle(.call(remoteUserId: "bob", audioOnly: true, callId: "c1", roomId: Self.roomA))
        let invitation = try #require(Self.sent(out).first)
        #expect(invitation.action == .audioCall && invitation.callId == "c1" && invitation.fromRoomId == Self.roomA)
        #expect(invitation.fromUserId == "alice" && invitation.remoteUserId == "bob" && invitation.fromUserExtension == "hi bob")
        #expect(out.contains(.startTimer(.calling, milliseconds: 15_000, callId: "c1")))
        let change = try #require(out.first)
        guard case .state(let state) = change else { Issue.record("first output \(change)"); return }
        #expect(state.reason == .localAudioCall && state.info["callId"] == "c1" && state.info["remoteUserId"] == "bob")
        // A second call is busy; calling yourself or a bad id is refused.
        #expect(m.handle(.call(remoteUserId: "carol", audioOnly: false, callId: "c2", roomId: Self.roomC)) == [.refused(.alreadyOpen, "busy: already in a call (calling)")])
        var fresh = CallStateMachine(config: config)
        _ = fresh.handle(.registered)
        #expect(fresh.handle(.call(remoteUserId: "alice", audioOnly: false, callId: "c1", roomId: Self.roomA)).count == 1)
        #expect(fresh.handle(.call(remoteUserId: "bob", audioOnly: false, callId: "c1", roomId: "short")).count == 1)
        #expect(fresh.state == .prepared)
    }

    @Test("the callee: incomingCall with the extension, remoteAudioCall; the calling timer 0 starts none")
    func calleeOutputs() {
        var config = Self.config("alice")
        config.callTimeoutMilliseconds = 0
        var m = CallStateMachine(config: config)
        _ = m.handle(.registered)
        var invitation = Self.msg(.audioCall, from: "bob", room: Self.roomB)
        invitation.fromUserExtension = "hello"
        let out = m.handle(.received(invitation))
        #expect(out.contains(.event(.incomingCall(from: "bob", callId: "c1", audioOnly: true, userExtension: "hello"))))
        #expect(!out.contains { if case .startTimer = $0 { return true }; return false })
        #expect(m.state == .calling && m.call?.audioOnly == true)
        // An invitation without a proper room is no invitation.
        var other = CallStateMachine(config: Self.config("alice"))
        _ = other.handle(.registered)
        #expect(other.handle(.received(Self.msg(.videoCall, from: "bob", room: "x"))).isEmpty)
        #expect(other.handle(.received(Self.msg(.videoCall, from: "bob"))).isEmpty)
    }

    @Test("busy: an invitation while in a call is rejected with busy and rejectByInternal=1, the call untouched")
    func busyReject() throws {
        for start in [Start.callingOut, .callingIn, .connectingOut, .connectingIn, .connectedOut, .connectedIn] {
            var m = start.machine()
            let call = m.call
            let out = m.handle(.received(Self.msg(.videoCall, from: "carol", callId: "c9", room: Self.roomC)))
            let reject = try #require(Self.sent(out).first)
            #expect(out.count == 1)
            #expect(reject.action == .reject && reject.remoteUserId == "carol" && reject.callId == "c9")
            #expect(reject.rejectReason == "busy" && reject.rejectByInternal == 1)
            #expect(m.call == call && m.state == start.machine().state)
        }
    }

    @Test("the calling timer: both sides send cancelCall with cancelCallByInternal=1; the peer gets remoteCallingTimeout")
    func callingTimeout() throws {
        for start in [Start.callingOut, .callingIn] {
            var m = start.machine()
            let out = m.handle(.timerFired(.calling, callId: "c1"))
            let cancel = try #require(Self.sent(out).first)
            #expect(cancel.action == .cancelCall && cancel.cancelCallByInternal == 1 && cancel.remoteUserId == "bob")
        }
    }

    @Test("accept, callMedia, first frame: media start once, connected with recvRemoteFirstFrame; the calling timer stops, the max call timer starts")
    func connectFlow() {
        var m = Start.callingIn.machine()
        let accepted = m.handle(.accept)
        #expect(Self.sent(accepted).map(\.action) == [.accept])
        #expect(!accepted.contains { if case .startMedia = $0 { return true }; return false })
        let media = m.handle(.callMedia(Self.media("c1")))
        #expect(media == [.startMedia(Self.media("c1"), audioOnly: false), .startTimer(.media, milliseconds: 5_000, callId: "c1")])
        let frame = m.handle(.remoteFirstFrame(callId: "c1", width: 320, height: 240))
        #expect(frame.contains(.event(.remoteFirstFrame(width: 320, height: 240))))
        #expect(frame.contains(.event(.remoteJoined)) && frame.contains(.stopTimer(.media)) && frame.contains(.stopTimer(.calling)))
        #expect(frame.contains(.startTimer(.maxCall, milliseconds: 60_000, callId: "c1")))
        #expect(m.state == .connected)
        // The caller gets callMedia before the accept: the media start with the accept.
        var caller = Start.callingOut.machine()
        #expect(caller.handle(.callMedia(Self.media("c1"))).isEmpty)
        let accept = caller.handle(.received(Self.msg(.accept, from: "bob")))
        #expect(accept.contains(.startMedia(Self.media("c1"), audioOnly: false)))
    }

    @Test("an audio-only call connects on the first sound, not a frame; firstFrameWaitingDisabled connects at accept")
    func audioAndNoWaiting() {
        var m = CallStateMachine(config: Self.config("alice"))
        _ = m.handle(.registered)
        _ = m.handle(.received(Self.msg(.audioCall, from: "bob", room: Self.roomB)))
        _ = m.handle(.accept)
        _ = m.handle(.callMedia(Self.media("c1")))
        #expect(m.handle(.callMedia(Self.media("c1"))).isEmpty)
        _ = m.handle(.remoteFirstFrame(callId: "c1", width: 2, height: 2))
        #expect(m.state == .connecting)
        _ = m.handle(.remoteFirstAudio(callId: "c1"))
        #expect(m.state == .connected)

        var config = Self.config("alice")
        config.firstFrameWaitingDisabled = true
        var quick = CallStateMachine(config: config)
        _ = quick.handle(.registered)
        _ = quick.handle(.received(Self.msg(.videoCall, from: "bob", room: Self.roomB)))
        let out = quick.handle(.accept)
        let states = out.compactMap { if case .state(let c) = $0 { return c.state }; return nil }
        #expect(states == [.connecting, .connected] && quick.state == .connected)
    }

    @Test("mute and hold: the microphone off and the peer told; hold blacks the push, both sides report peerHeld; resumed, the mute stays")
    func muteAndHold() throws {
        var m = Start.connectedOut.machine()
        let muted = m.handle(.mute(true))
        #expect(muted.contains(.setLocalAudio(false)) && Self.sent(muted).map(\.action) == [.mute])
        #expect(m.handle(.mute(true)).isEmpty)
        let held = m.handle(.hold(true))
        #expect(held.contains(.setHold(true)) && held.contains(.event(.peerHeld)) && Self.sent(held).map(\.action) == [.hold])
        let resumed = m.handle(.hold(false))
        #expect(resumed.contains(.setHold(false)) && resumed.contains(.setLocalAudio(false)) && resumed.contains(.event(.peerUnheld)))
        #expect(Self.sent(m.handle(.mute(false))).map(\.action) == [.unmute])
        #expect(m.handle(.received(Self.msg(.mute, from: "bob"))) == [.event(.peerMicMuted)])
        #expect(m.handle(.received(Self.msg(.hold, from: "bob"))) == [.event(.peerHeld)])
    }

    @Test("the max call time and the media timeout hang up with their reasons")
    func timersHangUp() throws {
        var m = Start.connectedIn.machine()
        let out = m.handle(.timerFired(.maxCall, callId: "c1"))
        #expect(Self.sent(out).first?.hangupReason == "maxCallTimeExceeded")
        var n = Start.connectedIn.machine()
        #expect(n.handle(.remoteMediaStalled(callId: "c1")).contains(.startTimer(.media, milliseconds: 5_000, callId: "c1")))
        #expect(n.handle(.remoteMediaResumed(callId: "c1")).contains(.stopTimer(.media)))
        let gone = n.handle(.timerFired(.media, callId: "c1"))
        #expect(Self.sent(gone).first?.hangupReason == "networkUnstable" && n.state == .prepared)
    }

    // MARK: races (two machines and the wire between them)

    /// Two users' machines and the messages in flight each way (the server carries them in order).
    struct Pair {
        var machines: [String: CallStateMachine]
        var wire: [String: [CallMessage]] = [:]
        var log: [String: [CallStateChange]] = [:]

        init(_ a: String, _ b: String) {
            machines = [a: CallStateMachine(config: CallStateMachineTests.config(a)),
                        b: CallStateMachine(config: CallStateMachineTests.config(b))]
            for user in [a, b] { _ = machines[user]!.handle(.registered) }
        }

        /// `user` takes `input`; what it sends goes on the wire.
        mutating func act(_ user: String, _ input: CallStateMachine.Input) {
            let out = machines[user]!.handle(input)
            for output in out {
                switch output {
                case .send(let message): wire[message.remoteUserId, default: []].append(message)
                case .state(let change): log[user, default: []].append(change)
                default: break
                }
            }
        }

        /// Delivers the next message in flight to `user`.
        mutating func deliver(to user: String) {
            guard var queue = wire[user], !queue.isEmpty else { return }
            let message = queue.removeFirst()
            wire[user] = queue
            act(user, .received(message))
        }

        /// Delivers everything in flight, both ways, until the wire is quiet.
        mutating func settle() {
            while wire.values.contains(where: { !$0.isEmpty }) {
                for user in machines.keys.sorted() { deliver(to: user) }
            }
        }

        func state(_ user: String) -> CallState { machines[user]!.state }
        func lastReason(_ user: String) -> CallStateReason? { log[user]?.last?.reason }
    }

    @Test("both call each other at once: the call of the id that sorts first goes on; the other side cancels its own and accepts it")
    func crossedCalls() throws {
        for order in [["alice", "bob"], ["bob", "alice"]] {
            var pair = Pair("alice", "bob")
            pair.act("alice", .call(remoteUserId: "bob", audioOnly: false, callId: "ca", roomId: Self.roomA))
            pair.act("bob", .call(remoteUserId: "alice", audioOnly: false, callId: "cb", roomId: Self.roomB))
            // Each invitation arrives while its receiver is calling.
            pair.deliver(to: order[0])
            pair.deliver(to: order[1])
            pair.settle()
            #expect(pair.state("alice") == .connecting && pair.state("bob") == .connecting, "\(order)")
            #expect(pair.machines["alice"]!.call?.callId == "ca" && pair.machines["bob"]!.call?.callId == "ca")
            #expect(pair.machines["alice"]!.call?.isCaller == true && pair.machines["bob"]!.call?.isCaller == false)
            #expect(pair.lastReason("alice") == .remoteAccepted && pair.lastReason("bob") == .localAccepted)
            #expect(pair.log["bob"]?.last?.eventReason == "crossedCall")
        }
    }

    @Test("cancel crossing accept: the caller's cancel and the callee's accept pass each other; both end in prepared")
    func cancelCrossingAccept() {
        var pair = Pair("alice", "bob")
        pair.act("alice", .call(remoteUserId: "bob", audioOnly: false, callId: "c1", roomId: Self.roomA))
        pair.deliver(to: "bob")
        pair.act("alice", .cancel)
        pair.act("bob", .accept)
        pair.settle()
        #expect(pair.state("alice") == .prepared && pair.lastReason("alice") == .localCancelled)
        #expect(pair.state("bob") == .prepared && pair.lastReason("bob") == .remoteCancelled)
    }

    @Test("the calling timer racing accept: the timed-out caller ignores the late accept; the callee hears remoteCallingTimeout")
    func timeoutRacingAccept() {
        var pair = Pair("alice", "bob")
        pair.act("alice", .call(remoteUserId: "bob", audioOnly: false, callId: "c1", roomId: Self.roomA))
        pair.deliver(to: "bob")
        pair.act("bob", .accept)
        pair.act("alice", .timerFired(.calling, callId: "c1"))
        pair.settle()
        #expect(pair.state("alice") == .prepared && pair.lastReason("alice") == .callingTimeout)
        #expect(pair.state("bob") == .prepared && pair.lastReason("bob") == .remoteCallingTimeout)
        // The callee's timer running out before it answers: the caller hears remoteCallingTimeout.
        var other = Pair("alice", "bob")
        other.act("alice", .call(remoteUserId: "bob", audioOnly: false, callId: "c2", roomId: Self.roomB))
        other.deliver(to: "bob")
        other.act("bob", .timerFired(.calling, callId: "c2"))
        other.settle()
        #expect(other.lastReason("bob") == .callingTimeout && other.lastReason("alice") == .remoteCallingTimeout)
    }

    @Test("a hangup arriving before connected ends the connecting side with remoteHangup")
    func hangupBeforeConnected() {
        var pair = Pair("alice", "bob")
        pair.act("alice", .call(remoteUserId: "bob", audioOnly: false, callId: "c1", roomId: Self.roomA))
        pair.deliver(to: "bob")
        pair.act("bob", .accept)
        pair.deliver(to: "alice")
        #expect(pair.state("alice") == .connecting && pair.state("bob") == .connecting)
        pair.act("alice", .hangup(reason: "changed my mind"))
        pair.settle()
        #expect(pair.lastReason("alice") == .localHangup && pair.lastReason("bob") == .remoteHangup)
        #expect(pair.log["bob"]?.last?.eventReason == "changed my mind")
    }

    @Test("busy through the pair: carol's call to bob mid-call gets remoteCallBusy; alice and bob stay connected")
    func busyBetweenThree() {
        var pair = Pair("alice", "bob")
        pair.machines["carol"] = CallStateMachine(config: Self.config("carol"))
        _ = pair.machines["carol"]!.handle(.registered)
        pair.act("alice", .call(remoteUserId: "bob", audioOnly: false, callId: "c1", roomId: Self.roomA))
        pair.settle()
        pair.act("bob", .accept)
        pair.settle()
        for user in ["alice", "bob"] {
            pair.act(user, .callMedia(Self.media("c1")))
            pair.act(user, .remoteFirstFrame(callId: "c1", width: 320, height: 240))
        }
        pair.act("carol", .call(remoteUserId: "bob", audioOnly: false, callId: "c3", roomId: Self.roomC))
        pair.settle()
        #expect(pair.state("carol") == .prepared && pair.lastReason("carol") == .remoteCallBusy)
        #expect(pair.log["carol"]?.last?.eventReason == "busy")
        #expect(pair.state("alice") == .connected && pair.state("bob") == .connected)
    }
}
