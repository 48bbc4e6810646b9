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

        Captures video and sound, applies filters, encodes H.264 and AAC, pushes them to
        RTMP_URL (rtmp://host[:port]/app[/instance]/stream[?query]) and/or records it.

        Source and picture:
          --source SPEC        test | color:NAME | color:#RRGGBB | file:PATH | v4l2:/dev/videoN |
                               screen:DISPLAY[+X,Y][@WxH] (default: test, a moving pattern
                               with a frame counter). screen: grabs an X display through
                               x11grab, as `ffmpeg -f x11grab -video_size WxH -i DISPLAY+X,Y`:
                               screen::99 is all of display :99, screen::99+0,0@640x360 its
                               top-left 640x360 (default: the whole screen from X,Y; an
                               empty DISPLAY means $DISPLAY), fitted into --size
          --size WxH           picture size (default 1280x720)
          --fps N              frames per second, 1-60 (default 30)

        Sound (one capture clock with the picture; AAC-LC, 48000 Hz stereo):
          --mode video|audio   video: picture and sound (default); audio: an audio-only
                               live, no video track at all (the picture options below
                               do not apply; --source only picks the default sound)
          --audio-source SPEC  tone | tone:HZ (20-20000) | silence | none | file:PATH |
                               alsa:DEVICE | pulse:NAME (default: what --source brings:
                               with test, the tone, 440 Hz with a 3 kHz beep on each
                               second's marked frame (so also with --mode audio); with
                               file:, the file's own track; none with a colour or a camera)
          --audio-bitrate KBPS
                               AAC bitrate in kbit/s, 8-512 (default 96)
          --mute               start with the sound off: the track carries silence
          --level-ms MS        how often the local audio level (0-100) is reported,
                               50-10000 (default 500; the SDK's showTime)
          While running, stdin takes: mute | unmute (silence in place of the sound,
          the track and its timing go on; the line's room is told); share SPEC [INFO]
          (shares the picture of source SPEC, e.g. screen::99: it becomes the main
          picture, fitted whole, and this camera a small tile after the co-hosts'; the
          line's room hears shareOpen with INFO) | unshare (shareClose). With
          --stats json, shareEnable (enable, reason) and shareClose lines report it.

        Filters (applied in this order: zoom, filter, mirror, logo):
          --filter MODE        original | beauty | blur (default original)
          --beauty X           beauty strength 0..1 (default 0.6; implies --filter beauty,
                               contradicts any other --filter)
          --mirror             flip the picture horizontally
          --zoom X             digital zoom 1.0..3.0 (default 1.0)
          --logo PATH[@X,Y]    PNG watermark with alpha at X,Y (default: top right, 16 px in);
                               it must lie wholly on the picture

        Mix (co-hosts composed into the picture):
          --mix NAME           layout template: full | equal | bigSmall (default full)
          --mix-test N         mix in N solid-colour test co-hosts (red, green, blue, yellow)
        \(mixOptionsHelp)
        Co-host line (连麦; needs RTMP_URL on a liveline serve):
          --sub-background FILE
                               PNG or JPEG shown in a co-host's tile while its video is
                               off or has not arrived yet (default: flat grey; the SDK's
                               setVideoSubBackground)
          --link-mode video|audio
                               what co-hosts publish: video (camera and sound, a tile
                               each; default) or audio (sound only: an audio line, their
                               voices mixed, no tiles; always so with --mode audio)
          --line LIVE_ID       open the co-host line LIVE_ID: guests join it, apply, and
                               once accepted publish their camera, which is mixed into
                               this stream by the --mix template. A server without
                               tokens opens it only for the publisher of the stream
                               named LIVE_ID (the push gets a random ?lineKey= to prove
                               it); a line refused ends the run with 3, one that
                               cannot be reached or is lost with 1. Every co-host's
                               voice is mixed into the stream's sound, and each co-host
                               is sent the mix of everyone but itself (its hear stream)
          --accept MODE        auto (or all): accept every applicant; none: reject every
                               one; manual (default): print each application and read
                               commands from stdin: accept PEER | reject PEER |
                               hangup PEER | say TEXT (a normal message) |
                               barrage TEXT (a barrage message) | template NAME |
                               close; once
                               stdin is closed (< /dev/null), applicants are rejected
          --live-info JSON     what the living list (GET /api/live) shows (≤ 1024 bytes;
                               strict JSON when it starts with { or [, else shown as text);
                               default: {"hlsUrl":"","hosterName":USER,"isAudioLive":0|1,
                               "isLiveLandscape":0|1,"liveTopic":LIVE_ID,"rtmpUrl":PULL_URL}
                               (isAudioLive 1 with --mode audio: an audio line, whose
                               co-hosts push sound only; PULL_URL without its query)
        \(LineOptions.help)
        \(TokenOption.help)
        Encoding:
          --bitrate KBPS       H.264 bitrate in kbit/s, CBR (default 2500)
          --preset NAME        x264 preset (default veryfast)
          --keyint SECONDS     keyframe interval (default 2)

        Push (RTMP_URL):
          --reconnect-tries N  retries after a lost connection, 2 s x 1.5^n apart with
                               jitter, capped at 30 s (default 10; 0: fail at once)
          --abr on|off         adapt the bitrate to the network (default on): down to
                               0.85 x the throughput within about a second when the
                               send queue grows, back up in steps when it stays small;
                               a reconnect resumes at the last good rate
          --min-bitrate KBPS   lowest adaptive bitrate, at most --bitrate (default 200)
          --max-bitrate KBPS   highest adaptive bitrate, at least --bitrate (default: --bitrate)
          --congestion-ms MS   send queue (not yet acknowledged by the server, timed at
                               the rate the link carries it) beyond which video is
                               dropped until the queue drains and a fresh keyframe
                               comes; audio goes on (default 500)

        Output:
          --duration SECONDS   stop after this long (default: run until Ctrl-C)
          --record FILE        write the stream to FILE.flv or FILE.mp4
          --stats json         one JSON object per second on stdout, the push's events
                               ({"event":"ok"}, "reconnecting", "failed" (also when
                               the first connect fails, with its "code"), "closed"), the
                               first captured picture ({"event":"firstLocalVideoFrame",
                               "width":W,"height":H}) and a new camera size
                               ("localVideoViewChanged"), the
                               local audio level ({"event":"localAudioActive","level":N,
                               "showTime":MS}, none while muted), mute and unmute
                               ({"event":"audio","enabled":false}), the
                               line's events ({"event":"application","peerId":...},
                               "cohostOpened", "cohostFirstFrame", "refused", ...; on an
                               audio line "audioLineOpened" / "audioLineClosed"), each
                               co-host's voice level ({"event":"remoteAudioActive",
                               "peerId":...,"userId":...,"level":N,"showTime":MS}, every
                               --level-ms), with --line the capture clock's zero at the
                               start ({"event":"captureClock","zeroWallMicros":µs since 1970:
                               audio sample 0, for the mouth-to-ear delay with a co-host's
                               beepHeard lines) and a final {"event":"summary",...};
                               a stats line's push figures: delayMs (the send queue in
                               ms of media, unacknowledged bytes included), queueBytes,
                               throughputKbps (what the server acknowledged), targetKbps,
                               pushDropped, congestionDropped and abr (probing, holding,
                               draining, offline, settling);
                               otherwise a status line on stderr (rewritten in place on
                               a terminal)
          --help               show this text
        """

    /// Options that shape the push, meaningless without RTMP_URL.
    static let pushOptions = ["--reconnect-tries", "--abr", "--min-bitrate", "--max-bitrate", "--congestion-ms",
                              "--token", "--token-command"]

    /// Options that shape the picture, meaningless in an audio-only live.
    static let videoOptions = ["--size", "--fps", "--bitrate", "--preset", "--keyint", "--filter", "--beauty", "--mirror",
                               "--zoom", "--logo", "--mix", "--mix-test", "--hor", "--ver", "--dir", "--hor-pad", "--ver-pad",
                               "--border", "--gap", "--abr", "--min-bitrate", "--max-bitrate", "--sub-background"]

    static func run(_ arguments: inout Arguments) throws -> Int32 {
        let pushOptionGiven = pushOptions.first { arguments.contains($0) }
        var options = try HosterOptions.parse(&arguments)
        let positionals = arguments.positionals()
        try arguments.finish()
        if positionals.count > 1 { throw UsageError("unexpected argument '\(positionals[1])'") }
        if let text = positionals.first { options.url = try Arguments.rtmpURL(text) }
        if options.line != nil, options.url == nil { throw UsageError("--line needs an RTMP_URL to push to") }
        if let pushOptionGiven, options.url == nil { throw UsageError("\(pushOptionGiven) needs an RTMP_URL to push to") }
        if options.configuration.livingMediaMode == .audio, options.url == nil, options.record == nil {
            throw UsageError("--mode audio needs an RTMP_URL to push to or --record FILE")
        }
        try HosterOptions.checkLogo(options.configuration)
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
    /// `--live-info`; nil: the anyRTC SDK's liveData from the run's own settings (`defaultLiveInfo`).
    var liveInfo: String?
    /// `--mute`: the sound starts off.
    var muted = false
    /// `--sub-background FILE`: the co-host tiles' fill image.
    var subBackground: String?
    /// `--link-mode`: what co-hosts publish.
    var linkMediaMode = LivingMediaMode.video

    /// What the hoster answers applicants (`--accept`).
    enum AcceptMode: String {
        case auto, manual, none
    }

    static func parse(_ arguments: inout Arguments) throws -> HosterOptions {
        var o = HosterOptions()
        var c = HosterConfiguration()
        try parseAudio(&arguments, into: &c)
        if c.livingMediaMode == .audio, let given = HostCommand.videoOptions.first(where: { arguments.contains($0) }) {
            throw UsageError("\(given) shapes the picture, and --mode audio sends none")
        }
        o.muted = arguments.flag("--mute")
        let bitrateGiven = try arguments.picture(into: &c)
        if let preset = try arguments.value("--preset") {
            guard HosterConfiguration.presets.contains(preset) else {
                throw UsageError("--preset must be one of \(HosterConfiguration.presets.joined(separator: ", ")), not '\(preset)'")
            }
            c.preset = preset
        }
        if let keyint = try arguments.double("--keyint", in: 0.1...60) { c.keyframeIntervalSeconds = keyint }
        let filterName = try arguments.value("--filter")
        if let filterName {
            guard let mode = CameraFilterMode(name: filterName) else {
                throw UsageError("--filter must be original, beauty or blur, not '\(filterName)'")
            }
            c.filter = mode
        }
        if let strength = try arguments.double("--beauty", in: 0...1) {
            if let filterName, c.filter != .beautiful {
                throw UsageError("--beauty sets the strength of the beauty filter, which --filter \(filterName) turns off")
            }
            c.beautyStrength = strength
            c.filter = .beautiful
        }
        c.mirror = arguments.flag("--mirror")
        if let zoom = try arguments.double("--zoom", in: 1...3) { c.zoom = zoom }
        if let logo = try arguments.value("--logo") { (c.logoPath, c.logoPosition) = try parseLogo(logo, on: c) }
        if let template = try arguments.mixTemplate("--mix") { c.mixTemplate = template }
        c.mixOptions = try arguments.mixOptions()
        if let n = try arguments.int("--mix-test", in: 0...HosterConfiguration.mixTestColors.count) { c.mixTestCohosts = n }
        if let duration = try arguments.seconds() { o.duration = duration }
        if let record = try arguments.value("--record") {
            let lower = record.lowercased()
            guard lower.hasSuffix(".flv") || lower.hasSuffix(".mp4") else {
                throw UsageError("--record needs a file ending in .flv or .mp4, not '\(record)'")
            }
            o.record = record
        }
        o.jsonStats = try arguments.statsJSON()
        if let tries = try arguments.int("--reconnect-tries", in: 0...1000) { o.push.backoff.maxTries = tries }
        if let ms = try arguments.int("--congestion-ms", in: 50...60_000) { o.push.congestionMilliseconds = ms }
        var abr = true
        if let text = try arguments.value("--abr") {
            guard text == "on" || text == "off" else { throw UsageError("--abr must be on or off, not '\(text)'") }
            abr = text == "on"
        }
        o.push.bitrate = try adaptiveBitrate(&arguments, abr: abr, bitrate: c.bitrateKbps, bitrateGiven: bitrateGiven)
        if let liveId = try arguments.value("--line") {
            o.line = try LineOptions.parse(&arguments, liveId: liveId, defaultUserId: "hoster")
        } else {
            try arguments.reject(["--accept", "--live-info", "--sub-background", "--link-mode"] + LineOptions.names,
                                 without: "--line LIVE_ID")
        }
        o.subBackground = try arguments.value("--sub-background")
        if let mode = try arguments.value("--link-mode") {
            guard let parsed = LivingMediaMode(name: mode) else {
                throw UsageError("--link-mode must be video or audio, not '\(mode)'")
            }
            o.linkMediaMode = parsed
        }
        if let mode = try arguments.value("--accept") {
            guard let parsed = AcceptMode(rawValue: mode == "all" ? "auto" : mode) else {
                throw UsageError("--accept must be auto, manual or none, not '\(mode)'")
            }
            o.accept = parsed
        }
        if let info = try arguments.value("--live-info") { o.liveInfo = info }
        o.push.tokenProvider = try TokenOption.parse(&arguments)
        if o.muted, (try? c.audioSpec()) == AudioSourceSpec.none {
            throw UsageError("--mute silences the sound, and this stream has none (--audio-source none, or a source without sound)")
        }
        o.configuration = c
        return o
    }

    /// `--mode`, `--audio-source`, `--audio-bitrate` and `--level-ms`; a sound that
    /// contradicts the mode (`--mode audio --audio-source none`) is a usage error.
    static func parseAudio(_ arguments: inout Arguments, into c: inout HosterConfiguration) throws {
        if let mode = try arguments.value("--mode") {
            guard let parsed = LivingMediaMode(name: mode) else {
                throw UsageError("--mode must be video or audio, not '\(mode)'")
            }
            c.livingMediaMode = parsed
        }
        if let spec = try audioSource(&arguments) { c.audioSource = spec }
        if let kbps = try arguments.int("--audio-bitrate", in: 8...512) { c.audioBitrateKbps = kbps }
        if let ms = try arguments.int("--level-ms", in: 50...10_000) { c.audioLevelIntervalMilliseconds = ms }
        if c.livingMediaMode == .audio {
            // --source only picks the default sound here; the test pattern's is the tone.
            if let source = try arguments.source("--source") { c.source = source }
            do {
                _ = try c.audioSpec()
            } catch let error as LiveError {
                throw UsageError("--mode audio: \(error.detail)")
            }
        }
    }

    /// `--audio-source SPEC`, checked (the host's sound, and a co-host's in `guest --apply`).
    static func audioSource(_ arguments: inout Arguments) throws -> String? {
        guard let spec = try arguments.value("--audio-source") else { return nil }
        do {
            _ = try AudioSourceSpec(parsing: spec)
        } catch let error as LiveError {
            throw UsageError("--audio-source: \(error.detail)")
        }
        return spec
    }

    /// `--min-bitrate` and `--max-bitrate`: the adaptive bitrate's bounds, which must hold
    /// the `--bitrate` the stream starts at; nil with `--abr off`, where they mean nothing.
    private static func adaptiveBitrate(_ arguments: inout Arguments, abr: Bool, bitrate: Int,
                                        bitrateGiven: Int?) throws -> BitrateController.Settings? {
        let lowest = try arguments.int("--min-bitrate", in: 50...50_000)
        let highest = try arguments.int("--max-bitrate", in: 50...50_000)
        guard abr else {
            if lowest != nil || highest != nil {
                throw UsageError("--min-bitrate and --max-bitrate bound the adaptive bitrate, which --abr off turns off")
            }
            return nil
        }
        let start = bitrateGiven == nil ? "the default --bitrate \(bitrate)" : "--bitrate \(bitrate)"
        if let lowest, lowest > bitrate {
            throw UsageError("--min-bitrate \(lowest) is above \(start), the bitrate the stream starts at")
        }
        if let highest, highest < bitrate {
            throw UsageError("--max-bitrate \(highest) is below \(start), the bitrate the stream starts at")
        }
        return BitrateController.Settings(minKbps: lowest ?? min(200, bitrate), maxKbps: highest ?? bitrate)
    }

    /// `PATH` or `PATH@X,Y`; a position must lie on the picture of `configuration`.
    private static func parseLogo(_ text: String, on configuration: HosterConfiguration) throws -> (String, (x: Int, y: Int)?) {
        if let at = text.lastIndex(of: "@") {
            let position = text[text.index(after: at)...].split(separator: ",", omittingEmptySubsequences: false)
            if position.count == 2, let x = Int(position[0]), let y = Int(position[1]) {
                guard x >= 0, y >= 0 else { throw UsageError("--logo position must not be negative: '\(text)'") }
                let (width, height) = (configuration.width, configuration.height)
                guard x < width, y < height else {
                    throw UsageError("--logo position \(x),\(y) is off the \(width)x\(height) picture "
                                     + "(x must be below \(width), y below \(height))")
                }
                return (String(text[..<at]), (x, y))
            }
        }
        return (text, nil)
    }

    /// Reads the logo and checks that it lies wholly on the picture where it was asked
    /// to go; a logo that does not is a usage error (one that cannot be read fails as a file).
    static func checkLogo(_ configuration: HosterConfiguration) throws {
        guard let path = configuration.logoPath else { return }
        let logo = try ImageFile.read(path: path)
        do {
            _ = try configuration.logoPlacement(logoWidth: logo.width, logoHeight: logo.height)
        } catch {
            throw UsageError("--logo \(path): \(error)")
        }
    }

    /// Frames to capture for `--duration` (exact: duration × fps, rounded).
    var frameLimit: Int? { duration.map { max(1, Int(($0 * Double(configuration.fps)).rounded())) } }

    /// Where the sound stops for `--duration`.
    var audioLimit: MediaTime? { duration.map { MediaTime(micros: Int64($0 * 1_000_000)) } }
}
