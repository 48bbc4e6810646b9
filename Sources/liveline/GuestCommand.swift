import Foundation
import LiveCore
import LiveLine
import LiveRTMP
import Synchronization

/// `liveline guest URL`: pulls a stream (RTMP or HTTP-FLV), decodes it and reports.
enum GuestCommand: Command {
    static let name = "guest"
    static let help = """
        Usage: liveline guest RTMP_URL|HTTP_FLV_URL [options]

        Plays rtmp://host[:port]/app[/instance]/stream[?query] or HTTP-FLV
        http://host[:port]/path[?query] (liveline serve's /APP/STREAM.flv, nginx-http-flv,
        SRS, ffmpeg -listen 1: plain HTTP, a chunked or close-delimited body; a token goes
        on the query as ?token=; the end of a chunked body is the stream's end, a closed
        or cut connection is retried as a lost RTMP one; another status than 2xx is a
        refusal, exit 3), decodes the H.264 video and the AAC audio and reports frames,
        size, time to the first frame, audio frames, rate, channels and level and, when
        the stream carries LiveLine's capture-time SEI, glass-to-glass latency, and when
        it carries the test source's markers, A/V sync. An audio-only stream plays (its
        metadata names no video, or a second of audio comes without it); other audio
        codecs than AAC are ignored with a warning.

        Stop conditions (default: until the stream ends or Ctrl-C):
          --frames N           stop after N decoded frames
          --duration SECONDS   stop after this long

        Outputs:
          --snapshot FILE.png  write the last decoded frame as a PNG at the end
          --y4m PATH|-         write decoded frames as YUV4MPEG2 to PATH, or stdout with '-'
                               (liveline guest URL --y4m - | ffplay -)
          --record FILE        record the received stream to FILE.flv or FILE.mp4 (no re-encode),
                               video and audio; it starts at 0 with the first keyframe
                               received, and what a relay replays from its cache at the
                               start is squeezed into the moment it arrived, so the file
                               lasts as long as the play
          --out FILE|-         both tracks, copied as received (H.264, AAC: no re-encode), in
                               one container: FILE.nut, FILE.mkv, or NUT on stdout with '-'
                               (liveline guest URL --out - | ffplay -); starts as --record
          --wav FILE|-         the decoded audio as a 16-bit PCM WAV (its sizes fixed at the
                               end; with '-' on stdout, a streaming header)
          --pcm FILE|-         the decoded audio as raw s16le samples, channels interleaved
                               (ffplay -f s16le -ar RATE -ch_layout stereo -)
                               Only one of --y4m, --out, --wav, --pcm can be '-'; --y4m
                               stays video-only, --wav and --pcm audio-only
          --level-ms MS        a {"event":"hosterAudioActive","level":0-100} line (with --stats
                               json) at most every MS ms: the stream's audio level over the
                               audio since the last one (default 500, 0: none)
          --stats json         one JSON object per second and a final {"event":"summary",...}
                               on stdout (on stderr when an output has stdout), and a line
                               per play event: ok, firstFrame and sizeChanged (width,
                               height: the picture's size changed mid-stream), firstAudio,
                               buffering (percent: 0 at a stall, rising, 100 when the
                               picture moves again), reconnecting, hosterAudioActive,
                               recordingFailed, closed (code, message); otherwise a
                               status line on stderr. The summary's audio figures:
                               audioFrames, audioSampleRate, audioChannels, audioLevel
                               (0-100, the last second), avSyncP50Ms/avSyncP95Ms (marker
                               beep - marked frame in stream time, positive: audio late;
                               null without the test source's markers)
          --timeout SECONDS    limit for connecting, and again for the first video or audio
                               (default 10)
          --buffer-ms MS       latency control: the most received-but-unshown video kept;
                               past it the guest skips to the latest keyframe (default 150,
                               0: off). After a stall (no picture for 0.5 s) the pictures
                               that come again are held until they fill MS (or waited MS),
                               reported as buffering percents rising to 100
          --reconnect-tries N  retries after a lost connection, 2 s x 1.5^n apart (default 10)
          --latency-log FILE   one line per shown frame with a capture time (LiveLine's SEI):
                               "WALL_MICROS CAPTURE_MICROS LATENCY_MS", the wall clock
                               when shown, the capture time, glass-to-glass in ms
          --help               show this text

        Co-host line (连麦):
          --line LIVE_ID       join the co-host line LIVE_ID (default with --apply: the
                               stream name of RTMP_URL)
          --apply              apply to co-host; once accepted, capture --source and
                               publish it to the co-host stream the server assigned, which
                               the hoster mixes into RTMP_URL. A refused application (601
                               rejected, 602 line full, 605 stopped: the hoster did not
                               answer in time) is reported with its code and the exit
                               status is 3
          --source SPEC        what the co-host publishes: test | color:NAME | file:PATH |
                               v4l2:/dev/videoN (default test); with --apply only, as are:
          --size WxH           co-host picture size (default 640x360)
          --fps N              co-host frame rate (default 30)
          --bitrate KBPS       co-host bitrate (default 800)
          --audio-source SPEC  the co-host's sound, as host's --audio-source: tone |
                               tone:HZ | silence | none | file:PATH | alsa:DEVICE |
                               pulse:NAME (default: what --source brings; with test,
                               the 440 Hz tone with its 3 kHz beep each second)
          --mute               the co-host push starts with its sound off (silence in
                               the track; the room is told); stdin takes mute | unmute
                               while co-hosting
          --no-play            do not play RTMP_URL (only co-host); the co-host push's
                               figures print once a second and as a final summary, as
                               host prints its own (JSON lines with --stats json)
          --say TEXT           send a message to the room after joining
          While co-hosting, what the guest hears (--wav, --pcm, the level events and the
          summary's audio figures) is its hear stream: the hoster's mix of everyone but
          this co-host, so its own voice never comes back late; --record and --out keep
          RTMP_URL as received. With --stats json, a {"event":"beepHeard","ptsMicros":…,
          "wallMicros":…} line for each marker beep (3 kHz) heard on it: with the
          hoster's captureClock line, the mouth-to-ear delay. On an audio line (the
          hoster's --mode audio) the co-host pushes sound only.
        \(LineOptions.help)
        \(TokenOption.help)
        With --no-play the run also ends when the hoster hangs up or closes the line
        (exit status 0); with --line, a line that cannot be reached or is lost, or a
        co-host push that fails, ends the run with 1. The line's events print as JSON
        lines with --stats json ({"event":"applicationResult", "code":0,...},
        "cohostOpened", "message", "memberCount", ...).
        """

    static func run(_ arguments: inout Arguments) throws -> Int32 {
        let frames = try arguments.int("--frames", in: 1...Int(Int32.max))
        let duration = try arguments.seconds()
        let snapshot = try arguments.value("--snapshot")
        let y4m = try arguments.value("--y4m")
        let record = try arguments.value("--record")
        let out = try arguments.value("--out")
        let wav = try arguments.value("--wav")
        let pcm = try arguments.value("--pcm")
        let levelMs = try arguments.int("--level-ms", in: 0...3_600_000) ?? 500
        let timeout = try arguments.double("--timeout", in: 0.1...3600) ?? 10
        let bufferMs = try arguments.int("--buffer-ms", in: 0...60_000) ?? 150
        let tries = try arguments.int("--reconnect-tries", in: 0...1000)
        let latencyLogPath = try arguments.value("--latency-log")
        let json = try arguments.statsJSON()
        let lineId = try arguments.value("--line")
        let apply = arguments.flag("--apply")
        let noPlay = arguments.flag("--no-play")
        let say = try arguments.value("--say")
        if noPlay, latencyLogPath != nil { throw UsageError("--latency-log needs a play (not --no-play)") }
        var cohost = Guest.Options().cohost
        if !apply {
            try arguments.reject(["--source", "--size", "--fps", "--bitrate", "--mute", "--audio-source"],
                                 without: "--apply (it describes what a co-host publishes)")
        }
        if lineId == nil, !apply { try arguments.reject(LineOptions.names, without: "--line or --apply") }
        try arguments.picture(into: &cohost)
        if let spec = try HosterOptions.audioSource(&arguments) { cohost.audioSource = spec }
        let muted = arguments.flag("--mute")
        let tokenProvider = try TokenOption.parse(&arguments)
        let lineOptions = lineId != nil || apply
            ? try LineOptions.parse(&arguments, liveId: lineId ?? "", defaultUserId: "guest-\(getpid())") : nil
        let positionals = arguments.positionals()
        try arguments.finish()
        guard let text = positionals.first else { throw UsageError("missing the stream URL (rtmp://… or http://….flv)") }
        guard positionals.count == 1 else { throw UsageError("unexpected argument '\(positionals[1])'") }
        let url = try Arguments.playURL(text)
        try PlayOutputs.checkSnapshot(snapshot)
        if let record {
            let lower = record.lowercased()
            guard lower.hasSuffix(".flv") || lower.hasSuffix(".mp4") else {
                throw UsageError("--record needs a file ending in .flv or .mp4, not '\(record)'")
            }
        }
        try PlayOutputs.checkOut(out)
        let onStandardOutput = try PlayOutputs.onStandardOutput([("--y4m", y4m), ("--out", out), ("--wav", wav), ("--pcm", pcm)])

        var options = Guest.Options()
        options.timeout = .milliseconds(Int64(timeout * 1000))
        options.bufferTargetMilliseconds = bufferMs
        options.audioLevelShowTimeMilliseconds = levelMs == 0 ? nil : levelMs
        if let tries { options.reconnect.maxTries = tries }
        // The line and the co-host push retry as the play does (`--reconnect-tries`).
        options.cohostPush.backoff = options.reconnect
        options.tokenProvider = tokenProvider
        options.cohost = cohost
        var play = Guest.PlayOptions()
        play.frameLimit = frames
        play.duration = duration
        play.snapshotPath = snapshot
        play.y4mPath = y4m
        play.recordPath = record
        play.outPath = out
        play.wavPath = wav
        play.pcmPath = pcm
        let guest = Guest(options: options)
        let report = GuestReport(json: json, toStandardError: !onStandardOutput.isEmpty, url: url.description)
        var line: GuestLineRole?
        if var lineOptions {
            guard case .rtmp(let rtmpURL) = url else {
                throw UsageError("--line and --apply need an rtmp:// URL (the line's server and name come from it)")
            }
            if lineOptions.liveId.isEmpty { lineOptions.liveId = rtmpURL.streamName }
            line = try GuestLineRole(guest: guest, options: lineOptions, url: rtmpURL, apply: apply, say: say,
                                     json: json, toStandardError: !onStandardOutput.isEmpty, muted: muted)
        } else if noPlay || say != nil {
            throw UsageError("--no-play and --say need --line or --apply")
        }
        let latencyLog = try latencyLogPath.map { try LatencyLog(path: $0) }
        return try GuestSession(guest: guest, url: url, play: play, report: report, line: line, playing: !noPlay,
                                latencyLog: latencyLog).run()
    }
}

/// Runs one guest through the kit: the play, Ctrl-C, the once-a-second report and the
/// summary; the line beside it.
struct GuestSession {
    let guest: Guest
    let url: PlayURL
    let play: Guest.PlayOptions
    let report: GuestReport
    var line: GuestLineRole?
    var playing = true
    /// `--latency-log`: the play's sink (the kit holds it weakly; this keeps it).
    var latencyLog: LatencyLog?

    func run() throws -> Int32 {
        if !playing, let line { return try runLineOnly(line) }
        let guest = self.guest
        let ended = DispatchSemaphore(value: 0)
        guest.onEvent = { [report, weak guest] event in
            report.event(event, error: { guest?.playEnd?.error })
            if case .closed = event { ended.signal() }
        }
        let signals = StopSignals { guest.stopPlay {} }
        defer { withExtendedLifetime(signals) {} }
        // `| head -2` has what it wanted: the run ends as if stopped.
        if report.json, !report.toStandardError { CommandOutput.standardOutput.whenReaderGone { guest.stopPlay {} } }

        let started = Clock.monotonicMicros()
        do {
            try guest.startPlay(url: url, sink: latencyLog, play: play)
        } catch {
            report.failedAtStart(error, play: play)
            throw error
        }
        try line?.start()
        var previous = guest.stats
        var previousTime = started
        var stoppedForLine = false
        while ended.wait(timeout: .now() + 1) == .timedOut {
            if let outcome = line?.outcome, Self.endsRun(outcome) {
                stoppedForLine = true
                guest.stopPlay()
                break
            }
            // The play may end (and report `closed`) while this tick is made: the report
            // then leaves the stats line out, and the next wait returns at once.
            let now = Clock.monotonicMicros()
            let stats = guest.stats
            report.tick(stats, previous: previous, seconds: Double(now - previousTime) / 1e6,
                        elapsed: Double(now - started) / 1e6)
            previous = stats
            previousTime = now
        }
        let elapsed = Double(Clock.monotonicMicros() - started) / 1e6
        latencyLog?.flush()
        let end = guest.playEnd
        let failure = stoppedForLine ? nil : end?.error
        let stats = guest.stats
        report.summary(stats, elapsed: elapsed, reason: end?.reason, play: play, error: failure)
        line?.finish()
        if let failure { throw failure }
        if let recordingError = stats.recordingError {
            // Playing went on without it, but what was asked for was not done.
            printError("liveline guest: \(recordingError)")
            return ExitStatus.failure
        }
        return Self.status(line?.outcome)
    }

    /// A refused application or a failed line ends the run; a hung-up co-host that
    /// plays goes on playing.
    private static func endsRun(_ outcome: GuestLineRole.Outcome) -> Bool {
        switch outcome {
        case .refused, .failed: true
        case .ended: false
        }
    }

    private static func status(_ outcome: GuestLineRole.Outcome?) -> Int32 {
        switch outcome {
        case .refused(_, let message)?:
            printError("liveline guest: \(message)")
            return ExitStatus.refused
        case .failed(let message)?:
            printError("liveline guest: \(message)")
            return ExitStatus.failure
        case .ended?, nil:
            return ExitStatus.ok
        }
    }

    /// `--no-play`: only the line, until Ctrl-C, `--duration`, or the line's end. While
    /// co-hosting, the push's status once a second and a summary at the end, as `host`
    /// reports its own.
    private func runLineOnly(_ line: GuestLineRole) throws -> Int32 {
        let stop = DispatchSemaphore(value: 0)
        let signals = StopSignals { stop.signal() }
        defer { withExtendedLifetime(signals) {} }
        if report.json, !report.toStandardError { CommandOutput.standardOutput.whenReaderGone { stop.signal() } }
        let pushReport = StatsReport(json: report.json, configuration: line.cohost)
        let started = Clock.monotonicMicros()
        try line.start()
        // The push's figures are gone once it stops (a hang-up): keep the last ones.
        var pushed = PipelineStats(), previous = PipelineStats()
        var pushStarted: UInt64?, previousTime: UInt64 = 0
        while stop.wait(timeout: .now() + 0.1) == .timedOut, line.outcome == nil {
            let now = Clock.monotonicMicros()
            if let duration = play.duration, Double(now - started) / 1e6 >= duration { break }
            guard line.guest.isCohosting else { continue }
            pushed = line.guest.cohostStats
            if pushStarted == nil {
                pushStarted = now
                previousTime = now
            }
            guard let since = pushStarted, now - previousTime >= 1_000_000 else { continue }
            pushReport.tick(pushed, previous: previous, push: line.pushStatus,
                            seconds: Double(now - previousTime) / 1e6, elapsed: Double(now - since) / 1e6)
            (previous, previousTime) = (pushed, now)
        }
        let ended = Clock.monotonicMicros()
        line.finish()
        pushReport.summary(pushed, push: line.pushStatus, elapsed: Double(ended - (pushStarted ?? ended)) / 1e6, record: nil,
                           error: nil)
        return Self.status(line.outcome)
    }
}

/// Formats the guest's figures for people (stderr) or programs (JSON lines).
final class GuestReport: Sendable {
    let json: Bool
    /// Standard output carries media (`--y4m -`, `--out -`, `--wav -`, `--pcm -`): every
    /// report line goes to stderr.
    let toStandardError: Bool
    let url: String
    private let terminal = isatty(STDERR_FILENO) == 1
    /// `closed` has been written: no stats line may follow it. The kit reports `closed`
    /// on the player's thread while the run's loop ticks on its own, so the check and
    /// the line are one step under this lock.
    private let closedWritten = Mutex(false)

    init(json: Bool, toStandardError: Bool, url: String) {
        self.json = json
        self.toStandardError = toStandardError
        self.url = url
    }

    /// One JSON line to stdout (stderr with `--y4m -`); `orStandardError`: to stderr
    /// when stdout's reader has gone, so the summary is still seen.
    private func emitJSON(_ line: String, orStandardError: Bool = false) {
        printJSONLine(line, toStandardError: toStandardError, orStandardError: orStandardError)
    }

    func tick(_ stats: GuestStats, previous: GuestStats, seconds: Double, elapsed: Double) {
        closedWritten.withLock { closed in
            if !closed { writeTick(stats, previous: previous, seconds: seconds, elapsed: elapsed) }
        }
    }

    private func writeTick(_ stats: GuestStats, previous: GuestStats, seconds: Double, elapsed: Double) {
        let fps = Double(stats.frames - previous.frames) / max(seconds, 1e-6)
        let kbps = stats.receiveBytesPerSecond * 8 / 1000
        // Connected but no picture or sound yet: the stream may not be published (yet).
        let waiting = stats.firstFrameMs == nil && stats.audioFrames == 0
        if json {
            emitJSON(jsonLine([
                "event": "stats", "time": elapsed, "frames": stats.frames, "fps": fps, "width": stats.width,
                "height": stats.height, "receiveKbps": kbps, "bufferedMs": stats.cacheMilliseconds,
                "latencyP50Ms": stats.latencyP50Ms, "latencyP95Ms": stats.latencyP95Ms,
                "dropped": stats.droppedPackets, "decodeErrors": stats.decodeErrors,
                "cacheMs": stats.cacheMilliseconds, "skipped": stats.skippedPackets + stats.silentFrames,
                "reconnects": stats.reconnects, "waiting": waiting,
                "audioFrames": stats.audioFrames, "audioLevel": stats.audioLevel,
            ]))
        } else if waiting {
            let line = String(format: "%6.1fs  waiting for the stream", elapsed)
            printError(terminal ? "\u{1B}[2K\r" + line : line, terminator: terminal ? "" : "\n")
        } else {
            var line = stats.firstFrameMs == nil
                ? String(format: "%6.1fs  audio only  %5d audio frames  %6.0f kbit/s  cache %d ms", elapsed, stats.audioFrames,
                         kbps, stats.cacheMilliseconds)
                : String(format: "%6.1fs  %5d frames  %5.1f fps  %dx%d  %6.0f kbit/s  cache %d ms", elapsed, stats.frames,
                         fps, stats.width, stats.height, kbps, stats.cacheMilliseconds)
            for (name, count) in Self.losses(stats) { line += "  \(name) \(count)" }
            if let p50 = stats.latencyP50Ms, let p95 = stats.latencyP95Ms {
                line += String(format: "  latency p50 %.0f ms p95 %.0f ms", p50, p95)
            }
            if let level = stats.audioLevel { line += "  audio level \(level)" }
            printError(terminal ? "\u{1B}[2K\r" + line : line, terminator: terminal ? "" : "\n")
        }
    }

    /// One play event: a JSON line, or for people the connect. `error`: why the run
    /// ended, for `closed`.
    func event(_ event: GuestEvent, error: () -> Error?) {
        guard json else {
            if case .ok = event { printError("liveline guest: connected to \(url), waiting for the stream") }
            return
        }
        switch event {
        case .firstFrame(let width, let height), .sizeChanged(let width, let height):
            emitJSON(jsonLine(["event": event.name, "width": width, "height": height]))
        case .firstAudio(let sampleRate, let channels):
            emitJSON(jsonLine(["event": event.name, "sampleRate": sampleRate, "channels": channels]))
        case .hosterAudioActive(let level, let showTime):
            emitJSON(jsonLine(["event": event.name, "level": level, "showTime": showTime]))
        case .beepHeard(let pts, let wall):
            emitJSON(jsonLine(["event": event.name, "ptsMicros": Int(pts), "wallMicros": Int(wall)]))
        case .buffering(let percent):
            emitJSON(jsonLine(["event": event.name, "percent": percent]))
        case .reconnecting(let times):
            emitJSON(jsonLine(["event": event.name, "times": times]))
        case .recordingFailed(let message):
            emitJSON(jsonLine(["event": event.name, "message": message]))
        case .closed(let code):
            closedWritten.withLock { closed in
                closed = true
                emitJSON(jsonLine(["event": event.name, "code": code.rawValue,
                                   "message": error().map { "\($0)" } ?? code.message]))
            }
        case .status:
            break  // its figures are in the stats line
        case .ok:
            // The SDK's onRtmpPlayerOk: connected and playing, which says nothing yet
            // about a stream being published; `firstFrame` says that.
            emitJSON(jsonLine(["event": event.name, "message": "connected, waiting for the stream"]))
        }
    }

    /// What the status lines and the summary both count, when it happened at all:
    /// frames latency control skipped, reconnects, packets dropped before decoding.
    private static func losses(_ stats: GuestStats) -> [(String, Int)] {
        [("skipped", stats.skippedPackets + stats.silentFrames), ("reconnects", stats.reconnects),
         ("dropped", stats.droppedPackets)].filter { $0.1 > 0 }
    }

    /// A play that never started (an output that cannot be opened; a token provider's
    /// failure comes later, as the kit's `closed`): the kit reported nothing, so a program
    /// reading the JSON lines still gets `closed` with the error (the anyRTC SDK's
    /// onRtmpPlayerClosed) and a summary. People get the error alone.
    func failedAtStart(_ error: Error, play: Guest.PlayOptions) {
        guard json else { return }
        emitJSON(jsonLine(["event": "closed", "code": ((error as? LiveError)?.code ?? .unknown).rawValue,
                           "message": "\(error)"]))
        summary(GuestStats(), elapsed: 0, reason: .failed, play: play, error: error)
    }

    func summary(_ stats: GuestStats, elapsed: Double, reason: GuestEndReason?, play: Guest.PlayOptions, error: Error?) {
        let fps = elapsed > 0 ? Double(stats.frames) / elapsed : 0
        let ended: String = switch reason {
        case .frameLimit: "frames"
        case .duration: "duration"
        case .streamEnded: "stream ended"
        case .stopped: json && !toStandardError && CommandOutput.standardOutput.isReaderGone ? "output closed" : "stopped"
        case .failed, nil: "failed"
        }
        // Only what was really written: not a snapshot or recording that failed or never began.
        let snapshot = stats.snapshotWritten ? play.snapshotPath : nil
        let record = stats.recordedPackets > 0 && stats.recordingError == nil ? play.recordPath : nil
        let out = stats.outPackets > 0 ? play.outPath : nil
        if json {
            emitJSON(jsonLine([
                "event": "summary", "url": url, "frames": stats.frames,
                "width": stats.width, "height": stats.height, "firstFrameMs": stats.firstFrameMs,
                "latencyP50Ms": stats.latencyP50Ms, "latencyP95Ms": stats.latencyP95Ms,
                "latencyMaxMs": stats.latencyMaxMs, "latencyStartP50Ms": stats.latencyStartP50Ms,
                "latencyEndP50Ms": stats.latencyEndP50Ms, "latencySamples": stats.latencySamples, "seconds": elapsed, "fps": fps, "packets": stats.packets,
                "keyframes": stats.keyframes, "dropped": stats.droppedPackets, "decodeErrors": stats.decodeErrors,
                "skipped": stats.skippedPackets + stats.silentFrames, "reconnects": stats.reconnects,
                "bytes": stats.bytesReceived, "ended": ended, "error": error.map { "\($0)" },
                "snapshot": snapshot, "record": record, "recordError": stats.recordingError,
                "audioPackets": stats.audioPackets, "audioFrames": stats.audioFrames,
                "audioSampleRate": stats.audioSampleRate, "audioChannels": stats.audioChannels,
                "audioLevel": stats.audioLevel, "audioOnly": stats.audioOnly,
                "audioSkipped": stats.skippedAudioPackets, "audioDecodeErrors": stats.audioDecodeErrors,
                "avSyncP50Ms": stats.avSyncP50Ms, "avSyncP95Ms": stats.avSyncP95Ms, "avSyncSamples": stats.avSyncSamples,
                "wavBytes": play.wavPath == nil ? nil : stats.wavBytes,
                "pcmBytes": play.pcmPath == nil ? nil : stats.pcmBytes, "out": out,
            ]), orStandardError: true)
        } else {
            if terminal { printError("") }
            var line = "done (\(ended)): " + (stats.audioOnly && stats.frames == 0
                ? String(format: "audio only, %.1fs", elapsed)
                : String(format: "%d frames of %dx%d in %.1fs (%.1f fps)", stats.frames, stats.width, stats.height, elapsed, fps))
            if let first = stats.firstFrameMs { line += String(format: ", first frame after %.0f ms", first) }
            if let p50 = stats.latencyP50Ms, let p95 = stats.latencyP95Ms {
                line += String(format: ", latency p50 %.1f ms p95 %.1f ms", p50, p95)
            }
            for (name, count) in Self.losses(stats) { line += ", \(name) \(count)" }
            if let rate = stats.audioSampleRate, let channels = stats.audioChannels {
                line += ", \(stats.audioFrames) audio frames of \(rate) Hz \(channels == 1 ? "mono" : "stereo")"
                if let level = stats.audioLevel { line += " (level \(level))" }
            }
            if let p50 = stats.avSyncP50Ms, let p95 = stats.avSyncP95Ms {
                line += String(format: ", A/V sync p50 %+.0f ms p95 %+.0f ms", p50, p95)
            }
            if let out { line += ", out \(out == "-" ? "stdout" : out)" }
            if let snapshot { line += ", snapshot \(snapshot)" }
            if let error = stats.recordingError {
                line += ", \(error)"
            } else if let record {
                line += ", recorded to \(record)"
            } else if let path = play.recordPath {
                line += ", nothing recorded to \(path)"
            }
            printError(line)
        }
    }
}
