import Foundation
import LiveAuth
import LiveCodec
import LiveCore
import LiveRTMP
import Synchronization

/// Where the guest shows its picture (the anyRTC SDK: the render view of
/// startRtmpPlay:render:). `render` is called on the decode thread with a frame of `size`
/// (the stream's own size when nil), fitted by the guest's render mode; the frame is
/// reused afterwards.
public protocol GuestVideoSink: AnyObject {
    var size: (width: Int, height: Int)? { get }
    func render(_ frame: VideoFrame)
}

/// The guest kit (the anyRTC SDK's ARRtmpGuestKit): plays a hoster's stream with latency
/// control and reconnect, and reports the play events (`GuestEvent`).
///
///     let guest = Guest(options: options)
///     guest.onEvent = { event in … }          // ARGuestRtmpDelegate
///     try guest.startPlay(url: "rtmp://host/live/room", sink: view)
///     …
///     guest.stopPlay()
///
/// One play at a time: `startPlay` while playing is refused (604). A play ends by
/// `stopPlay`, by the hoster stopping, by a failure, or by a limit in `PlayOptions`;
/// `closed(code)` says so, and `playEnd` then tells why.
public final class Guest: Sendable {

    /// The anyRTC SDK's ARGuestOption plus the latency and reconnect settings.
    public struct Options: Sendable {
        /// The anyRTC SDK's videoMode / updatePlayerRenderModel:, aspect-fill by default.
        public var renderMode: RenderMode = .aspectFill
        /// The most received-but-unshown media tolerated before skipping to live, in ms
        /// (latency control), and what the player refills after a stall before it shows
        /// pictures again (`buffering`); 0: no latency control.
        public var bufferTargetMilliseconds = 150
        /// Retries after a lost connection.
        public var reconnect = ReconnectBackoff()
        /// Connect and first-media (video or audio) limit; also the token provider's.
        public var timeout: Duration = .seconds(10)
        /// The least time between two `hosterAudioActive` events in ms (the anyRTC SDK's
        /// showTime); nil: no level events.
        public var audioLevelShowTimeMilliseconds: Int? = 500
        /// What the guest captures and publishes once accepted as a co-host (source,
        /// size, rate, bitrate, filters, and its sound: `audioSource`, by default what
        /// the source brings); 640x360 at 30 fps, 800 kbit/s by default. On an audio line
        /// only the sound is published.
        public var cohost: HosterConfiguration = {
            var c = HosterConfiguration()
            (c.width, c.height, c.bitrateKbps) = (640, 360, 800)
            return c
        }()
        /// Reconnect and congestion settings of the co-host push.
        public var cohostPush = RTMPPublishSink.Options()
        /// Fresh tokens for every connect and reconnect of the play and of the co-host push
        /// (the anyRTC SDK's token provider, getRTCToken); the line session uses the same one.
        /// Stored in `cohostPush` too.
        public var tokenProvider: TokenProvider? {
            didSet { cohostPush.tokenProvider = tokenProvider }
        }

        public init() {}
    }

    /// What one play writes besides the picture and sound it hands over, and when it
    /// ends by itself (LiveLine's own: the anyRTC SDK plays into a view only). Every
    /// path is checked when the play starts: one that cannot be written is refused then.
    public struct PlayOptions: Sendable {
        /// End after this many decoded frames.
        public var frameLimit: Int?
        /// End after this many seconds from `startPlay`.
        public var duration: Double?
        /// Write the last decoded frame to this PNG at the end.
        public var snapshotPath: String?
        /// Write decoded frames as YUV4MPEG2 here ("-": standard output); a size change
        /// mid-stream is fitted to the first size.
        public var y4mPath: String?
        /// Record the received packets (video and audio) to this .flv/.mp4, without
        /// re-encoding; it starts at 0 with the first keyframe. A failed write ends the
        /// recording (`recordingFailed`), not the play.
        public var recordPath: String?
        /// Both tracks as received (H.264, AAC) in one .nut/.mkv ("-": NUT on standard
        /// output); a failed write ends the play.
        public var outPath: String?
        /// Decoded audio as a 16-bit PCM WAV ("-": standard output, streaming header).
        public var wavPath: String?
        /// Decoded audio as raw s16le interleaved samples ("-": standard output).
        public var pcmPath: String?

        public init() {}
    }

    /// How a play ended (`playEnd`).
    public struct PlayEnd: Sendable {
        /// Why: a `PlayOptions` limit, the stream ended, `stopPlay` (or the reader of a
        /// standard-output output went away), or a failure.
        public var reason: GuestEndReason
        /// What failed (`reason` `.failed`): the connect or the play refused, no media
        /// within the timeout, an output, the token provider.
        public var error: (any Error)?
    }

    public let options: Options

    /// Play events (the anyRTC SDK's ARGuestRtmpDelegate), on the decode thread. Any
    /// thread may set it, at any time; each event goes to the handler set then.
    public var onEvent: (@Sendable (GuestEvent) -> Void)? {
        get { handlers.withLock { $0.event } }
        set { handlers.withLock { $0.event = newValue } }
    }

    /// Every decoded audio frame of what the guest hears (planar float, the stream's rate
    /// and channels; the hear stream's while co-hosting), on the decode thread. Any
    /// thread may set it, at any time.
    public var onAudio: (@Sendable (AudioFrame) -> Void)? {
        get { handlers.withLock { $0.audio } }
        set { handlers.withLock { $0.audio = newValue } }
    }

    /// Co-host line events (the anyRTC SDK's ARGuestRtcDelegate), most on the line's loop
    /// thread; `LineSessionEvent` says which come from others (the co-host push's, the
    /// played co-host streams', `leaveLine`'s `.lineClosed` on its caller's). Any thread
    /// may set it, at any time.
    public var onLineEvent: (@Sendable (LineSessionEvent) -> Void)? {
        get { handlers.withLock { $0.lineEvent } }
        set { handlers.withLock { $0.lineEvent = newValue } }
    }

    private struct Handlers {
        var event: (@Sendable (GuestEvent) -> Void)?
        var audio: (@Sendable (AudioFrame) -> Void)?
        var lineEvent: (@Sendable (LineSessionEvent) -> Void)?
        var renderMode: RenderMode
    }

    private let handlers: Mutex<Handlers>
    /// The co-host's camera controls, preview and raw-frame hook (Guest+Line.swift).
    let cohostCamera: CohostCamera

    /// The play, the co-host line and its push, shared by the callers' threads, the
    /// line's loop and the push's threads (Guest+Line.swift too).
    struct Shared {
        /// The co-host line, from `joinLine` to `leaveLine`.
        var line: LineSession?
        /// The co-host push while accepted.
        var cohostPipeline: HosterPipeline?
        /// The guest's own audio / video switches.
        var localAV = (audio: true, video: true)
        /// The pipeline playing the program, from `startPlay` on; the last one stays after
        /// its end, for `stats` and `playEnd`.
        var playing: GuestPipeline?
        /// Co-hosts' own streams played by `setRemoteVideoRender`, by pubId.
        var remoteRenders: [String: GuestPipeline] = [:]
        /// Bumped by every stop of the co-host push, so a start still on its way after a
        /// stop does not publish.
        var cohostEpoch = 0
    }

    let shared = Mutex(Shared())

    public init(options: Options = Options()) {
        self.options = options
        handlers = Mutex(Handlers(renderMode: options.renderMode))
        cohostCamera = CohostCamera(configuration: options.cohost)
    }

    /// A kit let go while it plays stops its play (without waiting): nobody could stop
    /// it any more, and its events would go nowhere.
    deinit {
        shared.withLock { $0.playing }?.stop()
    }

    /// Starts playing `url` into `sink` (the anyRTC SDK's startRtmpPlay:render:) and
    /// returns at once: the connect, and the token provider's answer, come later on the
    /// player's own thread; `ok` / `firstFrame` or `closed(code)` follow. `play` adds
    /// outputs and limits. Throws when a play is already running (604: `stopPlay` first)
    /// or an output cannot be opened.
    public func startPlay(url: RTMPURL, sink: GuestVideoSink?, play: PlayOptions = PlayOptions()) throws {
        try startPlay(url: PlayURL.rtmp(url), sink: sink, play: play)
    }

    /// Starts playing an RTMP or HTTP-FLV stream (`http://…/live/room.flv`, LiveLine's
    /// own); the same play, events, reconnect and outputs as `startPlay(url:sink:play:)`.
    public func startPlay(url: PlayURL, sink: GuestVideoSink?, play: PlayOptions = PlayOptions()) throws {
        var configuration = playConfiguration(url: url)
        configuration.audioLevelIntervalMilliseconds = options.audioLevelShowTimeMilliseconds
        configuration.frameLimit = play.frameLimit
        configuration.duration = play.duration
        configuration.snapshotPath = play.snapshotPath
        configuration.y4mPath = play.y4mPath
        configuration.recordPath = play.recordPath
        configuration.outPath = play.outPath
        configuration.wavPath = play.wavPath
        configuration.pcmPath = play.pcmPath
        // Before the outputs open: a refused second play must not touch the first one's files.
        try claimPlay(nil)
        let pipeline = try GuestPipeline(configuration: configuration)
        pipeline.onEvent = { [weak self] event in self?.onEvent?(event) }
        pipeline.onAudio = { [weak self] frame in self?.onAudio?(frame) }
        if let sink {
            let fitter = SinkFitter()
            pipeline.onFrame = { [weak self, weak sink] frame in
                guard let self, let sink else { return }
                fitter.show(frame, on: sink, mode: handlers.withLock { $0.renderMode })
            }
        }
        // Two startPlay calls at once: the second one is refused here.
        try claimPlay(pipeline)
        do {
            try pipeline.start()
        } catch {
            // It never ran: it is not playing, and no later play is refused for it.
            shared.withLock { shared in
                if shared.playing === pipeline { shared.playing = nil }
            }
            throw error
        }
    }

    /// A play of `url` with the kit's options: timeout, reconnect, latency control (0:
    /// none), tokens; no level events, outputs or limits.
    func playConfiguration(url: RTMPURL) -> GuestPipeline.Configuration {
        playConfiguration(url: PlayURL.rtmp(url))
    }

    func playConfiguration(url: PlayURL) -> GuestPipeline.Configuration {
        var configuration = GuestPipeline.Configuration(url: url)
        configuration.bufferTargetMilliseconds = options.bufferTargetMilliseconds > 0 ? options.bufferTargetMilliseconds : nil
        configuration.reconnect = options.reconnect
        configuration.timeout = options.timeout
        configuration.tokenProvider = options.tokenProvider
        configuration.audioLevelIntervalMilliseconds = nil
        return configuration
    }

    /// Refuses a play while one runs (604); otherwise `pipeline`, when given, becomes the
    /// one playing.
    private func claimPlay(_ pipeline: GuestPipeline?) throws {
        try shared.withLock { (shared) throws(LiveError) in
            if let current = shared.playing, current.endReason == nil {
                throw LiveError(.alreadyOpen, "already playing: call stopPlay first")
            }
            if let pipeline { shared.playing = pipeline }
        }
    }

    /// The anyRTC SDK's startRtmpPlay:render:, with the URL as text. A URL without a
    /// server (`live/room`) plays from `LiveLineSDK.defaultServer`; an `http://` URL is
    /// played as HTTP-FLV.
    public func startPlay(url text: String, sink: GuestVideoSink?, play: PlayOptions = PlayOptions()) throws {
        if text.lowercased().hasPrefix("http://") || text.lowercased().hasPrefix("https://") {
            return try startPlay(url: PlayURL(parsing: text), sink: sink, play: play)
        }
        try startPlay(url: try LiveLineSDK.pushURL(text), sink: sink, play: play)
    }

    /// Stops playing (the anyRTC SDK's stopRtmpPlay) and waits for the end: the outputs
    /// finished, the player closed (a few seconds at most, when the server does not
    /// answer the close); `closed(.ok)` has been delivered when it returns. Called from
    /// the play's own handlers (`onEvent`, `onAudio`, the sink: its decode thread), it
    /// asks for the end and returns at once, as the end comes on that thread after the
    /// handler returns. `stopPlay(completion:)` never waits.
    public func stopPlay() {
        guard let pipeline = playingPipeline else { return }
        pipeline.stop()
        if !pipeline.isDecodeThread { _ = try? pipeline.wait() }
    }

    /// Stops playing and returns at once; `completion` runs on a thread of its own once
    /// the play has ended (at once when nothing plays).
    public func stopPlay(completion: @escaping @Sendable () -> Void) {
        guard let pipeline = playingPipeline else { return completion() }
        pipeline.stop()
        Thread.detachNewThread {
            _ = try? pipeline.wait()
            completion()
        }
    }

    /// True from `startPlay` until the play has ended.
    public var isPlaying: Bool { playingPipeline.map { $0.endReason == nil } ?? false }

    /// How the last play ended; nil before any and while one runs.
    public var playEnd: PlayEnd? {
        guard let pipeline = playingPipeline, let reason = pipeline.endReason else { return nil }
        return PlayEnd(reason: reason, error: pipeline.error)
    }

    /// The pipeline playing the program (the last one after its end), if any.
    var playingPipeline: GuestPipeline? {
        shared.withLock { $0.playing }
    }

    /// How the picture fills the sink (the anyRTC SDK's updatePlayerRenderModel:), from
    /// the next frame on; any thread.
    public func setRenderMode(_ mode: RenderMode) {
        handlers.withLock { $0.renderMode = mode }
    }

    /// The render mode in use (`options.renderMode` until `setRenderMode`).
    public var renderMode: RenderMode { handlers.withLock { $0.renderMode } }

    /// Decode, latency and receive figures of the play (the last one's after its end;
    /// zero before `startPlay`); any thread.
    public var stats: GuestStats { playingPipeline?.stats ?? GuestStats() }
}

/// Fits each shown frame to a sink's size by the render mode. One per play, confined to
/// its decode thread.
private final class SinkFitter {
    private let scaler = Scaler()
    private var pool: FramePool?

    func show(_ frame: VideoFrame, on sink: GuestVideoSink, mode: RenderMode) {
        guard let size = sink.size, size.width != frame.width || size.height != frame.height else {
            return sink.render(frame)
        }
        if pool?.width != size.width || pool?.height != size.height {
            pool = FramePool(width: size.width, height: size.height, capacity: 3)
        }
        guard let out = pool?.acquire() else { return }
        // Aspect-fit leaves bars: start from black.
        if mode == .aspectFit { out.fill(.black) }
        guard (try? scaler.scale(frame, into: out, mode: mode)) != nil else { return }
        out.pts = frame.pts
        out.captureTimeMicros = frame.captureTimeMicros
        sink.render(out)
    }
}
