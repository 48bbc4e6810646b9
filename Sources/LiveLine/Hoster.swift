import Foundation
import LiveAuth
import LiveCapture
import LiveCodec
import LiveCore
import LiveFilter
import LiveMix
import LiveRTMP

/// The hoster kit (seed: ARRtmpHosterKit): capture, filters, encode and push, with the
/// live controls of the seed's hoster and its publish events (`HosterEvent`).
///
///     let hoster = try Hoster(options: options)
///     hoster.onEvent = { event in … }               // ARHosterRtmpDelegate
///     hoster.setLocalVideoCapturer { frame in … }   // preview
///     try hoster.startPush(url: "rtmp://host/live/room")
///     hoster.setCameraZoom(2)
///     hoster.stopPush()
///
/// The controls may be called from any thread, before or during the push; they take
/// effect from the next captured frame.
public final class Hoster: @unchecked Sendable {
    // @unchecked: mutable state is touched under `lock`; the filters are thread-safe.

    /// The seed's ARHosterOption plus video config, and the push's reconnect and
    /// congestion settings.
    public struct Options: Sendable {
        /// Size, rate, bitrate, source, initial filters (seed: ARHosterOption / video config).
        public var configuration = HosterConfiguration()
        /// Sources `switchCamera` cycles through after `configuration.source`
        /// (`v4l2:/dev/video1`, `test`, …).
        public var otherSources: [String] = []
        /// Seed: cameraType. `.thirdFilter` runs `setRawFrameHook`'s hook on every frame.
        public var cameraType: CameraType = .normal
        /// Seed: the hoster's orientation (landscape or portrait); the picture's size says it.
        public var landscape = true
        /// Video and audio (default), or audio only: no picture, no video track (the
        /// anyRTC SDK's ARLivingMediaModeAudio). Stored in `configuration`.
        public var livingMediaMode: LivingMediaMode {
            get { configuration.livingMediaMode }
            set { configuration.livingMediaMode = newValue }
        }
        /// Reconnect, congestion threshold and adaptive bitrate of the push.
        public var push = RTMPPublishSink.Options()
        /// Fresh tokens for every connect and reconnect of the push (the anyRTC SDK's token
        /// provider, getRTCToken); the line session uses the same one. Stored in `push`.
        public var tokenProvider: TokenProvider? {
            get { push.tokenProvider }
            set { push.tokenProvider = newValue }
        }

        public init() {
            push.bitrate = BitrateController.Settings(minKbps: 200, maxKbps: configuration.bitrateKbps)
        }
    }

    public let options: Options
    /// Publish events (seed: ARHosterRtmpDelegate), on the publisher's loop thread, and
    /// the local audio level (`localAudioActive`) on the audio thread; set before `startPush`.
    public var onEvent: (@Sendable (HosterEvent) -> Void)?
    /// Co-host line events (seed: the hoster's RTC delegate), on the line's loop thread;
    /// set before `createLine`.
    public var onLineEvent: (@Sendable (LineSessionEvent) -> Void)?

    private let lock = NSLock()
    private let filters: FilterChain
    private var sourceIndex = 0
    private var pipeline: HosterPipeline?
    private var sink: RTMPPublishSink?
    private var preview: ((VideoFrame) -> Void)?
    private var rawHook: ((VideoFrame) -> VideoFrame)?
    private var videoEnabled = true
    private var audioEnabled = true
    /// The mix stage, made by the first push or co-host (see `mixStage()`).
    private var mix: HosterMix?
    /// The co-host line, from `createLine` to `closeLine`.
    var line: LineSession?
    /// The template and options the mix uses (setMixVideoModel / setVideoTemplate).
    var mixLayout: (template: MixTemplate, options: MixOptions)
    /// The shared picture and its events (Hoster+Share.swift).
    let shareState = HosterShare()

    public init(options: Options = Options()) throws {
        self.options = options
        mixLayout = (options.configuration.mixTemplate, options.configuration.mixOptions)
        filters = try options.configuration.makeFilterChain()
        // Preview sees what is sent (after filters); the raw hook sees the camera's frame.
        filters.insert(FrameHookFilter(name: "raw") { [weak self] frame in self?.runRawHook(frame) ?? frame }, at: 0)
        filters.append(FrameHookFilter(name: "preview") { [weak self] frame in
            self?.runPreview(frame)
            return frame
        })
    }

    // MARK: - Push

    /// Starts capture, encoding and the push to `url` (seed: startPushRtmpStream:);
    /// `extraSinks` (a recording) get the same packets. Throws when the first connect
    /// fails; later losses are retried (`HosterEvent.reconnecting`). `frameLimit` ends
    /// the run after that many video frames, `audioLimit` once the sound reaches that
    /// time (what ends an audio-only run).
    public func startPush(url: RTMPURL?, extraSinks: [EncodedVideoSink] = [], frameLimit: Int? = nil,
                          audioLimit: MediaTime? = nil) throws {
        let configuration = options.configuration
        let pipeline = try HosterPipeline(configuration: configuration, filters: filters, testMix: false)
        if pipeline.source != nil || pipeline.audioSource != nil {
            // Always in place, so co-hosts can join mid-push; without any it passes frames
            // (and sound) through.
            let mix = try mixStage()
            if pipeline.source != nil { pipeline.setMixStage(mix.process) }
            if pipeline.audioSource != nil { pipeline.setAudioStage(mix.process(audio:)) }
            pipeline.onEnd { [weak self] in
                mix.stop()
                self?.dropMix(mix)
            }
        }
        let onEvent = self.onEvent
        pipeline.onAudioLevel(every: configuration.audioLevelIntervalMilliseconds) { level in
            onEvent?(.localAudioActive(level: level, showTime: configuration.audioLevelIntervalMilliseconds))
        }
        extraSinks.forEach(pipeline.addSink)
        var sink: RTMPPublishSink?
        if let url {
            let push = RTMPPublishSink(url: url, options: options.push)
            push.encoder = pipeline.encoder
            push.onEvent = onEvent
            pipeline.addSink(push)
            sink = push
        }
        lock.lock()
        pipeline.setVideoEnabled(videoEnabled)
        pipeline.setAudioEnabled(audioEnabled)
        self.pipeline = pipeline
        self.sink = sink
        lock.unlock()
        try pipeline.start(frameLimit: frameLimit, audioLimit: audioLimit)
    }

    /// Starts the push to `url` (seed: startPushRtmpStream:).
    public func startPush(url text: String) throws {
        try startPush(url: try RTMPURL(parsing: text))
    }

    /// Stops capture and the push and waits for the end; `closed` follows (seed: stopRtmpStream).
    public func stopPush() {
        guard let pipeline = currentPipeline else { return }
        pipeline.stop()
        _ = try? pipeline.wait()
    }

    /// Waits up to `seconds` for the push to end (a frame limit, the source's end, a
    /// final failure); true when it has ended (throws its error then).
    public func wait(seconds: Double) throws -> Bool {
        guard let pipeline = currentPipeline else { return true }
        return try pipeline.wait(seconds: seconds)
    }

    /// Ends the push from any thread without waiting (Ctrl-C).
    public func requestStop() { currentPipeline?.stop() }

    /// The sound being sent (`tone 440 Hz`, …); nil without audio or before the push.
    public var audioSourceName: String? { currentPipeline?.audioSource?.name }

    /// The wall-clock time (µs since 1970) of the capture clock's zero (audio sample 0);
    /// nil before the push.
    public var captureClockZeroWallMicros: UInt64? { currentPipeline?.captureZeroWallMicros }

    /// Capture and encode figures (zero before the push).
    public var pipelineStats: PipelineStats { currentPipeline?.stats ?? PipelineStats() }

    /// The figures of the status event, now (zero without a push).
    public var pushStatus: HosterStatus {
        lock.lock()
        let sink = self.sink
        lock.unlock()
        return sink?.status ?? HosterStatus()
    }

    /// The mix stage, made on first use from the configuration (template, options, test
    /// co-hosts).
    func mixStage() throws -> HosterMix {
        lock.lock()
        defer { lock.unlock() }
        if let mix { return mix }
        var c = options.configuration
        (c.mixTemplate, c.mixOptions) = mixLayout
        let made = try c.makeMix() ?? HosterMix(width: c.width, height: c.height, template: c.mixTemplate, options: c.mixOptions)
        made.tokenProvider = options.tokenProvider
        // Each co-host's voice level, as a line event (seed: onRTCRemoteAudioActive).
        let showTime = c.audioLevelIntervalMilliseconds
        made.voices.onLevel(every: showTime) { [weak self] peerId, userId, level in
            self?.reportLine(.remoteAudioActive(peerId: peerId, userId: userId, level: level, showTime: showTime))
        }
        mix = made
        return made
    }

    /// The mix in use, if any.
    var currentMix: HosterMix? {
        lock.lock()
        defer { lock.unlock() }
        return mix
    }

    var currentLine: LineSession? {
        lock.lock()
        defer { lock.unlock() }
        return line
    }

    func setLine(_ session: LineSession) {
        lock.lock()
        line = session
        lock.unlock()
    }

    /// The line, which is no longer the hoster's afterwards.
    func takeLine() -> LineSession? {
        lock.lock()
        defer { lock.unlock() }
        let taken = line
        line = nil
        return taken
    }

    var mixLayoutNow: (template: MixTemplate, options: MixOptions) {
        lock.lock()
        defer { lock.unlock() }
        return mixLayout
    }

    func setMixLayout(_ template: MixTemplate, _ options: MixOptions) {
        lock.lock()
        mixLayout = (template, options)
        lock.unlock()
    }

    private func dropMix(_ ended: HosterMix) {
        lock.lock()
        if mix === ended { mix = nil }
        lock.unlock()
    }

    private var currentPipeline: HosterPipeline? {
        lock.lock()
        defer { lock.unlock() }
        return pipeline
    }

    // MARK: - Controls

    /// Shows each sent frame to `preview` on the capture thread (seed:
    /// setLocalVideoCapturer:); the frame is the pipeline's: copy what must outlive the call.
    public func setLocalVideoCapturer(_ preview: ((VideoFrame) -> Void)?) {
        lock.lock()
        self.preview = preview
        lock.unlock()
    }

    /// The app's own processing of each captured frame, before the built-in filters
    /// (seed: onRTCCaptureVideoPixelBuffer with camera type third-party filter). Runs on
    /// the capture thread; return the frame to send (the same one, edited, is fine).
    public func setRawFrameHook(_ hook: ((VideoFrame) -> VideoFrame)?) {
        lock.lock()
        rawHook = hook
        lock.unlock()
    }

    /// Off: one black frame a second goes out instead of the picture, so players keep
    /// playing, and the line's room hears remote AV status (seed: setLocalVideoEnable:).
    public func setLocalVideoEnable(_ enabled: Bool) {
        lock.lock()
        videoEnabled = enabled
        let pipeline = self.pipeline
        let status = (audio: audioEnabled, video: enabled)
        lock.unlock()
        pipeline?.setVideoEnabled(enabled)
        setLineAVStatus(audio: status.audio, video: status.video)
    }

    /// Off: the stream's audio track carries silence in place of the sound (its timing
    /// goes on, see `HosterPipeline.setAudioEnabled`), the local level events stop, and
    /// the line's room hears remote AV status (seed: setLocalAudioEnable:).
    public func setLocalAudioEnable(_ enabled: Bool) {
        lock.lock()
        audioEnabled = enabled
        let pipeline = self.pipeline
        let status = (audio: enabled, video: videoEnabled)
        lock.unlock()
        pipeline?.setAudioEnabled(enabled)
        setLineAVStatus(audio: status.audio, video: status.video)
    }

    /// The local audio and video switches, as the line's room should hear them.
    var localAVStatus: (audio: Bool, video: Bool) {
        lock.lock()
        defer { lock.unlock() }
        return (audioEnabled, videoEnabled)
    }

    /// Whether the sound is sent (`setLocalAudioEnable`).
    public var isLocalAudioEnabled: Bool {
        lock.lock()
        defer { lock.unlock() }
        return audioEnabled
    }

    /// Captures from the next configured source (seed: switchCamera): `configuration.source`
    /// then `otherSources`, round. Throws when the source cannot be made.
    public func switchCamera() throws {
        let all = [options.configuration.source] + options.otherSources
        guard all.count > 1 else { return }
        lock.lock()
        sourceIndex = (sourceIndex + 1) % all.count
        let spec = all[sourceIndex]
        let pipeline = self.pipeline
        lock.unlock()
        let c = options.configuration
        let source = try SourceSpec(parsing: spec).makeSource(width: c.width, height: c.height, fps: c.fps, realTime: c.realTime)
        pipeline?.switchSource(to: source)
    }

    /// The index in `[configuration.source] + otherSources` of the source in use.
    public var cameraIndex: Int {
        lock.lock()
        defer { lock.unlock() }
        return sourceIndex
    }

    /// Beauty, original or blur (seed: setCameraFilter:).
    public func setCameraFilter(_ mode: CameraFilterMode) {
        filters.remove(named: "beauty")
        filters.remove(named: "blur")
        guard let filter = mode == .beautiful ? BeautyFilter(strength: options.configuration.beautyStrength) : mode.makeFilter()
        else { return }
        // After the raw hook and zoom, before mirror, logo and preview.
        let names = filters.names
        let index = names.firstIndex(of: "zoom").map { $0 + 1 } ?? 1
        filters.insert(filter, at: index)
    }

    /// The digital zoom, 1.0…3.0 (seed: setCameraZoom: / getCameraZoom).
    public var cameraZoom: Double {
        get { filters.first(ZoomFilter.self)?.zoom ?? 1.0 }
        set {
            if let zoom = filters.first(ZoomFilter.self) {
                zoom.zoom = newValue
            } else {
                filters.insert(ZoomFilter(zoom: newValue), at: 1)
            }
        }
    }

    /// Seed: setCameraZoom:.
    public func setCameraZoom(_ zoom: Double) { cameraZoom = zoom }

    /// Mirrors the picture (seed: setFontCameraMirrorEnable:).
    public func setMirror(_ enabled: Bool) {
        if let mirror = filters.first(MirrorFilter.self) {
            mirror.isEnabled = enabled
        } else if enabled {
            let names = filters.names
            filters.insert(MirrorFilter(), at: names.firstIndex(of: "watermark") ?? names.count - 1)
        }
    }

    public var isMirrored: Bool { filters.first(MirrorFilter.self)?.isEnabled ?? false }

    /// A watermark at x, y; nil removes it (seed: setLogoView:).
    public func setLogo(_ logo: RGBAImage?, x: Int, y: Int) {
        if let watermark = filters.first(WatermarkFilter.self) {
            watermark.setLogo(logo, x: x, y: y)
        } else if let logo {
            filters.insert(WatermarkFilter(image: logo, x: x, y: y), at: filters.names.count - 1)
        }
    }

    // MARK: - Capture thread

    private func runRawHook(_ frame: VideoFrame) -> VideoFrame {
        guard options.cameraType == .thirdFilter else { return frame }
        lock.lock()
        let hook = rawHook
        lock.unlock()
        return hook?(frame) ?? frame
    }

    private func runPreview(_ frame: VideoFrame) {
        lock.lock()
        let preview = self.preview
        lock.unlock()
        preview?(frame)
    }
}
