import Foundation
import LiveAuth
import LiveCapture
import LiveCodec
import LiveCore
import LiveFilter
import LiveLine
import LiveRTMP

/// `liveline host`: the hoster pipeline from the command line.
enum HostCommand: Command {
    static let name = "host"
    static let help = """
        Usage: liveline host [RTMP_URL] [options]

        Captures video, applies filters, encodes H.264, pushes it to RTMP_URL
        (rtmp://host[:port]/app[/instance]/stream[?query]) and/or records it.

        Source and picture:
          --source SPEC        test | color:NAME | color:#RRGGBB | file:PATH | v4l2:/dev/videoN
                               (default: test, a moving pattern with a frame counter)
          --size WxH           picture size (default 1280x720)
          --fps N              frames per second, 1-60 (default 30)

        Filters (applied in this order: zoom, filter, mirror, logo):
          --filter MODE        original | beauty | blur (default original)
          --beauty X           beauty strength 0..1 (default 0.6; implies --filter beauty)
          --mirror             flip the picture horizontally
          --zoom X             digital zoom 1.0..3.0 (default 1.0)
          --logo PATH[@X,Y]    PNG watermark with alpha at X,Y (default: top right, 16 px in)

        Mix (co-hosts composed into the picture):
          --mix NAME           layout template: full | equal | bigSmall (default full)
          --mix-test N         mix in N solid-colour test co-hosts (red, green, blue, yellow)
        \(mixOptionsHelp)
        Co-host line (连麦; needs RTMP_URL on a liveline serve):
          --line LIVE_ID       open the co-host line LIVE_ID: guests join it, apply, and
                               once accepted publish their camera, which is mixed into
                               this stream by the --mix template. A server without
                               tokens opens it only for the publisher of the stream
                               named LIVE_ID (the push gets a random ?lineKey= to prove
                               it); a line refused ends the run with 3, one that
                               cannot be reached or is lost with 1
          --accept MODE        auto (or all): accept every applicant; none: reject every
                               one; manual (default): print each application and read
                               commands from stdin: accept PEER | reject PEER |
                               hangup PEER | say TEXT | template NAME | close
          --live-info JSON     what the living list (GET /api/live) shows (≤ 1024 bytes;
                               strict JSON when it starts with { or [, else shown as text)
        \(LineOptions.help)
        \(TokenOption.help)
        Encoding:
          --bitrate KBPS       H.264 bitrate in kbit/s, CBR (default 2500)
          --preset NAME        x264 preset (default veryfast)
          --keyint SECONDS     keyframe interval (default 2)

        Push (RTMP_URL):
          --reconnect-tries N  retries after a lost connection, 2 s x 1.5^n apart with
                               jitter, capped at 30 s (default 10; 0: fail at once)
          --abr on|off         adapt the bitrate to the network (default on): down when
                               the send queue grows, back up in steps when it stays small
          --min-bitrate KBPS   lowest adaptive bitrate (default 200)
          --max-bitrate KBPS   highest adaptive bitrate (default: --bitrate)
          --congestion-ms MS   queued media beyond which frames are dropped to the next
                               keyframe and an IDR is requested (default 500)

        Output:
          --duration SECONDS   stop after this long (default: run until Ctrl-C)
          --record FILE        write the stream to FILE.flv or FILE.mp4
          --stats json         one JSON object per second on stdout, the push's events
                               ({"event":"ok"}, "reconnecting", "failed", "closed"), the
                               line's events ({"event":"application","peerId":...},
                               "cohostOpened", "cohostFirstFrame", "refused", ...) and a
                               final {"event":"summary",...}; otherwise a status line on
                               stderr (rewritten in place on a terminal)
          --help               show this text
        """

    static func run(_ arguments: inout Arguments) throws -> Int32 {
        var options = try HosterOptions.parse(&arguments)
        let positionals = arguments.positionals()
        try arguments.finish()
        if positionals.count > 1 { throw UsageError("unexpected argument '\(positionals[1])'") }
        if let text = positionals.first {
            do {
                options.url = try RTMPURL(parsing: text)
            } catch {
                throw UsageError("'\(text)' is not an RTMP URL: \(error)")
            }
        }
        if options.line != nil, options.url == nil { throw UsageError("--line needs an RTMP_URL to push to") }
        let session = try HosterSession(options: options)
        return try session.run()
    }
}

/// Everything `liveline host` was asked for, validated: the pipeline's configuration
/// plus what only the command line has (how long, where to, how to report).
struct HosterOptions {
    var configuration = HosterConfiguration()
    var duration: Double?
    var record: String?
    var jsonStats = false
    /// Where to push (`liveline host RTMP_URL`); nil: no push.
    var url: RTMPURL?
    /// Reconnect, congestion and adaptive bitrate of the push.
    var push = RTMPPublishSink.Options()
    /// `--line LIVE_ID`: the co-host line to open.
    var line: LineOptions?
    var accept = AcceptMode.manual
    var liveInfo = ""

    /// What the hoster answers applicants (`--accept`).
    enum AcceptMode: String {
        case auto, manual, none
    }

    static func parse(_ arguments: inout Arguments) throws -> HosterOptions {
        var o = HosterOptions()
        var c = HosterConfiguration()
        if let source = try arguments.value("--source") { c.source = source }
        if let size = try arguments.size("--size") { (c.width, c.height) = size }
        if let fps = try arguments.int("--fps", in: 1...60) { c.fps = fps }
        if let bitrate = try arguments.int("--bitrate", in: 50...50_000) { c.bitrateKbps = bitrate }
        if let preset = try arguments.value("--preset") {
            guard HosterConfiguration.presets.contains(preset) else {
                throw UsageError("--preset must be one of \(HosterConfiguration.presets.joined(separator: ", ")), not '\(preset)'")
            }
            c.preset = preset
        }
        if let keyint = try arguments.double("--keyint", in: 0.1...60) { c.keyframeIntervalSeconds = keyint }
        if let name = try arguments.value("--filter") {
            guard let mode = CameraFilterMode(name: name) else {
                throw UsageError("--filter must be original, beauty or blur, not '\(name)'")
            }
            c.filter = mode
        }
        if let strength = try arguments.double("--beauty", in: 0...1) {
            c.beautyStrength = strength
            c.filter = .beautiful
        }
        c.mirror = arguments.flag("--mirror")
        if let zoom = try arguments.double("--zoom", in: 1...3) { c.zoom = zoom }
        if let logo = try arguments.value("--logo") { (c.logoPath, c.logoPosition) = try parseLogo(logo) }
        if let template = try arguments.mixTemplate("--mix") { c.mixTemplate = template }
        c.mixOptions = try arguments.mixOptions()
        if let n = try arguments.int("--mix-test", in: 0...HosterConfiguration.mixTestColors.count) { c.mixTestCohosts = n }
        if let duration = try arguments.double("--duration", in: 0.001...(365 * 86400)) { o.duration = duration }
        if let record = try arguments.value("--record") {
            let lower = record.lowercased()
            guard lower.hasSuffix(".flv") || lower.hasSuffix(".mp4") else {
                throw UsageError("--record needs a file ending in .flv or .mp4, not '\(record)'")
            }
            o.record = record
        }
        if let stats = try arguments.value("--stats") {
            guard stats == "json" else { throw UsageError("--stats accepts only 'json', not '\(stats)'") }
            o.jsonStats = true
        }
        if let tries = try arguments.int("--reconnect-tries", in: 0...1000) { o.push.backoff.maxTries = tries }
        if let ms = try arguments.int("--congestion-ms", in: 50...60_000) { o.push.congestionMilliseconds = ms }
        var abr = true
        if let text = try arguments.value("--abr") {
            guard text == "on" || text == "off" else { throw UsageError("--abr must be on or off, not '\(text)'") }
            abr = text == "on"
        }
        let minimum = try arguments.int("--min-bitrate", in: 50...50_000) ?? min(200, c.bitrateKbps)
        let maximum = try arguments.int("--max-bitrate", in: 50...50_000) ?? max(c.bitrateKbps, minimum)
        guard minimum <= maximum else { throw UsageError("--min-bitrate \(minimum) is above --max-bitrate \(maximum)") }
        o.push.bitrate = abr ? BitrateController.Settings(minKbps: minimum, maxKbps: maximum) : nil
        if let liveId = try arguments.value("--line") {
            o.line = try LineOptions.parse(&arguments, liveId: liveId, defaultUserId: "hoster")
        }
        if let mode = try arguments.value("--accept") {
            guard let parsed = AcceptMode(rawValue: mode == "all" ? "auto" : mode) else {
                throw UsageError("--accept must be auto, manual or none, not '\(mode)'")
            }
            o.accept = parsed
        }
        if let info = try arguments.value("--live-info") { o.liveInfo = info }
        o.push.tokenProvider = try TokenOption.parse(&arguments)
        o.configuration = c
        return o
    }

    /// `PATH` or `PATH@X,Y`.
    private static func parseLogo(_ text: String) throws -> (String, (x: Int, y: Int)?) {
        if let at = text.lastIndex(of: "@") {
            let position = text[text.index(after: at)...].split(separator: ",", omittingEmptySubsequences: false)
            if position.count == 2, let x = Int(position[0]), let y = Int(position[1]) {
                guard x >= 0, y >= 0 else { throw UsageError("--logo position must not be negative: '\(text)'") }
                return (String(text[..<at]), (x, y))
            }
        }
        return (text, nil)
    }

    /// Frames to capture for `--duration` (exact: duration × fps, rounded).
    var frameLimit: Int? { duration.map { max(1, Int(($0 * Double(configuration.fps)).rounded())) } }
}
