import Foundation
import LiveAuth
import LiveCodec
import LiveCore
import LiveRTMP
import Synchronization

/// Where the guest shows its picture (seed: the render view of startRtmpPlay:render:).
/// `render` is called on the decode thread with a frame of `size` (the stream's own
/// size when nil), fitted by the guest's render mode; the frame is reused afterwards.
public protocol GuestVideoSink: AnyObject {
    var size: (width: Int, height: Int)? { get }
    func render(_ frame: VideoFrame)
}

/// The guest kit (seed: ARRtmpGuestKit): plays a hoster's stream with latency control
/// and reconnect, and reports the play events (`GuestEvent`).
///
///     let guest = Guest(options: options)
///     guest.onEvent = { event in … }          // ARGuestRtmpDelegate
///     try guest.startPlay(url: "rtmp://host/live/room", sink: view)
///     guest.stopPlay()
public final class Guest: @unchecked Sendable {
    // @unchecked: `pipeline` and `renderMode` under `lock`; scaling state on the decode thread.

    /// The seed's ARGuestOption plus the latency and reconnect settings.
    public struct Options: Sendable {
        /// Seed: videoMode / updatePlayerRenderModel:, aspect-fill by default.
        public var renderMode: RenderMode = .aspectFill
        /// The most received-but-unshown media tolerated before skipping to live, in ms.
        public var bufferTargetMilliseconds = 150
        /// Retries after a lost connection.
        public var reconnect = ReconnectBackoff()
        /// Connect and first-media (video or audio) limit.
        public var timeout: Duration = .seconds(10)
        /// The least time between two `hosterAudioActive` events in ms (the seed's
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

    public let options: Options
    /// Play events (seed: ARGuestRtmpDelegate), on the decode thread; set before `startPlay`.
    public var onEvent: ((GuestEvent) -> Void)?
    /// Every decoded audio frame of the played stream (planar float, the stream's rate
    /// and channels), on the decode thread; set before `startPlay`.
    public var onAudio: ((AudioFrame) -> Void)?
    /// The handler behind `onLineEvent` (Guest+Line.swift).
    let lineHandler = Mutex<(@Sendable (LineSessionEvent) -> Void)?>(nil)
    /// The co-host's camera controls, preview and raw-frame hook (Guest+Line.swift).
    let cohostCamera: CohostCamera

    let lock = NSLock()
    private var pipeline: GuestPipeline?
    private var renderMode: RenderMode
    /// The co-host line, from `joinLine` to `leaveLine` (under `lock`).
    var line: LineSession?
    /// The co-host push while accepted (under `lock`).
    var cohostPipeline: HosterPipeline?
    /// The guest's own audio / video switches (under `lock`).
    var localAV = (audio: true, video: true)
    /// The pipeline playing the program: `startPlay`'s, or one given by `setPlayingPipeline`
    /// (under `lock`).
    var playing: GuestPipeline?
    /// Co-hosts' own streams played by `setRemoteVideoRender`, by pubId (under `lock`).
    var remoteRenders: [String: GuestPipeline] = [:]
    /// Bumped by every stop of the co-host push, so a start still on its way after a
    /// stop does not publish (under `lock`).
    var cohostEpoch = 0
    // Decode thread.
    private let scaler = Scaler()
    private var pool: FramePool?

    public init(options: Options = Options()) {
        self.options = options
        renderMode = options.renderMode
        cohostCamera = CohostCamera(configuration: options.cohost)
    }

    /// Starts playing `url` into `sink` (seed: startRtmpPlay:render:). Returns at once;
    /// `ok` / `firstFrame` or `closed(code)` follow.
    public func startPlay(url: RTMPURL, sink: GuestVideoSink?) throws {
        var configuration = GuestPipeline.Configuration(url: url)
        configuration.bufferTargetMilliseconds = options.bufferTargetMilliseconds
        configuration.reconnect = options.reconnect
        configuration.timeout = options.timeout
        configuration.tokenProvider = options.tokenProvider
        configuration.audioLevelIntervalMilliseconds = options.audioLevelShowTimeMilliseconds
        let pipeline = try GuestPipeline(configuration: configuration)
        pipeline.onEvent = onEvent
        pipeline.onAudio = onAudio
        if let sink { pipeline.onFrame = { [weak self, weak sink] frame in if let sink { self?.show(frame, on: sink) } } }
        lock.lock()
        self.pipeline = pipeline
        playing = pipeline
        lock.unlock()
        try pipeline.start()
    }

    /// Seed: startRtmpPlay:render:.
    public func startPlay(url text: String, sink: GuestVideoSink?) throws {
        try startPlay(url: try RTMPURL(parsing: text), sink: sink)
    }

    /// Stops playing and waits for the end; `closed(.ok)` follows (seed: stopRtmpPlay).
    public func stopPlay() {
        guard let pipeline = current else { return }
        pipeline.stop()
        _ = try? pipeline.wait()
    }

    /// The program is played by `pipeline` rather than `startPlay` (the CLI plays with a
    /// pipeline of its own): while co-hosting, what it hears switches to the hear stream.
    public func setPlayingPipeline(_ pipeline: GuestPipeline?) {
        lock.lock()
        playing = pipeline
        lock.unlock()
    }

    /// The pipeline playing the program, if any.
    var playingPipeline: GuestPipeline? {
        lock.lock()
        defer { lock.unlock() }
        return playing
    }

    /// Seed: updatePlayerRenderModel:.
    public func setRenderMode(_ mode: RenderMode) {
        lock.lock()
        renderMode = mode
        lock.unlock()
    }

    /// Decode and latency figures (zero before `startPlay`).
    public var stats: GuestStats { current?.stats ?? GuestStats() }

    private var current: GuestPipeline? {
        lock.lock()
        defer { lock.unlock() }
        return pipeline
    }

    private func show(_ frame: VideoFrame, on sink: GuestVideoSink) {
        guard let size = sink.size, size.width != frame.width || size.height != frame.height else {
            return sink.render(frame)
        }
        if pool?.width != size.width || pool?.height != size.height {
            pool = FramePool(width: size.width, height: size.height, capacity: 3)
        }
        guard let out = pool?.acquire() else { return }
        lock.lock()
        let mode = renderMode
        lock.unlock()
        // Aspect-fit leaves bars: start from black.
        if mode == .aspectFit { out.fill(.black) }
        guard (try? scaler.scale(frame, into: out, mode: mode)) != nil else { return }
        out.pts = frame.pts
        out.captureTimeMicros = frame.captureTimeMicros
        sink.render(out)
    }
}
