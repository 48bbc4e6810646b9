import Foundation
import LiveAuth
import LiveCore
import LiveRTMP
import LiveSignal
import Synchronization

/// A 1v1 call kit (the Agora CallAPI over LiveLine's signaling and relay, with PlanetKit's
/// mute and hold): one user registered at `ws://HOST:HTTPPORT/call`, calling or called by
/// another; an accepted call publishes this side's picture and sound (a `Hoster`) to a
/// fresh private stream and plays the peer's (a `Guest`).
///
/// No public call waits on the network: each returns at once and reports through
/// `onStateChanged` and `onEvent` (on the session's loop thread, or the caller's for what
/// a call decides by itself). The state machine behind it is `CallStateMachine` (pure).
public final class CallSession: Sendable {
    /// What a call kit is set up with (the CallAPI's CallConfig and PrepareConfig).
    public struct Options: Sendable {
        /// `rtmp://HOST[:PORT]/APP` (APP default "call"): where the call's streams go.
        public var server: RTMPURL
        /// `ws://HOST:PORT/call`; nil: found from the server as `LineServer.discover` does.
        public var signalURL: String?
        /// Who this side is (`CallLimits.userIdProblem` must pass).
        public var userId: String
        /// Tokens for the signaling (`register`, `renewToken`) and the streams; nil without tokens.
        public var tokenProvider: TokenProvider?
        /// What this side publishes (source, audio source, size, fps, bitrate).
        public var local = HosterConfiguration()
        /// What the play of the peer writes (snapshotPath, y4mPath, outPath, wavPath).
        public var play = Guest.PlayOptions()
        /// The calling timer, ms (the CallAPI's callTimeoutMillisecond; 0: none).
        public var callTimeoutMilliseconds = 15_000
        /// Connected at accept, without waiting for the peer's first frame.
        public var firstFrameWaitingDisabled = false
        /// Told to the callee with the invitation (≤ `CallLimits.maxExtension` bytes).
        public var userExtension: String?
        /// Connected this long: this side hangs up with `maxCallTimeExceeded` (nil: no limit).
        public var maxCallSeconds: Double?
        /// Connected but no media from the peer this long: the call ends with `networkUnstable`.
        public var mediaTimeout: Duration = .seconds(5)

        /// A call kit for `userId` on the server at `server` (`rtmp://HOST[:PORT]/call`).
        public init(server: RTMPURL, userId: String) {
            self.server = server
            self.userId = userId
        }
    }

    public let options: Options

    private struct Handlers {
        var state: (@Sendable (CallStateChange) -> Void)?
        var event: (@Sendable (CallSessionEvent) -> Void)?
    }

    private let handlers = Mutex(Handlers())
    private let core = Mutex(CallStateMachine(userId: ""))

    /// A kit for `options.userId`; nothing happens until `prepareForCall`.
    public init(options: Options) {
        self.options = options
        core.withLock { $0 = CallStateMachine(userId: options.userId) }
    }

    /// Every state change (the CallAPI's onCallStateChanged). Any thread may set it at any time.
    public var onStateChanged: (@Sendable (CallStateChange) -> Void)? {
        get { handlers.withLock { $0.state } }
        set { handlers.withLock { $0.state = newValue } }
    }

    /// Every other event (the CallAPI's onCallEventChanged, PlanetKit's peer callbacks).
    public var onEvent: (@Sendable (CallSessionEvent) -> Void)? {
        get { handlers.withLock { $0.event } }
        set { handlers.withLock { $0.event = newValue } }
    }

    /// The state now.
    public var state: CallState { core.withLock { $0.state } }

    /// Connects to the signaling and registers `options.userId` (the CallAPI's login and
    /// prepareForCall); `completion` gets nil once this side is `prepared`, or why not.
    /// Refused while calling, connecting or connected ("busy").
    public func prepareForCall(completion: @escaping @Sendable (LiveError?) -> Void) {
        completion(LiveError(.notInitialized, "the call kit is not built yet"))
    }

    /// Calls `remoteUserId` (the CallAPI's call): only in `prepared`; throws `.alreadyOpen`
    /// (busy) while calling, connecting or connected, `.notInitialized` before prepareForCall.
    public func call(_ remoteUserId: String, audioOnly: Bool = false) throws(LiveError) {
        throw LiveError(.notInitialized, "call \(remoteUserId): prepareForCall first")
    }

    /// Withdraws the invitation this side sent (the CallAPI's cancelCall).
    public func cancelCall() {}

    /// Takes the invitation that came in (the CallAPI's accept): throws when there is none.
    public func accept() throws(LiveError) {
        throw LiveError(.invalidParams, "there is no incoming call to accept")
    }

    /// Refuses the invitation that came in (the CallAPI's reject), with a reason for the caller.
    public func reject(reason: String? = nil) {}

    /// Ends the call (the CallAPI's hangup), with a reason for the peer.
    public func hangup(reason: String? = nil) {}

    /// Mutes (or unmutes) this side's microphone; the peer is told (PlanetKit's muteMyAudio).
    public func muteMyAudio(_ muted: Bool) {}

    /// Holds (or resumes) the call: this side sends black and silence, and both sides are
    /// told (PlanetKit's hold / unhold).
    public func hold(_ held: Bool) {}

    /// The figures of the call now (or the last one).
    public var stats: CallStats { CallStats() }

    /// Hangs up if in a call, unregisters and stops; `completion` runs once all has stopped.
    public func close(completion: @escaping @Sendable () -> Void = {}) { completion() }
}
