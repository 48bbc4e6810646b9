import LiveCore

/// A 1v1 call's state (the Agora CallAPI's CallStateType, with its numbers).
public enum CallState: Int, Sendable, CaseIterable {
    /// Not ready: `prepareForCall` has not registered this user yet (or `close` ended it).
    case idle = 0
    /// Registered and free: `call` may go out, invitations are taken.
    case prepared = 1
    /// An invitation is out (caller) or came in (callee) and waits for an answer.
    case calling = 2
    /// Accepted: the media starts; `connected` follows with the remote's first frame.
    case connecting = 3
    /// Both sides see (or, audio-only, hear) each other.
    case connected = 4
    /// The signaling failed (lost, refused or the token expired): `prepareForCall` again.
    case failed = 10

    /// The state's name, as the CallAPI spells it.
    public var name: String {
        switch self {
        case .idle: "idle"
        case .prepared: "prepared"
        case .calling: "calling"
        case .connecting: "connecting"
        case .connected: "connected"
        case .failed: "failed"
        }
    }
}

/// Why a call's state changed (the Agora CallAPI's CallStateReason, with its numbers; LiveLine's
/// own from 40: PlanetKit's disconnect reasons the CallAPI has no number for).
public enum CallStateReason: Int, Sendable, CaseIterable {
    case none = 0, joinRTCFailed = 1, messageFailed = 4, localRejected = 5, remoteRejected = 6, remoteAccepted = 7
    case localAccepted = 8, localHangup = 9, remoteHangup = 10, localCancelled = 11, remoteCancelled = 12
    case recvRemoteFirstFrame = 13, callingTimeout = 14, cancelByCallerRecall = 15, remoteCallBusy = 17
    case remoteCallingTimeout = 18, localVideoCall = 30, localAudioCall = 31, remoteVideoCall = 32, remoteAudioCall = 33
    /// Connected for `maxCallSeconds`: this side hung up (PlanetKit's maxCallTimeExceeded).
    case maxCallTimeExceeded = 40
    /// The peer's signaling or media vanished (PlanetKit's networkUnstable).
    case networkUnstable = 41
    /// The callee is not registered (the server's 203; PlanetKit's invalidUserId).
    case remoteOffline = 42

    /// The reason's name, as the CallAPI spells it.
    public var name: String {
        switch self {
        case .none: "none"
        case .joinRTCFailed: "joinRTCFailed"
        case .messageFailed: "messageFailed"
        case .localRejected: "localRejected"
        case .remoteRejected: "remoteRejected"
        case .remoteAccepted: "remoteAccepted"
        case .localAccepted: "localAccepted"
        case .localHangup: "localHangup"
        case .remoteHangup: "remoteHangup"
        case .localCancelled: "localCancelled"
        case .remoteCancelled: "remoteCancelled"
        case .recvRemoteFirstFrame: "recvRemoteFirstFrame"
        case .callingTimeout: "callingTimeout"
        case .cancelByCallerRecall: "cancelByCallerRecall"
        case .remoteCallBusy: "remoteCallBusy"
        case .remoteCallingTimeout: "remoteCallingTimeout"
        case .localVideoCall: "localVideoCall"
        case .localAudioCall: "localAudioCall"
        case .remoteVideoCall: "remoteVideoCall"
        case .remoteAudioCall: "remoteAudioCall"
        case .maxCallTimeExceeded: "maxCallTimeExceeded"
        case .networkUnstable: "networkUnstable"
        case .remoteOffline: "remoteOffline"
        }
    }
}

/// One state change of a call (the CallAPI's onCallStateChanged(state, stateReason,
/// eventReason, eventInfo)).
public struct CallStateChange: Sendable, Equatable {
    /// The new state.
    public var state: CallState
    /// Why (the CallAPI's stateReason).
    public var reason: CallStateReason
    /// Free text: "busy", the reject or hangup reason given, what failed.
    public var eventReason: String
    /// The call's facts: `callId`, `fromUserId`, `remoteUserId`, `fromRoomId`,
    /// `fromUserExtension`, `rejectReason`, `hangupReason`, `audioOnly` ("1") where they apply.
    public var info: [String: String]

    /// A change to `state` for `reason`.
    public init(state: CallState, reason: CallStateReason, eventReason: String = "", info: [String: String] = [:]) {
        self.state = state
        self.reason = reason
        self.eventReason = eventReason
        self.info = info
    }
}

/// What a call reports besides its states (the CallAPI's onCallEventChanged, PlanetKit's
/// peer mute and hold callbacks).
public enum CallSessionEvent: Sendable, Equatable {
    /// An invitation arrived (this side is now `calling`): accept or reject it.
    case incomingCall(from: String, callId: String, audioOnly: Bool, userExtension: String?)
    /// The peer muted or unmuted its microphone (PlanetKit's peerMicDidMute / peerMicDidUnmute).
    case peerMicMuted, peerMicUnmuted
    /// The call is on hold or resumed: the peer held it, or this side did (both sides are told).
    case peerHeld, peerUnheld
    /// The peer's first decoded picture (the CallAPI's recvRemoteFirstFrame 113).
    case remoteFirstFrame(width: Int, height: Int)
    /// The peer's first decoded sound (what connects an audio-only call).
    case remoteFirstAudio
    /// The CallAPI's captureFirstLocalVideoFrame 119 and publishFirstLocalVideoFrame 120.
    case captureFirstLocalVideoFrame, publishFirstLocalVideoFrame
    /// The peer's stream began (107) or ended (108).
    case remoteJoined, remoteLeft

    /// The event's name in the CLI's JSON lines.
    public var name: String {
        switch self {
        case .incomingCall: "incomingCall"
        case .peerMicMuted: "peerMicMuted"
        case .peerMicUnmuted: "peerMicUnmuted"
        case .peerHeld: "peerHeld"
        case .peerUnheld: "peerUnheld"
        case .remoteFirstFrame: "remoteFirstFrame"
        case .remoteFirstAudio: "remoteFirstAudio"
        case .captureFirstLocalVideoFrame: "captureFirstLocalVideoFrame"
        case .publishFirstLocalVideoFrame: "publishFirstLocalVideoFrame"
        case .remoteJoined: "remoteJoined"
        case .remoteLeft: "remoteLeft"
        }
    }
}

/// A call's figures, for the summary and the stats lines.
public struct CallStats: Sendable, Equatable {
    /// The caller's `call()` to `connected`, ms (nil for the callee, or before).
    public var setupMs: Double?
    /// `accept` (the callee's, or the caller hearing it) to the peer's first decoded frame
    /// (first sound for an audio-only call), ms.
    public var acceptToFirstFrameMs: Double?
    /// The play of the peer's stream; its latency p50/p95 is glass-to-glass of the peer's picture.
    public var remote = GuestStats()
    /// The own push.
    public var local = PipelineStats()
    /// How the last call ended (nil while none has).
    public var endedReason: CallStateReason?
    /// The last call's end: the reject or hangup reason given, if any.
    public var endedEventReason: String?
    /// Connected calls so far.
    public var connectedCalls = 0

    /// No figures yet.
    public init() {}
}
