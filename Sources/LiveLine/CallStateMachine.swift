import LiveCore
import LiveSignal

/// The streams of an accepted call, from the server's `callMedia`: this side publishes
/// `publishStream?publishQuery` and plays `playStream?playQuery` on the call's server.
public struct CallMedia: Sendable, Equatable {
    /// The accepted call.
    public var callId: String
    /// The caller's fresh room of the call.
    public var roomId: String
    /// This side's own stream (`call-ROOM-1` for the caller, `-2` for the callee) and its `call=SECRET` query.
    public var publishStream: String
    public var publishQuery: String
    /// The peer's stream, played with this side's own `call=SECRET`.
    public var playStream: String
    public var playQuery: String

    public init(callId: String, roomId: String, publishStream: String, publishQuery: String,
                playStream: String, playQuery: String) {
        self.callId = callId
        self.roomId = roomId
        self.publishStream = publishStream
        self.publishQuery = publishQuery
        self.playStream = playStream
        self.playQuery = playQuery
    }

    /// The media of a `callMedia` event; nil when a field is missing.
    public init?(event: CallEvent) {
        guard event.event == .callMedia, let callId = event.callId, let roomId = event.roomId,
              let publishStream = event.publishStream, let playStream = event.playStream else { return nil }
        self.init(callId: callId, roomId: roomId, publishStream: publishStream, publishQuery: event.publishQuery ?? "",
                  playStream: playStream, playQuery: event.playQuery ?? "")
    }
}

/// The 1v1 call's state machine: the Agora CallAPI's (idle → prepared → calling →
/// connecting → connected, failed) with PlanetKit's mute, hold, maximum call time and
/// network-unstable end. Pure: no I/O, clocks or threads. Inputs go in through `handle`
/// (local actions, received messages, the server's events, timer expiries, media
/// events); what to do comes out as `Output`s, in order: state changes, messages to
/// send, timers to start and stop, media to start and stop, events to report.
/// `CallSession` carries them out.
///
/// The rules:
/// - `call` only in `prepared` (else refused, busy); the invitation carries a callId and
///   room id the caller mints (fresh for every call). The callee goes to `calling` with
///   remoteVideoCall / remoteAudioCall.
/// - The calling timer (`callTimeoutMilliseconds`, 0: none) runs on both sides from
///   `calling` until `connected`. When it runs out, the side sends cancelCall with
///   cancelCallByInternal=1 (caller and callee alike, as the CallAPI does) and goes back to
///   `prepared` with callingTimeout; the peer sees remoteCallingTimeout.
/// - accept → `connecting` (localAccepted / remoteAccepted); `connecting → connected`
///   once the peer's first frame is decoded (first sound for an audio-only call), or at
///   once with `firstFrameWaitingDisabled`. The media start with the server's
///   `callMedia` (held until accept when it comes first).
/// - hangup, cancel and reject lead back to `prepared`; so do the peer's (remoteHangup,
///   remoteCancelled, remoteRejected), `peerGone` (networkUnstable), the peer's media
///   stalled for `mediaTimeoutMilliseconds` (networkUnstable, this side hangs up) and
///   `maxCallMilliseconds` connected (maxCallTimeExceeded).
/// - An invitation from anyone while calling, connecting or connected is rejected at
///   once with rejectReason "busy" and rejectByInternal=1; this side's state is
///   untouched. A caller that gets such a reject goes to `prepared` with remoteCallBusy.
/// - Both sides call each other at once (each is the caller of a call to the other when
///   the other's invitation arrives): the call of the user whose id sorts first (byte
///   order) goes on; that user ignores the other invitation, the other side cancels its
///   own call and accepts the winner's by itself (→ `connecting`, localAccepted, eventReason
///   "crossedCall"). Both sides decide alike without a further message, so the pair
///   always ends in one call.
/// - Messages whose callId is not the current call's (stale, unknown) or whose sender is
///   not the peer are ignored; so are timer and media inputs of an earlier call.
/// - The reply 203 to an invitation (the callee is not registered) → `prepared` with
///   remoteOffline; another refusal of the invitation or of accept → `prepared` with
///   messageFailed. The signaling lost → `failed`.
public struct CallStateMachine: Sendable {
    /// What the machine is set up with (the CallAPI's PrepareConfig).
    public struct Config: Sendable, Equatable {
        /// This side's user id.
        public var userId: String
        /// The calling timer (0: none).
        public var callTimeoutMilliseconds = 15_000
        /// Connected at accept, without waiting for the peer's first frame.
        public var firstFrameWaitingDisabled = false
        /// Told to the callee with each invitation.
        public var userExtension: String?
        /// Connected this long: hang up with maxCallTimeExceeded (nil: no limit).
        public var maxCallMilliseconds: Int?
        /// Connecting or connected with no media from the peer this long: networkUnstable.
        public var mediaTimeoutMilliseconds = 5_000
        /// The sizes and forms the machine checks (user ids, rooms, call ids, texts).
        public var limits = CallLimits()

        /// The CallAPI's defaults for `userId`.
        public init(userId: String) {
            self.userId = userId
        }
    }

    /// The machine's timers; each start names the call it is for.
    public enum Timer: String, Sendable, Equatable, CaseIterable {
        /// The calling timer (calling and connecting, until connected).
        case calling
        /// The maximum call time (connected).
        case maxCall
        /// The peer's media missing (after callMedia until the first frame, or stalled while connected).
        case media
    }

    /// What goes in.
    public enum Input: Sendable, Equatable {
        /// The registration succeeded (prepareForCall done).
        case registered
        /// The signaling is gone (lost, refused, token expired): `failed`.
        case signalingLost(reason: String)
        /// The user's call; `callId` and `roomId` minted fresh by the caller's kit.
        case call(remoteUserId: String, audioOnly: Bool, callId: String, roomId: String)
        /// The user's cancelCall, accept, reject, hangup, muteMyAudio and hold.
        case cancel
        case accept
        case reject(reason: String?)
        case hangup(reason: String?)
        case mute(Bool)
        case hold(Bool)
        /// The kit closes: end any call, then `idle`.
        case close
        /// A message from the peer (the server's `message` event).
        case received(CallMessage)
        /// The server's `callMedia`.
        case callMedia(CallMedia)
        /// The server's `peerGone`.
        case peerGone(callId: String, reason: String)
        /// A send the server refused: the reply's code and message.
        case sendFailed(callId: String, action: CallAction, code: Int, message: String)
        /// A timer the machine started for `callId` ran out.
        case timerFired(Timer, callId: String)
        /// The peer's first decoded picture, first decoded sound.
        case remoteFirstFrame(callId: String, width: Int, height: Int)
        case remoteFirstAudio(callId: String)
        /// The peer's media stopped (its stream ended, the play stalls) or came back.
        case remoteMediaStalled(callId: String)
        case remoteMediaResumed(callId: String)
        /// The call's push or play could not start or failed for good: the call ends
        /// (joinRTCFailed, this side hangs up).
        case mediaFailed(callId: String, reason: String)
    }

    /// What comes out, in the order to carry it out.
    public enum Output: Sendable, Equatable {
        /// Report this state change (onCallStateChanged).
        case state(CallStateChange)
        /// Send this message (its timestamp is stamped by the sender).
        case send(CallMessage)
        /// Start `timer` (replacing a running one); when it runs out, feed `timerFired(timer, callId:)`.
        case startTimer(Timer, milliseconds: Int, callId: String)
        /// Cancel `timer` if it runs.
        case stopTimer(Timer)
        /// Publish and play the call's streams (`audioOnly`: sound only).
        case startMedia(CallMedia, audioOnly: Bool)
        /// Stop the call's push and play.
        case stopMedia
        /// The own microphone on or off (mute).
        case setLocalAudio(Bool)
        /// The own push sends black and silence (hold) or the real media again.
        case setHold(Bool)
        /// Report this event (onEvent).
        case event(CallSessionEvent)
        /// The input is not allowed now (a call while busy, accept with nothing to accept):
        /// the kit's method throws this.
        case refused(LiveCode, String)
    }

    /// The call in progress.
    public struct Call: Sendable, Equatable {
        /// The caller's UUID for the call.
        public var callId: String
        /// The caller's fresh room.
        public var roomId: String
        /// The other user.
        public var peer: String
        /// This side called (false: it was called).
        public var isCaller: Bool
        /// Sound only (audioCall).
        public var audioOnly: Bool
        /// The caller's fromUserExtension.
        public var extensionText: String?
        /// The server's callMedia, once it came.
        public var media: CallMedia?
        /// The push and play were started (callMedia came after accept).
        public var mediaStarted = false
        /// This side's microphone is muted, its call held.
        public var muted = false
        public var held = false
        /// The peer's picture (or sound, audio-only) arrived.
        public var remoteArrived = false
    }

    public let config: Config
    /// The state now.
    public private(set) var state: CallState = .idle
    /// The call in progress (calling, connecting, connected).
    public private(set) var call: Call?

    /// A machine in `idle`.
    public init(config: Config) {
        self.config = config
    }

    /// A machine with the CallAPI's defaults for `userId`.
    public init(userId: String) {
        self.init(config: Config(userId: userId))
    }

    /// In a call (calling, connecting or connected): a new call or prepare is busy.
    public var isBusy: Bool { state == .calling || state == .connecting || state == .connected }

    /// Takes one input; returns what to do.
    public mutating func handle(_ input: Input) -> [Output] {
        switch input {
        case .registered: return registered()
        case .signalingLost(let reason): return lost(reason)
        case .call(let remote, let audioOnly, let callId, let roomId):
            return startCall(to: remote, audioOnly: audioOnly, callId: callId, roomId: roomId)
        case .cancel: return cancel()
        case .accept: return accept()
        case .reject(let reason): return reject(reason)
        case .hangup(let reason): return hangup(reason)
        case .mute(let muted): return mute(muted)
        case .hold(let held): return hold(held)
        case .close: return close()
        case .received(let message): return received(message)
        case .callMedia(let media): return callMedia(media)
        case .peerGone(let callId, let reason):
            guard isCurrent(callId) else { return [] }
            return end(.networkUnstable, eventReason: reason)
        case .sendFailed(let callId, let action, let code, let message):
            return sendFailed(callId: callId, action: action, code: code, message: message)
        case .timerFired(let timer, let callId):
            guard isCurrent(callId) else { return [] }
            return timerFired(timer)
        case .remoteFirstFrame(let callId, let width, let height):
            guard isCurrent(callId), state == .connecting || state == .connected else { return [] }
            return remoteArrived(.remoteFirstFrame(width: width, height: height), connects: !(call?.audioOnly ?? false))
        case .remoteFirstAudio(let callId):
            guard isCurrent(callId), state == .connecting || state == .connected else { return [] }
            return remoteArrived(.remoteFirstAudio, connects: call?.audioOnly ?? false)
        case .remoteMediaStalled(let callId):
            guard isCurrent(callId), state == .connected, let call else { return [] }
            return [.event(.remoteLeft), .startTimer(.media, milliseconds: config.mediaTimeoutMilliseconds, callId: call.callId)]
        case .remoteMediaResumed(let callId):
            guard isCurrent(callId), state == .connected else { return [] }
            return [.event(.remoteJoined), .stopTimer(.media)]
        case .mediaFailed(let callId, let reason):
            guard isCurrent(callId), state == .connecting || state == .connected else { return [] }
            let text = CallStateReason.joinRTCFailed.name
            return [.send(message(.hangup, hangupReason: text))] + end(.joinRTCFailed, eventReason: reason, extra: ["hangupReason": text])
        }
    }

    // MARK: local actions

    private mutating func registered() -> [Output] {
        if isBusy { return [.refused(.alreadyOpen, "busy: in a call (\(state.name))")] }
        state = .prepared
        return [.state(CallStateChange(state: .prepared, reason: .none))]
    }

    private mutating func lost(_ reason: String) -> [Output] {
        guard state != .idle, state != .failed else { return [] }
        var out = teardown()
        state = .failed
        out.append(.state(CallStateChange(state: .failed, reason: .networkUnstable, eventReason: reason, info: info())))
        call = nil
        return out
    }

    private mutating func startCall(to remote: String, audioOnly: Bool, callId: String, roomId: String) -> [Output] {
        switch state {
        case .prepared: break
        case .idle, .failed: return [.refused(.notInitialized, "not prepared: prepareForCall first")]
        default: return [.refused(.alreadyOpen, "busy: already in a call (\(state.name))")]
        }
        if let problem = config.limits.userIdProblem(remote) { return [.refused(.invalidParams, problem)] }
        if remote == config.userId { return [.refused(.invalidParams, "\(remote) cannot call itself")] }
        if let problem = config.limits.roomIdProblem(roomId) { return [.refused(.invalidParams, problem)] }
        if callId.isEmpty || callId.utf8.count > config.limits.maxCallId {
            return [.refused(.invalidParams, "a callId must be 1…\(config.limits.maxCallId) bytes")]
        }
        if let text = config.userExtension, text.utf8.count > config.limits.maxExtension {
            return [.refused(.invalidParams, "the user extension is over \(config.limits.maxExtension) bytes")]
        }
        call = Call(callId: callId, roomId: roomId, peer: remote, isCaller: true, audioOnly: audioOnly,
                    extensionText: config.userExtension)
        state = .calling
        var out: [Output] = [.state(change(.calling, audioOnly ? .localAudioCall : .localVideoCall))]
        out.append(.send(message(audioOnly ? .audioCall : .videoCall, fromRoomId: roomId, fromUserExtension: config.userExtension)))
        out += startCallingTimer()
        return out
    }

    private mutating func cancel() -> [Output] {
        guard let call, call.isCaller, state == .calling || state == .connecting else {
            return [.refused(.invalidParams, "there is no outgoing call to cancel")]
        }
        var out: [Output] = [.send(message(.cancelCall))]
        out += end(.localCancelled)
        return out
    }

    private mutating func accept() -> [Output] {
        guard let call, !call.isCaller, state == .calling else {
            return [.refused(.invalidParams, "there is no incoming call to accept")]
        }
        return [.send(message(.accept))] + connect(.localAccepted, eventReason: "")
    }

    private mutating func reject(_ reason: String?) -> [Output] {
        guard let call, !call.isCaller, state == .calling else {
            return [.refused(.invalidParams, "there is no incoming call to reject")]
        }
        let text = clip(reason)
        return [.send(message(.reject, rejectReason: text))] + end(.localRejected, eventReason: text ?? "", extra: ["rejectReason": text])
    }

    private mutating func hangup(_ reason: String?) -> [Output] {
        switch state {
        case .calling:
            // Before accept: the caller's hangup is a cancel, the callee's a reject.
            return call!.isCaller ? cancel() : reject(reason)
        case .connecting, .connected:
            let text = clip(reason)
            return [.send(message(.hangup, hangupReason: text))] + end(.localHangup, eventReason: text ?? "", extra: ["hangupReason": text])
        default:
            return [.refused(.invalidParams, "there is no call to hang up")]
        }
    }

    private mutating func mute(_ muted: Bool) -> [Output] {
        guard state == .connecting || state == .connected, let current = call else {
            return [.refused(.invalidParams, "there is no call to \(muted ? "mute" : "unmute")")]
        }
        guard current.muted != muted else { return [] }
        call!.muted = muted
        var out: [Output] = []
        if !current.held { out.append(.setLocalAudio(!muted)) }
        out.append(.send(message(muted ? .mute : .unmute)))
        return out
    }

    private mutating func hold(_ held: Bool) -> [Output] {
        guard state == .connecting || state == .connected, let current = call else {
            return [.refused(.invalidParams, "there is no call to \(held ? "hold" : "resume")")]
        }
        guard current.held != held else { return [] }
        call!.held = held
        var out: [Output] = [.setHold(held)]
        // Resumed: the microphone as the mute left it.
        if !held && current.muted { out.append(.setLocalAudio(false)) }
        out += [.send(message(held ? .hold : .unhold)), .event(held ? .peerHeld : .peerUnheld)]
        return out
    }

    private mutating func close() -> [Output] {
        var out: [Output] = []
        switch state {
        case .calling, .connecting, .connected: out = hangup(nil)
        default: break
        }
        guard state != .idle else { return out }
        state = .idle
        call = nil
        return out + [.state(CallStateChange(state: .idle, reason: .none))]
    }

    // MARK: the peer and the server

    private mutating func received(_ message: CallMessage) -> [Output] {
        guard message.remoteUserId == config.userId, config.limits.userIdProblem(message.fromUserId) == nil else { return [] }
        if message.action.isInvitation { return invited(message) }
        guard let call, message.callId == call.callId, message.fromUserId == call.peer else { return [] }
        switch (message.action, state) {
        case (.accept, .calling) where call.isCaller:
            return connect(.remoteAccepted, eventReason: "")
        case (.cancelCall, .calling), (.cancelCall, .connecting), (.cancelCall, .connected):
            let timedOut = message.cancelCallByInternal == 1
            return end(timedOut ? .remoteCallingTimeout : .remoteCancelled, eventReason: timedOut ? "callingTimeout" : "")
        case (.reject, .calling) where call.isCaller, (.reject, .connecting) where call.isCaller:
            let reason = clip(message.rejectReason)
            let busy = message.rejectByInternal == 1 && reason == "busy"
            return end(busy ? .remoteCallBusy : .remoteRejected, eventReason: reason ?? "", extra: ["rejectReason": reason])
        case (.hangup, .calling), (.hangup, .connecting), (.hangup, .connected):
            let reason = clip(message.hangupReason)
            return end(.remoteHangup, eventReason: reason ?? "", extra: ["hangupReason": reason])
        case (.mute, .connecting), (.mute, .connected): return [.event(.peerMicMuted)]
        case (.unmute, .connecting), (.unmute, .connected): return [.event(.peerMicUnmuted)]
        case (.hold, .connecting), (.hold, .connected): return [.event(.peerHeld)]
        case (.unhold, .connecting), (.unhold, .connected): return [.event(.peerUnheld)]
        default:
            return []
        }
    }

    /// An invitation: taken in `prepared`, the crossed-call rule when it is the callee of
    /// this side's own outgoing call calling back, else rejected as busy.
    private mutating func invited(_ message: CallMessage) -> [Output] {
        let limits = config.limits
        guard let roomId = message.fromRoomId, limits.roomIdProblem(roomId) == nil, !message.callId.isEmpty,
              message.callId.utf8.count <= limits.maxCallId, message.fromUserId != config.userId,
              (message.fromUserExtension?.utf8.count ?? 0) <= limits.maxExtension else { return [] }
        let audioOnly = message.action == .audioCall
        let incoming = Call(callId: message.callId, roomId: roomId, peer: message.fromUserId, isCaller: false,
                            audioOnly: audioOnly, extensionText: message.fromUserExtension)
        switch state {
        case .prepared:
            call = incoming
            state = .calling
            var out: [Output] = [.state(change(.calling, audioOnly ? .remoteAudioCall : .remoteVideoCall))]
            out.append(.event(.incomingCall(from: incoming.peer, callId: incoming.callId, audioOnly: audioOnly,
                                            userExtension: incoming.extensionText)))
            return out + startCallingTimer()
        case .calling where call!.isCaller && call!.peer == message.fromUserId && call!.callId != message.callId:
            // Both called each other at once: the call of the id that sorts first goes on.
            guard Array(message.fromUserId.utf8).lexicographicallyPrecedes(Array(config.userId.utf8)) else { return [] }
            var out: [Output] = [.send(self.message(.cancelCall)), .stopTimer(.calling)]
            call = incoming
            out.append(.send(self.message(.accept)))
            out += startCallingTimer()
            return out + connect(.localAccepted, eventReason: "crossedCall")
        case .calling, .connecting, .connected:
            if message.callId == call?.callId { return [] }
            // Busy: rejected by the kit, this side's call untouched.
            return [.send(CallMessage(action: .reject, fromUserId: config.userId, remoteUserId: message.fromUserId,
                                      callId: message.callId, timestamp: 0, rejectReason: "busy", rejectByInternal: 1))]
        case .idle, .failed:
            return []
        }
    }

    private mutating func callMedia(_ media: CallMedia) -> [Output] {
        guard isCurrent(media.callId), let current = call, !current.mediaStarted else { return [] }
        call!.media = media
        guard state == .connecting || state == .connected else { return [] }
        return startMedia()
    }

    private mutating func sendFailed(callId: String, action: CallAction, code: Int, message: String) -> [Output] {
        guard isCurrent(callId), let call else { return [] }
        switch action {
        case .videoCall, .audioCall:
            guard state == .calling, call.isCaller else { return [] }
            if code == LiveCode.noSuchUser.rawValue { return end(.remoteOffline, eventReason: message) }
            return end(.messageFailed, eventReason: message)
        case .accept:
            guard state == .connecting || state == .connected, !call.isCaller else { return [] }
            return end(.messageFailed, eventReason: message)
        default:
            return []
        }
    }

    private mutating func timerFired(_ timer: Timer) -> [Output] {
        switch (timer, state) {
        case (.calling, .calling), (.calling, .connecting):
            guard config.callTimeoutMilliseconds > 0 else { return [] }
            return [.send(message(.cancelCall, cancelCallByInternal: 1))] + end(.callingTimeout, eventReason: "callingTimeout")
        case (.maxCall, .connected):
            let text = CallStateReason.maxCallTimeExceeded.name
            return [.send(message(.hangup, hangupReason: text))] + end(.maxCallTimeExceeded, eventReason: text, extra: ["hangupReason": text])
        case (.media, .connecting), (.media, .connected):
            let text = CallStateReason.networkUnstable.name
            return [.send(message(.hangup, hangupReason: text))] + end(.networkUnstable, eventReason: text, extra: ["hangupReason": text])
        default:
            return []
        }
    }

    /// The peer's first picture or sound: `connects` when it is what this call waits for
    /// (the picture, or the sound of an audio-only call).
    private mutating func remoteArrived(_ event: CallSessionEvent, connects: Bool) -> [Output] {
        var out: [Output] = []
        if connects && !call!.remoteArrived {
            call!.remoteArrived = true
            out += [.event(.remoteJoined), .stopTimer(.media)]
        }
        out.append(.event(event))
        if connects && state == .connecting { out += connected(.recvRemoteFirstFrame) }
        return out
    }

    // MARK: transitions

    /// Accepted: `connecting`, the media if callMedia came, and `connected` at once when
    /// the first frame is not awaited.
    private mutating func connect(_ reason: CallStateReason, eventReason: String) -> [Output] {
        state = .connecting
        var out: [Output] = [.state(change(.connecting, reason, eventReason: eventReason))]
        if call?.media != nil { out += startMedia() }
        if config.firstFrameWaitingDisabled { out += connected(reason) }
        return out
    }

    private mutating func connected(_ reason: CallStateReason) -> [Output] {
        state = .connected
        var out: [Output] = [.stopTimer(.calling), .state(change(.connected, reason))]
        if let limit = config.maxCallMilliseconds, let call {
            out.append(.startTimer(.maxCall, milliseconds: limit, callId: call.callId))
        }
        return out
    }

    private mutating func startMedia() -> [Output] {
        guard let current = call, let media = current.media else { return [] }
        call!.mediaStarted = true
        var out: [Output] = [.startMedia(media, audioOnly: current.audioOnly)]
        // Until the peer's first picture (or sound) arrives; a stall later restarts it.
        if !current.remoteArrived, config.mediaTimeoutMilliseconds > 0 {
            out.append(.startTimer(.media, milliseconds: config.mediaTimeoutMilliseconds, callId: current.callId))
        }
        return out
    }

    private func startCallingTimer() -> [Output] {
        guard config.callTimeoutMilliseconds > 0, let call else { return [] }
        return [.startTimer(.calling, milliseconds: config.callTimeoutMilliseconds, callId: call.callId)]
    }

    /// Timers off and media stopped (what ends a call).
    private func teardown() -> [Output] {
        var out: [Output] = Timer.allCases.map { .stopTimer($0) }
        if call?.mediaStarted == true { out.append(.stopMedia) }
        return out
    }

    /// The call ends: back to `prepared` with `reason`.
    private mutating func end(_ reason: CallStateReason, eventReason: String = "", extra: [String: String?] = [:]) -> [Output] {
        var out = teardown()
        var details = info()
        for (key, value) in extra { if let value { details[key] = value } }
        state = .prepared
        out.append(.state(CallStateChange(state: .prepared, reason: reason, eventReason: eventReason, info: details)))
        call = nil
        return out
    }

    // MARK: helpers

    private func isCurrent(_ callId: String) -> Bool { call?.callId == callId }

    private func change(_ state: CallState, _ reason: CallStateReason, eventReason: String = "") -> CallStateChange {
        CallStateChange(state: state, reason: reason, eventReason: eventReason, info: info())
    }

    /// The call's facts for a state change, in the CallAPI's names: fromUserId is the
    /// caller, remoteUserId the callee.
    private func info() -> [String: String] {
        guard let call else { return [:] }
        var info = ["callId": call.callId, "fromRoomId": call.roomId, "peerUserId": call.peer,
                    "fromUserId": call.isCaller ? config.userId : call.peer,
                    "remoteUserId": call.isCaller ? call.peer : config.userId,
                    "audioOnly": call.audioOnly ? "1" : "0"]
        if let text = call.extensionText { info["fromUserExtension"] = text }
        return info
    }

    /// A message of the current call to its peer (timestamp 0: the sender stamps it).
    private func message(_ action: CallAction, fromRoomId: String? = nil, fromUserExtension: String? = nil,
                         cancelCallByInternal: Int? = nil, rejectReason: String? = nil,
                         hangupReason: String? = nil) -> CallMessage {
        CallMessage(action: action, fromUserId: config.userId, remoteUserId: call?.peer ?? "", callId: call?.callId ?? "",
                    timestamp: 0, fromRoomId: fromRoomId, fromUserExtension: fromUserExtension,
                    cancelCallByInternal: cancelCallByInternal, rejectReason: rejectReason, hangupReason: hangupReason)
    }

    /// A reason text cut to the limit (on a character boundary).
    private func clip(_ text: String?) -> String? {
        guard let text else { return nil }
        var clipped = Substring(text)
        while clipped.utf8.count > config.limits.maxReason { clipped = clipped.dropLast() }
        return String(clipped)
    }
}
