import Foundation
import LiveCore
import LiveLine
import LiveMix
import LiveRTMP
import Synchronization

/// Runs one `liveline host` invocation: the pipeline, its sinks, Ctrl-C, and the
/// once-a-second report (JSON lines on stdout, or a status line on stderr).
struct HosterSession {
    let options: HosterOptions

    init(options: HosterOptions) throws {
        self.options = options
    }

    func run() throws -> Int32 {
        var kitOptions = Hoster.Options()
        kitOptions.configuration = options.configuration
        kitOptions.push = options.push
        kitOptions.linkMediaMode = options.linkMediaMode
        let report = StatsReport(json: options.jsonStats, configuration: options.configuration)
        let started = Clock.monotonicMicros()
        let elapsed = { Double(Clock.monotonicMicros() - started) / 1e6 }
        let hoster: Hoster
        let recording: RecordingSink?
        do {
            hoster = try Hoster(options: kitOptions)
            if let path = options.subBackground { try hoster.setVideoSubBackground(path: path) }
            recording = try options.record.map { try RecordingSink(path: $0) }
        } catch {
            report.failedAtStart(error, stats: PipelineStats(), push: nil, elapsed: elapsed())
            throw error
        }
        let (json, url) = (options.jsonStats, options.url)
        let progress = PushProgress()
        hoster.onEvent = { event in
            switch event {
            case .localAudioActive(let level, _): report.audioLevel.set(level)
            case .failed: progress.failed()
            default: break
            }
            if json {
                // The status figures are in the stats line.
                if case .status = event { return }
                printLine(hosterEventJSON(event))
            } else if let url {
                report.pushEvent(event, url: url)
            }
        }
        // `| head -2` has what it wanted: the run ends as if stopped.
        if json { CommandOutput.standardOutput.whenReaderGone { hoster.requestStop() } }
        if options.muted { hoster.setLocalAudioEnable(false) }
        hoster.onShareEvent = { event in
            if json {
                printLine(lineEventJSON(.share(event)))
            } else {
                report.note(lineEventText(.share(event), prefix: "share"))
            }
        }

        let signals = StopSignals { hoster.requestStop() }
        defer { withExtendedLifetime(signals) {} }

        // With a line, the push carries the lineKey that proves this hoster publishes the
        // line's stream (servers without tokens let only that publisher create the line).
        let pushURL = options.line == nil ? options.url : options.url.map(LineServer.hosterPushURL)
        let push: () -> HosterStatus? = { options.url == nil ? nil : hoster.pushStatus }
        func summary(error: Error?) {
            report.summary(hoster.pipelineStats, push: push(), elapsed: elapsed(), record: recording, error: error)
        }
        // The line's signaling is asked from the RTMP server before anything starts.
        let lineServer: LineServer?
        do {
            lineServer = try options.line.flatMap { line in try pushURL.map { try line.server(for: $0) } }
        } catch {
            report.failedAtStart(error, stats: PipelineStats(), push: nil, elapsed: elapsed())
            throw error
        }
        if !options.jsonStats, let url = options.url { report.note("pushing to \(url)") }
        do {
            // Returns at once; the connect's outcome comes as ok or failed, and capture
            // starts once it has connected.
            try hoster.startPush(url: pushURL, extraSinks: recording.map { [$0] } ?? [], frameLimit: options.frameLimit,
                                 audioLimit: options.audioLimit)
            while hoster.captureClockZeroWallMicros == nil, try !hoster.wait(seconds: 0.05) {}
        } catch {
            report.failedAtStart(error, stats: hoster.pipelineStats, push: push(), elapsed: elapsed(),
                                 reported: progress.hasFailed)
            throw error
        }
        report.note(Self.audioNote(hoster: hoster, configuration: options.configuration, muted: options.muted))
        // On a line, the wall-clock time of the capture clock's zero (audio sample 0): with a
        // co-host's beepHeard lines, the mouth-to-ear delay.
        if json, options.line != nil, let zero = hoster.captureClockZeroWallMicros {
            printLine(jsonLine(["event": "captureClock", "zeroWallMicros": Int(zero)]))
        }
        let lineFailure = LineFailure()
        var lineRole: HostLineRole?
        if let line = options.line, let lineServer {
            let role = HostLineRole(hoster: hoster, accept: options.accept, json: options.jsonStats, failure: lineFailure)
            role.start()
            lineRole = role
            try hoster.createLine(server: lineServer, liveId: line.liveId, userId: line.userId,
                                  userData: line.userData,
                                  liveInfo: options.liveInfo ?? Self.defaultLiveInfo(options, liveId: line.liveId, userId: line.userId))
        }
        HostCommands(hoster: hoster, line: lineRole?.accept == .manual ? lineRole : nil, report: report).start()
        defer {
            // The guests hear the line close before the process ends (2 s at most).
            let closed = DispatchSemaphore(value: 0)
            hoster.closeLine { closed.signal() }
            _ = closed.wait(timeout: .now() + 3)
        }
        var previous = hoster.pipelineStats
        var previousTime = started
        do {
            while try !hoster.wait(seconds: 1) {
                let now = Clock.monotonicMicros()
                let stats = hoster.pipelineStats
                report.tick(stats, previous: previous, push: push(), seconds: Double(now - previousTime) / 1e6,
                            elapsed: Double(now - started) / 1e6)
                previous = stats
                previousTime = now
            }
        } catch {
            // The push's retries ran out (or a sink failed): the summary still comes.
            summary(error: error)
            throw error
        }
        summary(error: nil)
        if let failure = lineFailure.failure {
            printError("liveline host: \(failure.message)")
            return failure.status
        }
        if let recording, let failure = recording.failure {
            // The push went on without it, but what was asked for was not done.
            printError("liveline host: recording to \(recording.path) stopped: \(failure)")
            return ExitStatus.failure
        }
        return ExitStatus.ok
    }
}

extension HosterSession {
    /// The startup line about the sound: what is sent, or that there is none.
    /// The anyRTC SDK's liveData for the living list when `--live-info` is not given: the pull
    /// URL without its query (no secrets), the live id as topic, orientation, audio
    /// mode and the hoster's user id. Strict JSON, keys sorted.
    static func defaultLiveInfo(_ options: HosterOptions, liveId: String, userId: String) -> String {
        let c = options.configuration
        let pull = options.url.map { "rtmp://\($0.host):\($0.port)/\($0.app)/\($0.streamName)" } ?? ""
        let info: [String: Any] = ["rtmpUrl": pull, "hlsUrl": "", "liveTopic": liveId, "isLiveLandscape": c.width > c.height ? 1 : 0,
                                   "isAudioLive": c.livingMediaMode == .audio ? 1 : 0, "hosterName": userId]
        let data = (try? JSONSerialization.data(withJSONObject: info, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    static func audioNote(hoster: Hoster, configuration c: HosterConfiguration, muted: Bool) -> String {
        guard let name = hoster.audioSourceName else { return "audio: none (video only)" }
        let layout = c.audioChannels == 2 ? "stereo" : "mono"
        let only = c.livingMediaMode == .audio ? "audio only (no video track): " : "audio: "
        return only + "\(name) as AAC \(c.audioBitrateKbps) kbit/s, \(c.audioSampleRate) Hz \(layout)"
            + (muted ? " (muted: silence until unmute)" : "")
    }
}

/// The hoster's commands on stdin: `mute`, `unmute`, `share SPEC [INFO]` and `unshare`
/// always, and the line's commands when applicants are answered by hand (`--accept manual`).
struct HostCommands {
    let hoster: Hoster
    let line: HostLineRole?
    let report: StatsReport

    func start() {
        let (hoster, line, report) = (hoster, line, report)
        Thread.detachNewThread {
            while let text = readLine() {
                let words = text.split(separator: " ", maxSplits: 1).map(String.init)
                guard let verb = words.first else { continue }
                let rest = words.count > 1 ? words[1].trimmingCharacters(in: .whitespaces) : ""
                switch verb {
                case "mute", "unmute":
                    guard hoster.audioSourceName != nil else {
                        printError("\(verb): this stream has no sound")
                        continue
                    }
                    let enabled = verb == "unmute"
                    hoster.setLocalAudioEnable(enabled)
                    report.audioSwitched(enabled)
                case "share":
                    // share SPEC [INFO]: the source, then the share's info for the room.
                    let parts = rest.split(separator: " ", maxSplits: 1).map(String.init)
                    guard let spec = parts.first else {
                        printError("share: name a source, such as share screen::99")
                        continue
                    }
                    do {
                        try hoster.startShare(source: spec, shareInfo: parts.count > 1 ? parts[1] : "")
                    } catch {
                        printError("share: \((error as? LiveError)?.detail ?? "\(error)")")
                    }
                case "unshare":
                    hoster.stopShare()
                default:
                    if let line, line.handle(verb, rest) { continue }
                    printError("commands: mute | unmute | share SPEC [INFO] | unshare" + (line == nil ? ""
                        : " | accept PEER | reject PEER | hangup PEER | say TEXT | barrage TEXT | template NAME | close"))
                }
            }
            line?.stdinClosed()
        }
    }
}

/// Why the co-host line could not be opened or was lost: the run then ends with an
/// error instead of going on without the line it was asked for.
final class LineFailure: Sendable {
    private let first = Mutex<(message: String, status: Int32)?>(nil)

    /// The first failure and its exit status.
    var failure: (message: String, status: Int32)? {
        first.withLock { $0 }
    }

    /// Keeps the first failure: `status` 3 when the line refused, 1 when it was lost.
    func record(_ message: String, status: Int32) {
        first.withLock { first in
            if first == nil { first = (message, status) }
        }
    }
}

/// The CLI hoster's side of the line: prints events, answers applicants per
/// `--accept`, and in manual mode reads commands from stdin.
struct HostLineRole {
    let hoster: Hoster
    let accept: HosterOptions.AcceptMode
    let json: Bool
    let failure: LineFailure
    /// Applications waiting for an answer on stdin (`--accept manual`).
    let answers = ManualAnswers()

    func start() {
        let (hoster, accept, json, failure, answers) = (hoster, accept, json, failure, answers)
        hoster.onLineEvent = { event in
            if json {
                printLine(lineEventJSON(event))
            } else if case .remoteAudioActive = event {
                // Twice a second per co-host: JSON lines only, as the local level.
            } else {
                printError(lineEventText(event))
            }
            // A line refused or lost ends the run with an error, never silently.
            switch event {
            case .lineResult(let code, let message) where code != .ok:
                failure.record("the co-host line was not opened: code \(code.rawValue) (\(message))", status: ExitStatus.refused)
                hoster.requestStop()
            case .authFailed(.authTimeout, let reason):
                failure.record("the co-host line ended the session: \(reason)", status: ExitStatus.refused)
                hoster.requestStop()
            case .lineClosed(.ok, _):
                break
            case .lineClosed(let code, let reason) where code == .networkDisconnected || code == .serverError:
                failure.record("the co-host line was lost: code \(code.rawValue) (\(reason))", status: ExitStatus.failure)
                hoster.requestStop()
            case .lineClosed(let code, let reason):
                failure.record("the co-host line ended the session: code \(code.rawValue) (\(reason))", status: ExitStatus.refused)
                hoster.requestStop()
            default:
                break
            }
            switch event {
            case .application(let peerId, _, _):
                switch accept {
                case .auto: hoster.acceptLine(peerId: peerId)
                case .none: hoster.rejectLine(peerId: peerId)
                case .manual:
                    if answers.ask(peerId) {
                        if !json { printError("  answer with: accept \(peerId) | reject \(peerId)") }
                    } else {
                        printError("liveline host: rejected \(peerId): stdin is closed, nobody can answer")
                        hoster.rejectLine(peerId: peerId)
                    }
                }
            case .applicationCancelled(_, let peerId, _):
                answers.answered(peerId)
            default:
                break
            }
        }
    }

    /// Runs a line command typed on stdin; false when `verb` is none.
    func handle(_ verb: String, _ rest: String) -> Bool {
        switch verb {
        case "accept":
            answers.answered(rest)
            hoster.acceptLine(peerId: rest)
        case "reject":
            answers.answered(rest)
            hoster.rejectLine(peerId: rest)
        case "hangup": hoster.hangupLine(peerId: rest)
        case "say": hoster.sendMessage(type: .normal, userName: "hoster", content: rest)
        case "barrage": hoster.sendMessage(type: .barrage, userName: "hoster", content: rest)
        case "close":
            hoster.closeLine()
            printError("closed the co-host line: every co-host left the mix; the push goes on")
        case "template":
            do {
                let template = try MixTemplate(parsing: rest)
                try hoster.setMixVideoModel(template)
                printError("template: the mix now uses \(template.name)")
            } catch {
                printError("template: \(error)")
            }
        default:
            return false
        }
        return true
    }

    /// stdin ended: no one can answer any more. Says so once, and turns down who waits
    /// and who comes.
    func stdinClosed() {
        for peerId in answers.closeStdin() { hoster.rejectLine(peerId: peerId) }
        printError("liveline host: stdin is closed: applicants are rejected from now on "
            + "(--accept auto or --accept none answer without stdin)")
    }
}

/// Applications waiting for an answer typed on stdin (`--accept manual`), and whether
/// stdin can still give one: once it is closed, applicants are turned down at once
/// instead of waiting for the server's timeout.
final class ManualAnswers: Sendable {
    private struct State {
        var waiting: [String] = []
        var stdinOpen = true
    }

    private let state = Mutex(State())

    /// An application came in: true when it is left to the person at stdin (and now
    /// waits), false when stdin is closed and it must be rejected.
    func ask(_ peerId: String) -> Bool {
        state.withLock { state in
            if state.stdinOpen { state.waiting.append(peerId) }
            return state.stdinOpen
        }
    }

    /// The application of `peerId` was answered or withdrawn.
    func answered(_ peerId: String) {
        state.withLock { $0.waiting.removeAll { $0 == peerId } }
    }

    /// stdin ended: the applications still waiting, to reject.
    func closeStdin() -> [String] {
        state.withLock { state in
            state.stdinOpen = false
            defer { state.waiting = [] }
            return state.waiting
        }
    }
}

/// Formats the hoster's figures for people (stderr) or programs (JSON lines on stdout).
struct StatsReport {
    let json: Bool
    let configuration: HosterConfiguration
    /// The latest local audio level (nil while muted or before the first).
    let audioLevel = LatestLevel()
    private let terminal = isatty(STDERR_FILENO) == 1

    init(json: Bool, configuration: HosterConfiguration) {
        self.json = json
        self.configuration = configuration
    }

    func tick(_ stats: PipelineStats, previous: PipelineStats, push: HosterStatus?, seconds: Double, elapsed: Double) {
        let fps = Double(stats.encoded - previous.encoded) / max(seconds, 1e-6)
        let kbps = Double(stats.bytes - previous.bytes) * 8 / 1000 / max(seconds, 1e-6)
        let audioKbps = Double(stats.audioBytes - previous.audioBytes) * 8 / 1000 / max(seconds, 1e-6)
        let hasAudio = stats.audioFramesCaptured > 0
        let audioOnly = self.audioOnly
        if json {
            printLine(jsonLine([
                "event": "stats", "time": elapsed, "frames": stats.encoded, "fps": fps, "bitrateKbps": kbps,
                "targetKbps": stats.bitrateKbps, "dropped": stats.dropped, "keyframes": stats.keyframes,
                "filterMs": stats.filterMsPerFrame, "encodeMs": stats.encodeMsPerFrame,
                "delayMs": push?.delayMilliseconds, "upstreamBytesPerSecond": push?.upstreamBytesPerSecond,
                "pushDropped": push?.droppedFrames, "reconnects": push?.reconnects,
                "queueBytes": push?.queuedBytes, "throughputKbps": push.map { Double($0.throughputBytesPerSecond) * 8 / 1000 },
                "congestionDropped": push?.congestionDroppedFrames, "abr": push?.abr,
                "audioBlocks": stats.audioFramesCaptured, "audioFrames": stats.audioFramesEncoded,
                "audioKbps": audioKbps, "audioLevel": audioLevel.value, "pushAudioDropped": push?.droppedAudioFrames,
            ]))
        } else {
            var line = audioOnly ? String(format: "%6.1fs", elapsed)
                : String(format: "%6.1fs  %5d frames  %5.1f fps  %6.0f kbit/s (target %d)  dropped %d  encode %.1f ms",
                         elapsed, stats.encoded, fps, kbps, stats.bitrateKbps, Self.dropped(stats, push),
                         stats.encodeMsPerFrame)
            if hasAudio {
                line += String(format: "  audio %.0f kbit/s", audioKbps)
                line += audioLevel.value.map { " level \($0)" } ?? " muted"
            }
            if let push {
                line += "  delay \(push.delayMilliseconds) ms"
                if push.reconnects > 0 { line += "  reconnects \(push.reconnects)" }
            }
            printError(terminal ? "\u{1B}[2K\r" + line : line, terminator: terminal ? "" : "\n")
        }
    }

    /// The sound was switched off or on (stdin `mute` / `unmute`).
    func audioSwitched(_ enabled: Bool) {
        if !enabled { audioLevel.set(nil) }
        if json {
            printLine(jsonLine(["event": "audio", "enabled": enabled]))
        } else {
            note(enabled ? "unmuted: the sound is sent again" : "muted: silence is sent in place of the sound")
        }
    }

    /// A line of its own on stderr (the status line, rewritten in place on a terminal,
    /// is cleared first so the two do not run together).
    func note(_ text: String) {
        printError(terminal ? "\u{1B}[2K\r" + text : text)
    }

    /// The push's events for people: where it publishes, a loss, a failure.
    func pushEvent(_ event: HosterEvent, url: RTMPURL) {
        switch event {
        case .ok: note("connected: publishing to \(url)")
        case .reconnecting(let times): note("the connection to \(url) was lost; reconnecting (try \(times))")
        case .failed(let code): note("the push to \(url) failed: code \(code.rawValue) (\(code.message))")
        case .localVideoViewChanged(let width, let height): note("the camera now captures \(width)x\(height)")
        case .status, .closed, .localAudioActive, .firstLocalVideoFrame: break  // the status line and the summary say it
        }
    }

    /// A run that never started (no source, no logo, no file, no server): the kit
    /// reported nothing, so a program reading the JSON lines still gets the failure
    /// (the anyRTC SDK's onRtmpStreamFailed) and a summary. People get the error alone.
    /// `reported`: the kit's own `failed` event has gone out (a first connect that failed).
    func failedAtStart(_ error: Error, stats: PipelineStats, push: HosterStatus?, elapsed: Double, reported: Bool = false) {
        guard json else { return }
        if !reported {
            printLine(jsonLine(["event": "failed", "code": ((error as? LiveError)?.code ?? .unknown).rawValue, "message": "\(error)"]))
        }
        // Nothing was recorded: no "record" names a file.
        summary(stats, push: push, elapsed: elapsed, record: nil, error: error)
    }

    /// The final figures; `record` names the file only when the recording did not fail,
    /// `error` is what ended the run. On stderr when stdout's reader has gone.
    /// `--mode audio`: there are no picture figures to give.
    private var audioOnly: Bool { configuration.livingMediaMode == .audio }

    func summary(_ stats: PipelineStats, push: HosterStatus?, elapsed: Double, record: RecordingSink?, error: Error?) {
        let audioOnly = self.audioOnly
        let kbps = elapsed > 0 ? Double(stats.bytes) * 8 / 1000 / elapsed : 0
        let recorded = record?.failure == nil ? record?.path : nil
        let recordError = record?.failure.map { "recording to \(record!.path) stopped: \($0)" }
        if json {
            let line = jsonLine([
                "event": "summary", "frames": stats.encoded, "seconds": elapsed,
                "fps": elapsed > 0 ? Double(stats.encoded) / elapsed : 0, "bitrateKbps": kbps, "bytes": stats.bytes,
                "width": audioOnly ? nil : configuration.width, "height": audioOnly ? nil : configuration.height,
                "mode": configuration.livingMediaMode.name, "dropped": stats.dropped,
                "keyframes": stats.keyframes, "filterMs": stats.filterMsPerFrame,
                "encodeMs": stats.encodeMsPerFrame, "record": recorded, "recordError": recordError,
                "targetKbps": stats.bitrateKbps, "pushDropped": push?.droppedFrames, "reconnects": push?.reconnects,
                "audioBlocks": stats.audioFramesCaptured, "audioFrames": stats.audioFramesEncoded,
                "audioBytes": stats.audioBytes, "pushAudioDropped": push?.droppedAudioFrames,
                "error": error.map { "\($0)" },
            ])
            if !printLine(line) { printError(line) }
        } else {
            if terminal { printError("") }
            var line = audioOnly
                ? String(format: "done: audio only, %.1fs", elapsed)
                : String(format: "done: %d frames of %dx%d in %.1fs (%.1f fps), %.0f kbit/s, %d dropped",
                         stats.encoded, configuration.width, configuration.height, elapsed,
                         elapsed > 0 ? Double(stats.encoded) / elapsed : 0, kbps, Self.dropped(stats, push))
            if stats.audioFramesEncoded > 0 {
                line += ", \(stats.audioFramesEncoded) AAC frames (\(stats.audioBytes) bytes)"
            }
            if let reconnects = push?.reconnects, reconnects > 0 { line += ", \(reconnects) reconnects" }
            if let recordError {
                line += ", \(recordError)"
            } else if let recorded {
                line += ", recorded to \(recorded)"
            }
            printError(line)
        }
    }

    /// Frames lost on the way, as the status line and the summary both count them:
    /// before the encoder (it fell behind) and by the push (congestion, while disconnected).
    private static func dropped(_ stats: PipelineStats, _ push: HosterStatus?) -> Int {
        stats.dropped + (push?.droppedFrames ?? 0)
    }
}

/// The latest local audio level, written on the audio thread and read by the status line.
final class LatestLevel: Sendable {
    private let level = Mutex<Int?>(nil)

    var value: Int? {
        level.withLock { $0 }
    }

    func set(_ value: Int?) {
        level.withLock { $0 = value }
    }
}

/// One push event as a JSON line: `{"event":"reconnecting","times":2}`.
func hosterEventJSON(_ event: HosterEvent) -> String {
    var line = jsonLine(["event": event.name])
    line.removeLast()
    for (key, value) in event.fields { line += "," + jsonLine([key: value]).dropFirst().dropLast() }
    return line + "}"
}

/// Whether the push reported `failed` (a first connect that failed reports it itself,
/// so the start's failure is not printed twice). Any thread.
final class PushProgress: Sendable {
    private let failedFlag = Mutex(false)

    func failed() { failedFlag.withLock { $0 = true } }
    var hasFailed: Bool { failedFlag.withLock { $0 } }
}
