import Foundation
import LiveCore
import LiveLine
import Synchronization

/// What reaches a call run's loop, from the kit's threads, stdin and the signals.
enum CallNote: Sendable {
    /// A state change; with a change to `prepared`, `failed` or `idle`, the kit's figures
    /// as it was made (a next call would reset them before the loop could read them).
    case state(CallStateChange, CallStats?)
    case event(CallSessionEvent)
    /// A line typed on stdin.
    case command(String)
    case stdinClosed
    /// Ctrl-C, SIGTERM, or stdout's reader gone: end the run.
    case stop
    /// A listener's registration after the signaling was lost: nil once registered again.
    case registered(LiveError?)
}

/// The notes waiting for the run's loop, and the wake-up for each.
final class CallInbox: Sendable {
    private let notes = Mutex<[CallNote]>([])
    private let posted = DispatchSemaphore(value: 0)
    private let stop = Mutex(false)

    func post(_ note: CallNote) {
        if case .stop = note { stop.withLock { $0 = true } }
        notes.withLock { $0.append(note) }
        posted.signal()
    }

    /// A `.stop` has been posted (seen before the loop runs: while registering).
    var stopRequested: Bool { stop.withLock { $0 } }

    /// The notes so far, waiting up to `seconds` for the first.
    func take(waiting seconds: Double) -> [CallNote] {
        _ = posted.wait(timeout: .now() + max(0, seconds))
        return notes.withLock { notes in
            defer { notes = [] }
            return notes
        }
    }
}

/// Runs one `liveline call`: registers, then calls (`--to`) or answers (`--listen`),
/// turning the kit's states, stdin and the timers into the next step, on one thread.
final class CallRun {
    private let options: CallOptions
    private let session: CallSession
    private let report: CallReport
    private let inbox = CallInbox()
    private let started = Clock.monotonicMicros()

    /// The state the last change reported.
    private var state = CallState.idle
    /// The call under way: its number, peer and id, when it connected.
    private var callIndex = 0
    private var peer = ""
    private var callId = ""
    private var connectedAt: UInt64?
    /// This side has hung up the call under way (the duration, Ctrl-C).
    private var endRequested = false
    /// The figures at the last tick, and when it was.
    private var previous = CallStats()
    private var previousTime: UInt64 = 0
    private var records: [CallRecord] = []
    /// An invitation waits for `accept` / `reject` on stdin.
    private var answerPending = false
    private var stdinOpen = true
    /// The run is ending: no new call; out once none is under way.
    private var stopping = false
    /// The exit status so far.
    private var status = ExitStatus.ok
    /// A failure that ends the run (the signaling lost, a call that could not start).
    private var failure: Error?
    /// A listener whose signaling was lost registers again at `registerAt`; `registerTries`
    /// so far since it was last registered.
    private var registerAt: UInt64?
    private var registerTries = 0
    private var registering = false
    /// Registrations tried after the signaling was lost, 2 s × 1.5ⁿ apart (at most 30 s),
    /// before a listener gives up.
    static let registerRetries = 10

    init(options: CallOptions) {
        self.options = options
        session = CallSession(options: options.session)
        report = CallReport(json: options.json, toStandardError: options.toStandardError)
    }

    private var isCaller: Bool {
        if case .call = options.role { return true }
        return false
    }

    private var manualAnswers: Bool { options.role == .listen(accept: .manual) }

    private static let inCall: Set<CallState> = [.calling, .connecting, .connected]

    func run() throws -> Int32 {
        // Printed by the loop as it takes them: a stats line never follows a call's end.
        let inbox = inbox
        session.onStateChanged = { [weak session] change in
            let ending = [.prepared, .failed, .idle].contains(change.state)
            inbox.post(.state(change, ending ? session?.stats : nil))
        }
        session.onEvent = { inbox.post(.event($0)) }
        let signals = StopSignals { inbox.post(.stop) }
        defer { withExtendedLifetime(signals) {} }
        // `| head -2` has what it wanted: the run ends as if stopped.
        if options.json, !options.toStandardError { CommandOutput.standardOutput.whenReaderGone { inbox.post(.stop) } }

        switch prepare() {
        case .ready:
            break
        case .stopped:
            // Ctrl-C while registering: nothing was asked that failed.
            close()
            report.summary([], seconds: elapsed, error: nil)
            return ExitStatus.ok
        case .failed(let error):
            report.summary([], seconds: elapsed, error: error)
            close()
            throw error
        }
        state = .prepared
        // The registration's own state line first.
        for note in inbox.take(waiting: 0) { handle(note) }
        readCommands()
        switch options.role {
        case .listen:
            report.note("\(options.session.userId) is listening for calls")
        case .call:
            startNextCall()
        }
        loop()
        close()
        report.summary(records, seconds: elapsed, error: failure)
        if let failure { throw failure }
        return status
    }

    private var elapsed: Double { Double(Clock.monotonicMicros() - started) / 1e6 }

    /// How the registration went.
    private enum Preparation {
        case ready, stopped
        case failed(Error)
    }

    /// Registers with the call signaling, or stops waiting on Ctrl-C.
    private func prepare() -> Preparation {
        let done = DispatchSemaphore(value: 0)
        let outcome = Mutex<LiveError?>(nil)
        session.prepareForCall { error in
            outcome.withLock { $0 = error }
            done.signal()
        }
        // The kit's own connect and register timeouts come first; this is a last resort.
        let deadline = DispatchTime.now() + 30
        while done.wait(timeout: .now() + 0.1) == .timedOut {
            if inbox.stopRequested { return .stopped }
            if DispatchTime.now() >= deadline {
                return .failed(LiveError(.networkError, "the call signaling did not answer the registration within 30 s"))
            }
        }
        return outcome.withLock { $0 }.map { .failed($0) } ?? .ready
    }

    /// Stops the kit (hanging up a call still under way, its media stopped and their
    /// files written), at most 12 s.
    private func close() {
        let closed = DispatchSemaphore(value: 0)
        session.close { closed.signal() }
        _ = closed.wait(timeout: .now() + 12)
    }

    /// Stdin's lines, as notes, on a thread of their own.
    private func readCommands() {
        let inbox = inbox
        Thread.detachNewThread {
            while let line = readLine() { inbox.post(.command(line)) }
            inbox.post(.stdinClosed)
        }
    }

    /// Until the run is over: the notes as they come, the timers every 0.1 s.
    private func loop() {
        // Ending a call waits at most this long for the kit to report its end.
        var giveUpAt: UInt64?
        while true {
            for note in inbox.take(waiting: 0.1) { handle(note) }
            let now = Clock.monotonicMicros()
            // `--y4m - | ffplay -` closed: the run ends as if stopped (the play's own
            // writes fail quietly inside the kit).
            if options.toStandardError, !stopping, Self.standardOutputClosed() { stopping = true }
            registerIfDue(now)
            tick(now)
            if stopping {
                guard Self.inCall.contains(state) else { return }
                if giveUpAt == nil {
                    giveUpAt = now + 5_000_000
                    endCall(reason: nil)
                }
                if let giveUpAt, now >= giveUpAt { return }
            } else if !isCaller, let duration = options.duration, elapsed >= duration {
                stopping = true
            }
        }
    }

    /// Whether standard output is a pipe whose reader has gone (poll says POLLERR).
    private static func standardOutputClosed() -> Bool {
        var descriptor = pollfd(fd: STDOUT_FILENO, events: Int16(POLLOUT), revents: 0)
        return poll(&descriptor, 1, 0) == 1 && descriptor.revents & Int16(POLLERR) != 0
    }

    private func handle(_ note: CallNote) {
        switch note {
        case .state(let change, let stats):
            report.state(change)
            changed(change, stats: stats)
        case .event(let event):
            report.event(event, answer: manualAnswers)
            received(event)
        case .command(let line): command(line)
        case .stdinClosed:
            stdinOpen = false
            if manualAnswers, answerPending { answer(accept: false, reason: "no answer") }
        case .stop:
            stopping = true
        case .registered(let error):
            registered(error)
        }
    }

    private func changed(_ change: CallStateChange, stats: CallStats?) {
        let before = state
        state = change.state
        if let id = change.info["callId"] { callId = id }
        if let other = CallReport.peer(of: change) { peer = other }
        switch change.state {
        case .calling where !Self.inCall.contains(before):
            // A new call: the caller's own (numbered in startNextCall) or an incoming one.
            if !isCaller { callIndex += 1 }
            (connectedAt, endRequested, previous) = (nil, false, CallStats())
        case .connected:
            connectedAt = Clock.monotonicMicros()
            (previous, previousTime) = (session.stats, connectedAt!)
        case .prepared, .failed, .idle:
            answerPending = false
            if Self.inCall.contains(before) { ended(change, stats: stats ?? session.stats) }
            if change.state == .failed { signalingLost(change) }
        default:
            break
        }
    }

    /// The signaling is gone: no call can come or go. A caller's run ends (1); a
    /// listener registers again, as a push reconnects, until its tries run out.
    private func signalingLost(_ change: CallStateChange) {
        let why = change.eventReason.isEmpty ? "the call signaling failed (\(change.reason.name))" : change.eventReason
        guard !isCaller, !stopping, registerTries < Self.registerRetries else {
            failure = failure ?? LiveError(.networkDisconnected, why)
            stopping = true
            return
        }
        let delay = min(30, 2 * pow(1.5, Double(registerTries)))
        registerTries += 1
        registerAt = Clock.monotonicMicros() + UInt64(delay * 1e6)
        report.registering(try: registerTries, of: Self.registerRetries, inSeconds: delay, why: why)
    }

    /// Registers again once `registerAt` has come (the answer comes as `.registered`).
    private func registerIfDue(_ now: UInt64) {
        guard let due = registerAt, now >= due, !registering, !stopping else { return }
        (registerAt, registering) = (nil, true)
        let inbox = inbox
        session.prepareForCall { inbox.post(.registered($0)) }
    }

    private func registered(_ error: LiveError?) {
        registering = false
        guard let error else {
            registerTries = 0
            report.note("\(options.session.userId) is registered again and listening")
            return
        }
        // Turned down (the user id taken meanwhile, a token refused): no point in trying again.
        if error.isRefusal || registerTries >= Self.registerRetries {
            failure = error
            stopping = true
        } else {
            signalingLost(CallStateChange(state: .failed, reason: .none, eventReason: "\(error)"))
        }
    }

    /// A call is over: its record, its summary, and for a caller the next call or the end.
    private func ended(_ change: CallStateChange, stats: CallStats) {
        var stats = stats
        // The play may be gone with the call: keep the figures of the last second.
        if stats.remote.frames == 0, stats.remote.audioFrames == 0 { stats.remote = previous.remote }
        let connectedSeconds = connectedAt.map { Double(Clock.monotonicMicros() - $0) / 1e6 } ?? 0
        let record = CallRecord(index: callIndex, peer: peer, callId: callId, connected: connectedAt != nil,
                                connectedSeconds: connectedSeconds, stats: stats, state: change.state,
                                reason: change.reason, eventReason: change.eventReason)
        records.append(record)
        report.callSummary(record)
        connectedAt = nil
        guard case .call(_, _, let calls) = options.role else { return }
        switch record.callerOutcome {
        case .refused:
            status = ExitStatus.refused
            stopping = true
        case .failed:
            status = ExitStatus.failure
            stopping = true
        case .done:
            if callIndex >= calls { stopping = true }
        }
        if !stopping, change.state == .prepared { startNextCall() }
    }

    private func startNextCall() {
        guard case .call(let peer, let audioOnly, _) = options.role else { return }
        callIndex += 1
        (self.peer, callId, connectedAt, endRequested, previous) = (peer, "", nil, false, CallStats())
        do {
            try session.call(peer, audioOnly: audioOnly)
        } catch {
            failure = error
            stopping = true
        }
    }

    private func received(_ event: CallSessionEvent) {
        // An invitation while this side talks is the kit's to turn down (busy).
        guard case let .incomingCall(from, id, _, _) = event, state != .connecting, state != .connected else { return }
        (peer, callId) = (from, id)
        switch options.role {
        case .listen(.auto):
            answer(accept: true, reason: nil)
        case .listen(.manual):
            answerPending = true
            if !stdinOpen { answer(accept: false, reason: "no answer") }
        case .call:
            break  // a caller is busy with its own call: the kit turns others down
        }
    }

    private func answer(accept: Bool, reason: String?) {
        answerPending = false
        guard accept else {
            session.reject(reason: reason)
            return
        }
        do {
            try session.accept()
        } catch {
            printError("accept: \(error.detail)")
        }
    }

    /// Ends the call under way from this side: withdraws an invitation, rejects one
    /// that came in, hangs up one that was accepted.
    private func endCall(reason: String?) {
        guard Self.inCall.contains(state), !endRequested else { return }
        endRequested = true
        switch state {
        case .calling where isCaller: session.cancelCall()
        case .calling: session.reject(reason: reason ?? "hung up")
        default: session.hangup(reason: reason)
        }
    }

    /// The stats line once a second while connected, and the caller's --duration.
    private func tick(_ now: UInt64) {
        guard state == .connected, let connectedAt else { return }
        let connectedSeconds = Double(now - connectedAt) / 1e6
        if isCaller, let duration = options.duration, connectedSeconds >= duration {
            endCall(reason: nil)
            return
        }
        guard !endRequested, now - previousTime >= 1_000_000 else { return }
        let stats = session.stats
        report.tick(stats, previous: previous, seconds: Double(now - previousTime) / 1e6,
                    connectedSeconds: connectedSeconds, call: callIndex)
        (previous, previousTime) = (stats, now)
    }

    /// One line from stdin.
    private func command(_ line: String) {
        let words = line.split(separator: " ", maxSplits: 1).map(String.init)
        guard let verb = words.first else { return }
        let rest = words.count > 1 ? words[1].trimmingCharacters(in: .whitespaces) : ""
        let reason = rest.isEmpty ? nil : rest
        let during = Self.inCall.contains(state)
        switch verb {
        case "accept" where manualAnswers, "reject" where manualAnswers:
            guard answerPending else {
                printError("\(verb): there is no incoming call to answer")
                return
            }
            answer(accept: verb == "accept", reason: reason)
        case "hangup" where during:
            endRequested = false
            endCall(reason: reason)
        case "mute" where during, "unmute" where during:
            session.muteMyAudio(verb == "mute")
        case "hold" where during, "unhold" where during:
            session.hold(verb == "hold")
        case "hangup", "mute", "unmute", "hold", "unhold":
            printError("\(verb): not in a call")
        default:
            printError("commands: hangup [REASON] | mute | unmute | hold | unhold"
                       + (manualAnswers ? " | accept | reject [REASON]" : ""))
        }
    }
}
