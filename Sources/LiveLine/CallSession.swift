import Foundation
import LiveAuth
import LiveCore
import LiveNet
import LiveRTMP
import LiveSignal
import Synchronization

/// A 1v1 call kit (the Agora CallAPI over LiveLine's signaling and relay, with PlanetKit's
/// mute and hold): one user registered at `ws://HOST:HTTPPORT/call`, calling or called by
/// another; an accepted call publishes this side's picture and sound (a `Hoster`) to a
/// fresh private stream and plays the peer's (a `Guest`).
///
///     let session = CallSession(options: options)
///     session.onStateChanged = { change in … }     // onCallStateChanged
///     session.prepareForCall { error in … }        // → prepared
///     try session.call("bob")                      // → calling → connecting → connected
///     session.hangup(reason: "bye")                // → prepared (localHangup)
///     session.close()                              // → idle
///
/// The rules are `CallStateMachine`'s (pure; this kit carries out its outputs): the
/// calling timer on both sides, busy auto-reject, crossed calls, first-frame-gated
/// `connected`. An accepted call publishes this side to the `publishStream` the server
/// gives in `callMedia` (a `Hoster` with `options.local`, audio mode for an audio-only
/// call) and plays the peer's `playStream` (a `Guest` with `options.play`), both on
/// `options.server`'s host, port and app; each call has a fresh room, so its streams
/// cannot be played once it is over. Mute sends silence, hold black and silence.
///
/// No public call waits on the network: each returns at once and reports through
/// `onStateChanged` and `onEvent`, in order, on the kit's signaling loop thread or on the
/// thread of the call that caused them. A lost signaling connection is not retried: the
/// kit goes to `failed`, and `prepareForCall` connects again. Thread-safe: the state is
/// one `Mutex`; handlers may be set at any time from any thread.
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
        var frame: (@Sendable (VideoFrame) -> Void)?
        var audio: (@Sendable (AudioFrame) -> Void)?
    }

    /// What the kit holds, under one lock. The machine's outputs wait in `queue` and are
    /// carried out in order by one thread at a time (`draining`), outside the lock.
    private struct Core {
        var machine: CallStateMachine
        var queue: [CallStateMachine.Output] = []
        var draining = false
        var loop: EventLoop?
        var client: CallClient?
        /// prepareForCall is under way.
        var preparing = false
        var closed = false
        var token: IssuedToken?
        var timers: [CallStateMachine.Timer: TimerHandle] = [:]
        /// The call's push and play, and the call they belong to.
        var hoster: Hoster?
        var guest: Guest?
        fileprivate var sink: RemoteFrames?
        var mediaCallId: String?
        var audioEnabled = true
        var held = false
        var firstPublish = false
        var stats = CallStats()
        var callStarted: ContinuousClock.Instant?
        var accepted: ContinuousClock.Instant?
    }

    private let handlers = Mutex(Handlers())
    private let core: Mutex<Core>
    /// The media of ended calls being stopped (each on a thread of its own, so the
    /// machine's thread never waits for them); `close` waits for them, so what the play
    /// writes at its end (a snapshot) is written before its completion runs.
    private let mediaStops = DispatchGroup()

    /// A kit for `options.userId`; nothing happens until `prepareForCall`.
    public init(options: Options) {
        self.options = options
        var config = CallStateMachine.Config(userId: options.userId)
        config.callTimeoutMilliseconds = max(0, options.callTimeoutMilliseconds)
        config.firstFrameWaitingDisabled = options.firstFrameWaitingDisabled
        config.userExtension = options.userExtension
        config.maxCallMilliseconds = options.maxCallSeconds.map { max(1, Int(($0 * 1000).rounded())) }
        config.mediaTimeoutMilliseconds = max(0, Int(options.mediaTimeout.components.seconds * 1000
                                                     + options.mediaTimeout.components.attoseconds / 1_000_000_000_000_000))
        core = Mutex(Core(machine: CallStateMachine(config: config)))
    }

    /// Every state change (the CallAPI's onCallStateChanged), in order. On the session's
    /// loop thread, or on the thread of the call that caused it. Any thread may set it at any time.
    public var onStateChanged: (@Sendable (CallStateChange) -> Void)? {
        get { handlers.withLock { $0.state } }
        set { handlers.withLock { $0.state = newValue } }
    }

    /// Every other event (the CallAPI's onCallEventChanged, PlanetKit's peer callbacks),
    /// in order with the state changes.
    public var onEvent: (@Sendable (CallSessionEvent) -> Void)? {
        get { handlers.withLock { $0.event } }
        set { handlers.withLock { $0.event = newValue } }
    }

    /// Each decoded picture of the peer (the CallAPI's remoteView), on the play's decode
    /// thread; the frame is reused afterwards.
    public var onRemoteFrame: (@Sendable (VideoFrame) -> Void)? {
        get { handlers.withLock { $0.frame } }
        set { handlers.withLock { $0.frame = newValue } }
    }

    /// Each decoded block of the peer's sound, on the play's thread.
    public var onRemoteAudio: (@Sendable (AudioFrame) -> Void)? {
        get { handlers.withLock { $0.audio } }
        set { handlers.withLock { $0.audio = newValue } }
    }

    /// The state now.
    public var state: CallState { core.withLock { $0.machine.state } }

    /// The call in progress (its id, peer, role, room), nil when there is none.
    public var currentCall: CallStateMachine.Call? { core.withLock { $0.machine.call } }

    /// Connects to the signaling and registers `options.userId` (the CallAPI's login and
    /// prepareForCall) and returns at once; `completion` gets nil once this side is
    /// `prepared`, or why not (on a thread of the kit's). The signaling address is
    /// `options.signalURL`, or the one the RTMP server announces (`/call` beside its
    /// `/line`). Refused while calling, connecting or connected ("busy", 604); in
    /// `prepared` it reports `prepared` again. After `failed`, it connects anew.
    public func prepareForCall(completion: @escaping @Sendable (LiveError?) -> Void) {
        enum Next { case refuse(LiveError), again, connect }
        let next: Next = core.withLock { core in
            if core.closed { return .refuse(LiveError(.isStopped, "the call kit is closed")) }
            if core.machine.isBusy { return .refuse(LiveError(.alreadyOpen, "busy: in a call (\(core.machine.state.name))")) }
            if core.preparing { return .refuse(LiveError(.alreadyOpen, "prepareForCall is already under way")) }
            if core.machine.state == .prepared, core.client != nil { return .again }
            core.preparing = true
            return .connect
        }
        switch next {
        case .refuse(let error): return completion(error)
        case .again:
            feed(.registered)
            return completion(nil)
        case .connect:
            Thread.detachNewThread { [self] in
                let error = connectAndRegister(completion: completion)
                if let error {
                    core.withLock { $0.preparing = false }
                    completion(error)
                }
            }
        }
    }

    /// Calls `remoteUserId` (the CallAPI's call), with a fresh callId and private room:
    /// only in `prepared`; throws 604 (busy) while calling, connecting or connected, 3
    /// before prepareForCall, 4 for a user id that cannot be one.
    public func call(_ remoteUserId: String, audioOnly: Bool = false) throws(LiveError) {
        let started = ContinuousClock.now
        if let refusal = feed(.call(remoteUserId: remoteUserId, audioOnly: audioOnly, callId: UUID().uuidString,
                                    roomId: CallStreams.newRoomId()), before: { $0.callStarted = started }) {
            throw refusal
        }
    }

    /// Withdraws the invitation this side sent (the CallAPI's cancelCall): `prepared`
    /// with localCancelled; the callee sees remoteCancelled. Nothing without one.
    public func cancelCall() { feed(.cancel) }

    /// Takes the invitation that came in (the CallAPI's accept): `connecting` with
    /// localAccepted; throws 4 when there is none.
    public func accept() throws(LiveError) {
        let now = ContinuousClock.now
        if let refusal = feed(.accept, before: { $0.accepted = now }) { throw refusal }
    }

    /// Refuses the invitation that came in (the CallAPI's reject), with a reason for the
    /// caller (its rejectReason): `prepared` with localRejected. Nothing without one.
    public func reject(reason: String? = nil) { feed(.reject(reason: reason)) }

    /// Ends the call (the CallAPI's hangup), with a reason for the peer (hangupReason):
    /// `prepared` with localHangup. Before an answer it cancels (caller) or rejects (callee).
    public func hangup(reason: String? = nil) { feed(.hangup(reason: reason)) }

    /// Mutes (or unmutes) this side's microphone (its stream carries silence); the peer
    /// gets peerMicMuted / peerMicUnmuted (PlanetKit's muteMyAudio). Only during a call.
    public func muteMyAudio(_ muted: Bool) { feed(.mute(muted)) }

    /// Holds (or resumes) the call: this side's push sends black and silence, and both
    /// sides report peerHeld / peerUnheld (PlanetKit's hold / unhold). Only during a call.
    public func hold(_ held: Bool) { feed(.hold(held)) }

    /// The figures of the call now (or of the last one).
    public var stats: CallStats {
        let (stats, hoster, guest) = core.withLock { ($0.stats, $0.hoster, $0.guest) }
        var now = stats
        if let hoster { now.local = hoster.pipelineStats }
        if let guest { now.remote = guest.stats }
        return now
    }

    /// Hangs up if in a call, unregisters and stops (the CallAPI's deinitialize):
    /// `idle`. Returns at once; `completion` runs on a thread of its own once all has stopped.
    public func close(completion: @escaping @Sendable () -> Void = {}) {
        feed(.close)
        core.withLock { $0.closed = true }
        Thread.detachNewThread { [self] in
            // What close fed (the hangup) goes out first, even when another thread (a
            // handler that called close) is still carrying it out.
            let deadline = ContinuousClock.now + .seconds(1)
            while core.withLock({ $0.draining }), ContinuousClock.now < deadline { Thread.sleep(forTimeInterval: 0.002) }
            let (client, loop, hoster, guest, timers) = core.withLock { core in
                defer {
                    core.client = nil
                    core.loop = nil
                    core.hoster = nil
                    core.guest = nil
                    core.sink = nil
                    core.timers = [:]
                }
                return (core.client, core.loop, core.hoster, core.guest, core.timers)
            }
            timers.values.forEach { $0.cancel() }
            Self.stop(hoster: hoster, guest: guest)
            _ = mediaStops.wait(timeout: .now() + 6)
            if let client {
                client.onClose = nil
                client.disconnect()
            }
            if let loop {
                // Let the hangup and the close frame go out before the loop stops.
                let flushed = DispatchSemaphore(value: 0)
                if loop.execute({ flushed.signal() }) { _ = flushed.wait(timeout: .now() + 1) }
                loop.shutdown()
            }
            completion()
        }
    }

    // MARK: - the machine

    /// Feeds `input` to the machine (after `before` changes the kit's own fields, under
    /// the same lock) and carries out what comes out, in order; returns the refusal.
    @discardableResult
    private func feed(_ input: CallStateMachine.Input, before: (inout Core) -> Void = { _ in }) -> LiveError? {
        let (refusal, drains): (LiveError?, Bool) = core.withLock { core in
            let outputs = core.machine.handle(input)
            var refusal: LiveError?
            var queued: [CallStateMachine.Output] = []
            for output in outputs {
                if case .refused(let code, let text) = output { refusal = LiveError(code, text) } else { queued.append(output) }
            }
            if refusal == nil { before(&core) }
            return (refusal, Self.enqueue(queued, in: &core))
        }
        if drains { drain() }
        return refusal
    }

    /// Reports an event of the media (the own push's first picture) in order with the
    /// machine's outputs.
    private func report(_ event: CallSessionEvent) {
        if core.withLock({ Self.enqueue([.event(event)], in: &$0) }) { drain() }
    }

    /// Queues `outputs` (under the lock); true when the calling thread is to carry out the
    /// queue (nobody else is at it).
    private static func enqueue(_ outputs: [CallStateMachine.Output], in core: inout Core) -> Bool {
        core.queue += outputs
        guard !core.draining, !core.queue.isEmpty else { return false }
        core.draining = true
        return true
    }

    private func drain() {
        while let output = core.withLock({ core -> CallStateMachine.Output? in
            guard !core.queue.isEmpty else {
                core.draining = false
                return nil
            }
            return core.queue.removeFirst()
        }) {
            execute(output)
        }
    }

    private func execute(_ output: CallStateMachine.Output) {
        switch output {
        case .state(let change):
            record(change)
            handlers.withLock { $0.state }?(change)
        case .event(let event):
            if case .remoteFirstFrame = event { recordFirstRemote() }
            if case .remoteFirstAudio = event, currentCall?.audioOnly == true { recordFirstRemote() }
            handlers.withLock { $0.event }?(event)
        case .send(let message):
            send(message)
        case .startTimer(let timer, let milliseconds, let callId):
            core.withLock { core in
                core.timers[timer]?.cancel()
                core.timers[timer] = core.loop?.schedule(after: .milliseconds(milliseconds)) { [weak self] in
                    self?.feed(.timerFired(timer, callId: callId))
                }
            }
        case .stopTimer(let timer):
            core.withLock { $0.timers.removeValue(forKey: timer) }?.cancel()
        case .startMedia(let media, let audioOnly):
            startMedia(media, audioOnly: audioOnly)
        case .stopMedia:
            let (hoster, guest) = core.withLock { core in
                defer {
                    core.hoster = nil
                    core.guest = nil
                    core.sink = nil
                    core.mediaCallId = nil
                }
                if let hoster = core.hoster { core.stats.local = hoster.pipelineStats }
                if let guest = core.guest { core.stats.remote = guest.stats }
                return (core.hoster, core.guest)
            }
            mediaStops.enter()
            Thread.detachNewThread { [mediaStops] in
                Self.stop(hoster: hoster, guest: guest)
                mediaStops.leave()
            }
        case .setLocalAudio(let enabled):
            let hoster = core.withLock { core in
                core.audioEnabled = enabled
                return core.hoster
            }
            hoster?.setLocalAudioEnable(enabled)
        case .setHold(let held):
            let hoster = core.withLock { core in
                core.held = held
                if !held { core.audioEnabled = true }
                return core.hoster
            }
            hoster?.setLocalVideoEnable(!held)
            hoster?.setLocalAudioEnable(!held)
        case .refused:
            break
        }
    }

    private static func stop(hoster: Hoster?, guest: Guest?) {
        hoster?.stopPush()
        guest?.stopPlay()
        _ = try? hoster?.wait(seconds: 5)
    }

    // MARK: - stats

    private func record(_ change: CallStateChange) {
        let now = ContinuousClock.now
        core.withLock { core in
            switch change.state {
            case .calling:
                if change.reason == .remoteVideoCall || change.reason == .remoteAudioCall { core.callStarted = nil }
                core.stats.setupMs = nil
                core.stats.acceptToFirstFrameMs = nil
                core.firstPublish = false
            case .connecting:
                if change.reason == .remoteAccepted || core.accepted == nil { core.accepted = now }
            case .connected:
                core.stats.connectedCalls += 1
                if let started = core.callStarted { core.stats.setupMs = Self.milliseconds(now - started) }
            case .prepared, .idle, .failed:
                if change.reason != .none {
                    core.stats.endedReason = change.reason
                    core.stats.endedEventReason = change.eventReason
                }
                core.callStarted = nil
                core.accepted = nil
            }
        }
    }

    private func recordFirstRemote() {
        let now = ContinuousClock.now
        core.withLock { core in
            if core.stats.acceptToFirstFrameMs == nil, let accepted = core.accepted {
                core.stats.acceptToFirstFrameMs = Self.milliseconds(now - accepted)
            }
        }
    }

    private static func milliseconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
    }
}

// MARK: - signaling

extension CallSession {
    /// Finds the signaling, connects and registers; feeds `registered` and calls
    /// `completion` once registered. Returns the error when it fails before the connect
    /// (the completion is then the caller's to call). Blocks (discovery): its own thread.
    private func connectAndRegister(completion: @escaping @Sendable (LiveError?) -> Void) -> LiveError? {
        if let problem = CallLimits().userIdProblem(options.userId) { return LiveError(.invalidParams, problem) }
        let url: String
        do { url = try Self.signalURL(options) } catch { return error }
        let loop: EventLoop
        do {
            loop = try EventLoop(name: "liveline-call")
        } catch {
            return LiveError(.exception, "cannot start the call's event loop: \(error)")
        }
        loop.start()
        let client = CallClient(url: url, loop: loop, heartbeatInterval: .seconds(5))
        let old = core.withLock { core -> (CallClient?, EventLoop?)? in
            // Closed meanwhile: nothing is kept.
            if core.closed { return nil }
            defer {
                core.client = client
                core.loop = loop
            }
            return (core.client, core.loop)
        }
        guard let old else {
            Thread.detachNewThread { loop.shutdown() }
            return LiveError(.isStopped, "the call kit was closed during prepareForCall")
        }
        if let oldClient = old.0 {
            oldClient.onClose = nil
            oldClient.disconnect()
        }
        if let oldLoop = old.1 { Thread.detachNewThread { oldLoop.shutdown() } }
        client.onEvent = { [weak self, weak client] event in
            guard let self, let client else { return }
            self.received(event, on: client)
        }
        client.onClose = { [weak self, weak client] code, reason in
            guard let self, let client else { return }
            self.lost(client, "the call signaling at \(url) closed (\(code)\(reason.isEmpty ? "" : " \(reason)"))")
        }
        let failed: @Sendable (LiveError) -> Void = { [weak self] error in
            self?.core.withLock { $0.preparing = false }
            client.onClose = nil
            client.disconnect()
            completion(error)
        }
        client.connect { [weak self] result in
            if case .failure(let error) = result {
                return failed(LiveError(.networkError, "connecting to \(url) failed: \(error)"))
            }
            guard let self else { return failed(LiveError(.isStopped, "the call kit was released")) }
            self.fetchToken { token, error in
                if let error { return failed(error) }
                client.register(userId: self.options.userId, token: token) { reply in
                    guard reply.liveCode == .ok else {
                        let code = reply.liveCode ?? .unknown
                        return failed(LiveError(code, "registering \(self.options.userId) at \(url): \(reply.message ?? code.message)",
                                                isRefusal: true))
                    }
                    guard !self.core.withLock({ $0.closed }) else {
                        return failed(LiveError(.isStopped, "the call kit was closed during prepareForCall"))
                    }
                    self.core.withLock { $0.preparing = false }
                    self.feed(.registered)
                    completion(nil)
                }
            }
        }
        return nil
    }

    /// The signaling URL: as given, or the RTMP server's announced one with `/call` for `/line`.
    static func signalURL(_ options: Options) throws(LiveError) -> String {
        if let given = options.signalURL { return given }
        do {
            let line = try LineServer.discover(rtmp: options.server)
            var url = line.signalURL
            if url.hasSuffix("/line") { url.removeLast("/line".count) }
            return url + "/call"
        } catch {
            throw LiveError(.networkError, "finding the call signaling: \(error)")
        }
    }

    /// A token from the provider (nil without one); on a task's thread.
    private func fetchToken(_ completion: @escaping @Sendable (String?, LiveError?) -> Void) {
        guard let provider = options.tokenProvider else { return completion(nil, nil) }
        Task(executorPreference: ProviderExecutor.shared) { [weak self] in
            do {
                let issued = try await provider()
                self?.core.withLock { $0.token = issued }
                completion(issued.token, nil)
            } catch {
                completion(nil, LiveError(.authFailed, "the token provider failed: \(error)"))
            }
        }
    }

    private func received(_ event: CallEvent, on client: CallClient) {
        guard core.withLock({ $0.client === client }) else { return }
        switch event.event {
        case .message:
            if let message = event.call { feed(.received(message)) }
        case .callMedia:
            if let media = CallMedia(event: event) { feed(.callMedia(media)) }
        case .peerGone:
            if let callId = event.callId { feed(.peerGone(callId: callId, reason: event.reason ?? "networkUnstable")) }
        case .tokenWillExpire:
            renewToken(on: client)
        case .tokenExpired:
            feed(.signalingLost(reason: "the token expired: \(event.message ?? "212")"))
        case .reply:
            break
        }
    }

    /// tokenWillExpire: a fresh token from the provider goes out as renewToken (not one
    /// that is the same again or names another user; the old one then stays until it expires).
    private func renewToken(on client: CallClient) {
        guard let provider = options.tokenProvider else { return }
        Task(executorPreference: ProviderExecutor.shared) { [weak self] in
            guard let issued = try? await provider(), let self else { return }
            let usable = self.core.withLock { core -> Bool in
                guard let current = core.token else { return true }
                return issued.token != current.token && issued.uid == current.uid
            }
            guard usable else { return }
            client.renewToken(issued.token) { [weak self] reply in
                if reply.liveCode == .ok { self?.core.withLock { $0.token = issued } }
            }
        }
    }

    private func lost(_ client: CallClient, _ reason: String) {
        let current = core.withLock { core -> Bool in
            guard core.client === client else { return false }
            core.client = nil
            return true
        }
        if current { feed(.signalingLost(reason: reason)) }
    }

    /// Sends a message of the machine, stamped now; a refusal goes back in as `sendFailed`.
    private func send(_ message: CallMessage) {
        var stamped = message
        stamped.timestamp = Int64(Date().timeIntervalSince1970 * 1000)
        guard let client = core.withLock({ $0.client }) else {
            feed(.sendFailed(callId: message.callId, action: message.action, code: LiveCode.networkDisconnected.rawValue,
                             message: "the call signaling is not connected"))
            return
        }
        client.send(message: stamped) { [weak self] reply in
            guard let code = reply.code, code != 0 else { return }
            self?.feed(.sendFailed(callId: message.callId, action: message.action, code: code,
                                   message: reply.message ?? LiveCode(rawValue: code)?.message ?? "refused"))
        }
    }
}

// MARK: - media

extension CallSession {
    /// Publishes this side (a `Hoster`, audio mode for an audio-only call) and plays the
    /// peer (a `Guest`) on the call's server; what fails ends the call (joinRTCFailed).
    private func startMedia(_ media: CallMedia, audioOnly: Bool) {
        let server = options.server
        let app = server.app.isEmpty ? "call" : server.app
        let push = RTMPURL(host: server.host, port: server.port, app: app, streamName: media.publishStream, query: media.publishQuery)
        let play = RTMPURL(host: server.host, port: server.port, app: app, streamName: media.playStream, query: media.playQuery)
        var hosterOptions = Hoster.Options()
        hosterOptions.configuration = options.local
        if audioOnly { hosterOptions.livingMediaMode = .audio }
        hosterOptions.push.bitrate = BitrateController.Settings(minKbps: min(200, options.local.bitrateKbps),
                                                               maxKbps: options.local.bitrateKbps)
        hosterOptions.tokenProvider = options.tokenProvider
        var guestOptions = Guest.Options()
        guestOptions.tokenProvider = options.tokenProvider
        let callId = media.callId
        do {
            let hoster = try Hoster(options: hosterOptions)
            let guest = Guest(options: guestOptions)
            let sink = audioOnly ? nil : RemoteFrames { [weak self] frame in self?.remoteFrame(frame) }
            let (audioEnabled, held) = core.withLock { core in
                core.hoster = hoster
                core.guest = guest
                core.sink = sink
                core.mediaCallId = callId
                core.firstPublish = false
                return (core.audioEnabled, core.held)
            }
            if held { hoster.setLocalVideoEnable(false) }
            if held || !audioEnabled { hoster.setLocalAudioEnable(false) }
            hoster.onEvent = { [weak self] event in self?.hosterEvent(event, callId: callId) }
            guest.onEvent = { [weak self] event in self?.guestEvent(event, callId: callId) }
            guest.onAudio = { [weak self] frame in self?.handlers.withLock { $0.audio }?(frame) }
            try hoster.startPush(url: push)
            try guest.startPlay(url: play, sink: sink, play: options.play)
        } catch {
            feed(.mediaFailed(callId: callId, reason: "\(error)"))
        }
    }

    private func hosterEvent(_ event: HosterEvent, callId: String) {
        switch event {
        case .firstLocalVideoFrame:
            if isMedia(of: callId) { report(.captureFirstLocalVideoFrame) }
        case .ok:
            let first = core.withLock { core -> Bool in
                guard core.mediaCallId == callId, !core.firstPublish else { return false }
                core.firstPublish = true
                return true
            }
            if first, currentCall?.audioOnly == false { report(.publishFirstLocalVideoFrame) }
        case .failed(let code):
            feed(.mediaFailed(callId: callId, reason: "the push failed: code \(code.rawValue) (\(code.message))"))
        default:
            break
        }
    }

    private func guestEvent(_ event: GuestEvent, callId: String) {
        switch event {
        case .firstFrame(let width, let height):
            feed(.remoteFirstFrame(callId: callId, width: width, height: height))
        case .firstAudio:
            feed(.remoteFirstAudio(callId: callId))
        case .buffering(0), .reconnecting, .closed:
            feed(.remoteMediaStalled(callId: callId))
        case .buffering(100):
            feed(.remoteMediaResumed(callId: callId))
        default:
            break
        }
    }

    private func isMedia(of callId: String) -> Bool { core.withLock { $0.mediaCallId == callId } }

    private func remoteFrame(_ frame: VideoFrame) {
        handlers.withLock { $0.frame }?(frame)
    }
}

/// The peer's pictures to `onRemoteFrame` (the play's sink, at the stream's own size).
/// The kit holds it while the call's play runs (the guest holds its sink weakly).
private final class RemoteFrames: GuestVideoSink, Sendable {
    private let deliver: @Sendable (VideoFrame) -> Void
    init(_ deliver: @escaping @Sendable (VideoFrame) -> Void) { self.deliver = deliver }
    var size: (width: Int, height: Int)? { nil }
    func render(_ frame: VideoFrame) { deliver(frame) }
}
