import Foundation
import LiveCore
import LiveLine
import LiveMix
import LiveRTMP

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
        let hoster = try Hoster(options: kitOptions)
        let report = StatsReport(json: options.jsonStats, configuration: options.configuration)
        if options.jsonStats {
            hoster.onEvent = { event in
                switch event {
                case .ok, .closed: printLine(jsonLine(["event": event.name]))
                case .reconnecting(let times): printLine(jsonLine(["event": event.name, "times": times]))
                case .failed(let code): printLine(jsonLine(["event": event.name, "code": code.rawValue]))
                case .status: break  // its figures are in the stats line
                }
            }
        } else if let url = options.url {
            hoster.onEvent = { event in report.pushEvent(event, url: url) }
        }

        let signals = StopSignals { hoster.requestStop() }
        defer { withExtendedLifetime(signals) {} }

        let started = Clock.monotonicMicros()
        let extra: [EncodedVideoSink] = try options.record.map { [try RecordingSink(path: $0)] } ?? []
        // With a line, the push carries the lineKey that proves this hoster publishes the
        // line's stream (servers without tokens let only that publisher create the line).
        let pushURL = options.line == nil ? options.url : options.url.map(LineServer.hosterPushURL)
        // The line's signaling is asked from the RTMP server before anything starts.
        let lineServer = try options.line.flatMap { line in try pushURL.map { try line.server(for: $0) } }
        if !options.jsonStats, let url = options.url { report.note("pushing to \(url)") }
        try hoster.startPush(url: pushURL, extraSinks: extra, frameLimit: options.frameLimit)
        let lineFailure = LineFailure()
        if let line = options.line, let lineServer {
            HostLineRole(hoster: hoster, accept: options.accept, json: options.jsonStats, failure: lineFailure).start()
            try hoster.createLine(server: lineServer, liveId: line.liveId, userId: line.userId,
                                  userData: line.userData, liveInfo: options.liveInfo)
        }
        defer { hoster.closeLine() }
        var previous = hoster.pipelineStats
        var previousTime = started
        while try !hoster.wait(seconds: 1) {
            let now = Clock.monotonicMicros()
            let stats = hoster.pipelineStats
            report.tick(stats, previous: previous, push: options.url == nil ? nil : hoster.pushStatus,
                        seconds: Double(now - previousTime) / 1e6, elapsed: Double(now - started) / 1e6)
            previous = stats
            previousTime = now
        }
        report.summary(hoster.pipelineStats, push: options.url == nil ? nil : hoster.pushStatus,
                       elapsed: Double(Clock.monotonicMicros() - started) / 1e6, record: options.record)
        if let failure = lineFailure.message {
            printError("liveline host: \(failure)")
            return 1
        }
        return 0
    }
}

/// Why the co-host line could not be opened or was lost: the run then ends with an
/// error instead of going on without the line it was asked for.
final class LineFailure: @unchecked Sendable {
    // @unchecked: `text` is touched only while holding `lock`.
    private let lock = NSLock()
    private var text: String?

    var message: String? {
        lock.lock()
        defer { lock.unlock() }
        return text
    }

    /// Keeps the first failure.
    func record(_ message: String) {
        lock.lock()
        if text == nil { text = message }
        lock.unlock()
    }
}

/// The CLI hoster's side of the line: prints events, answers applicants per
/// `--accept`, and in manual mode reads commands from stdin.
struct HostLineRole {
    let hoster: Hoster
    let accept: HosterOptions.AcceptMode
    let json: Bool
    let failure: LineFailure

    func start() {
        let (hoster, accept, json, failure) = (hoster, accept, json, failure)
        let answers = ManualAnswers()
        hoster.onLineEvent = { event in
            if json { printLine(lineEventJSON(event)) } else { printError(lineEventText(event)) }
            // A line refused or lost ends the run with an error, never silently.
            switch event {
            case .lineResult(let code, let message) where code != .ok:
                failure.record("the co-host line was not opened: code \(code.rawValue) (\(message))")
                hoster.requestStop()
            case .disconnected(let reason), .authFailed(.authTimeout, let reason):
                failure.record("the co-host line was lost: \(reason)")
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
        guard accept == .manual else { return }
        Thread.detachNewThread {
            while let text = readLine() {
                let words = text.split(separator: " ", maxSplits: 1).map(String.init)
                guard let verb = words.first else { continue }
                let rest = words.count > 1 ? words[1].trimmingCharacters(in: .whitespaces) : ""
                switch verb {
                case "accept":
                    answers.answered(rest)
                    hoster.acceptLine(peerId: rest)
                case "reject":
                    answers.answered(rest)
                    hoster.rejectLine(peerId: rest)
                case "hangup": hoster.hangupLine(peerId: rest)
                case "say": hoster.sendMessage(userName: "hoster", content: rest)
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
                default: printError("commands: accept PEER | reject PEER | hangup PEER | say TEXT | template NAME | close")
                }
            }
            // No one can answer any more: say so once, and turn down who waits and who comes.
            for peerId in answers.closeStdin() { hoster.rejectLine(peerId: peerId) }
            printError("liveline host: stdin is closed: applicants are rejected from now on "
                + "(--accept auto or --accept none answer without stdin)")
        }
    }
}

/// Applications waiting for an answer typed on stdin (`--accept manual`), and whether
/// stdin can still give one: once it is closed, applicants are turned down at once
/// instead of waiting for the server's timeout.
final class ManualAnswers: @unchecked Sendable {
    // @unchecked: both fields are touched only while holding `lock`.
    private let lock = NSLock()
    private var waiting: [String] = []
    private var stdinOpen = true

    /// An application came in: true when it is left to the person at stdin (and now
    /// waits), false when stdin is closed and it must be rejected.
    func ask(_ peerId: String) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        if stdinOpen { waiting.append(peerId) }
        return stdinOpen
    }

    /// The application of `peerId` was answered or withdrawn.
    func answered(_ peerId: String) {
        lock.lock()
        waiting.removeAll { $0 == peerId }
        lock.unlock()
    }

    /// stdin ended: the applications still waiting, to reject.
    func closeStdin() -> [String] {
        lock.lock()
        defer { lock.unlock() }
        stdinOpen = false
        defer { waiting = [] }
        return waiting
    }
}

/// Formats the hoster's figures for people (stderr) or programs (JSON lines on stdout).
struct StatsReport {
    let json: Bool
    let configuration: HosterConfiguration
    private let terminal = isatty(STDERR_FILENO) == 1

    init(json: Bool, configuration: HosterConfiguration) {
        self.json = json
        self.configuration = configuration
    }

    func tick(_ stats: PipelineStats, previous: PipelineStats, push: HosterStatus?, seconds: Double, elapsed: Double) {
        let fps = Double(stats.encoded - previous.encoded) / max(seconds, 1e-6)
        let kbps = Double(stats.bytes - previous.bytes) * 8 / 1000 / max(seconds, 1e-6)
        if json {
            printLine(jsonLine([
                "event": "stats", "time": elapsed, "frames": stats.encoded, "fps": fps, "bitrateKbps": kbps,
                "targetKbps": stats.bitrateKbps, "dropped": stats.dropped, "keyframes": stats.keyframes,
                "filterMs": stats.filterMsPerFrame, "encodeMs": stats.encodeMsPerFrame,
                "delayMs": push?.delayMilliseconds, "upstreamBytesPerSecond": push?.upstreamBytesPerSecond,
                "pushDropped": push?.droppedFrames, "reconnects": push?.reconnects,
            ]))
        } else {
            var line = String(format: "%6.1fs  %5d frames  %5.1f fps  %6.0f kbit/s (target %d)  dropped %d  encode %.1f ms",
                              elapsed, stats.encoded, fps, kbps, stats.bitrateKbps, stats.dropped + (push?.droppedFrames ?? 0),
                              stats.encodeMsPerFrame)
            if let push {
                line += "  delay \(push.delayMilliseconds) ms"
                if push.reconnects > 0 { line += "  reconnects \(push.reconnects)" }
            }
            printError(terminal ? "\u{1B}[2K\r" + line : line, terminator: terminal ? "" : "\n")
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
        case .status, .closed: break  // the status line and the summary say it
        }
    }

    func summary(_ stats: PipelineStats, push: HosterStatus?, elapsed: Double, record: String?) {
        let kbps = elapsed > 0 ? Double(stats.bytes) * 8 / 1000 / elapsed : 0
        if json {
            printLine(jsonLine([
                "event": "summary", "frames": stats.encoded, "seconds": elapsed,
                "fps": elapsed > 0 ? Double(stats.encoded) / elapsed : 0, "bitrateKbps": kbps, "bytes": stats.bytes,
                "width": configuration.width, "height": configuration.height, "dropped": stats.dropped,
                "keyframes": stats.keyframes, "filterMs": stats.filterMsPerFrame,
                "encodeMs": stats.encodeMsPerFrame, "record": record, "targetKbps": stats.bitrateKbps,
                "pushDropped": push?.droppedFrames, "reconnects": push?.reconnects,
            ]))
        } else {
            if terminal { printError("") }
            let line = String(format: "done: %d frames of %dx%d in %.1fs (%.1f fps), %.0f kbit/s, %d dropped",
                              stats.encoded, configuration.width, configuration.height, elapsed,
                              elapsed > 0 ? Double(stats.encoded) / elapsed : 0, kbps, stats.dropped)
            printError(line + (record.map { ", recorded to \($0)" } ?? ""))
        }
    }
}
