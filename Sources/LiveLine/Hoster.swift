import Foundation
import LiveAuth
import LiveCapture
import LiveCodec
import LiveCore
import LiveFilter
import LiveMix
import LiveRTMP
import LiveSignal
import Synchronization

/// The hoster kit (the anyRTC SDK's ARRtmpHosterKit): capture, filters, mix, encode and
/// push, with the live controls of the SDK's hoster, its publish events (`HosterEvent`)
/// and its co-host line (`Hoster+Line`, `LineSessionEvent`).
///
///     let hoster = try Hoster(options: options)
///     hoster.onEvent = { event in … }               // ARHosterRtmpDelegate
///     hoster.setLocalVideoCapturer { frame in … }   // preview
///     try hoster.startPush(url: "rtmp://host/live/room")   // returns at once; `.ok` follows
///     hoster.setCameraZoom(2)
///     hoster.stopPush()                              // returns at once; `.closed` follows
///
/// Calling style: nothing here blocks its caller for a network round trip. `startPush`
/// and `stopPush`, `createLine` and `closeLine` return at once and their outcome
/// arrives as events (`ok` / `failed` / `closed`, `lineResult` …), as the SDK's
/// delegates report it; `wait(seconds:)` waits for the push's end when a caller wants to,
/// and `closeLine(completion:)` runs a completion once the line's connection has closed
/// (for a program about to exit).
///
/// The controls may be called from any thread, before or during the push; they take
/// effect from the next captured frame.
///
/// Not applicable on Linux, so not offered: the SDK's `openCameraTorchMode:` (V4L2
/// cameras have no torch control), `setCameraFocusImage:` as a tap-to-focus image
/// (focus is `setCameraFocus`, through the camera's V4L2 controls), and `clear` as a
/// destructor (releasing the object is enough; `clear()` here stops the push and
/// closes the line). `initEngine:token:` has no app id to configure (the server is
/// the relay named by the URL; tokens go in `Options.tokenProvider` or `createLine`),
/// and `configServerForPriCloud:port:` is `LiveLineSDK.defaultServer`.
public final class Hoster: Sendable {
    /// Why a control was refused.
    public enum Error: Swift.Error, Equatable, CustomStringConvertible, Sendable {
        /// `startPush` while a push runs (or is still stopping).
        case alreadyPushing
        /// The source in use is no V4L2 camera, or the camera lacks the control.
        case noCameraControl(String)

        public var description: String {
            switch self {
            case .alreadyPushing:
                "a push is already running (or still stopping): call stopPush and wait for its closed event first"
            case .noCameraControl(let why): why
            }
        }
    }

    /// The anyRTC SDK's ARHosterOption plus video config, and the push's reconnect and
    /// congestion settings. The SDK's orientation (landscape or portrait) has no option:
    /// the picture's size (`configuration.width` and `height`) decides it.
    public struct Options: Sendable {
        /// Size, rate, bitrate, source, initial filters (ARHosterOption / video config).
        /// The adaptive bitrate's ceiling (`push.bitrate`) follows `bitrateKbps` while it
        /// equals it, so the push never climbs above the bitrate asked for unless a higher
        /// ceiling was set apart.
        public var configuration = HosterConfiguration() {
            didSet {
                guard var bitrate = push.bitrate, bitrate.maxKbps == oldValue.bitrateKbps,
                      configuration.bitrateKbps != oldValue.bitrateKbps else { return }
                let defaults = BitrateController.Settings(minKbps: bitrate.minKbps, maxKbps: bitrate.maxKbps)
                let followed = BitrateController.Settings(minKbps: min(bitrate.minKbps, configuration.bitrateKbps),
                                                          maxKbps: configuration.bitrateKbps)
                bitrate.minKbps = followed.minKbps
                bitrate.maxKbps = followed.maxKbps
                // A step left at its default follows the ceiling too.
                if bitrate.stepKbps == defaults.stepKbps { bitrate.stepKbps = followed.stepKbps }
                push.bitrate = bitrate
            }
        }
        /// Sources `switchCamera` cycles through after `configuration.source`
        /// (`v4l2:/dev/video1`, `test`, …).
        public var otherSources: [String] = []
        /// The SDK's cameraType. `.thirdFilter` runs `setRawFrameHook`'s hook on every frame.
        public var cameraType: CameraType = .normal
        /// Video and audio (default), or audio only: no picture, no video track (the
        /// anyRTC SDK's livingMediaMode, ARLivingMediaModeAudio). Stored in `configuration`.
        public var livingMediaMode: LivingMediaMode {
            get { configuration.livingMediaMode }
            set { configuration.livingMediaMode = newValue }
        }
        /// What the co-hosts publish (the anyRTC SDK's linkMediaModel, ARLinkMediaMode:
        /// video = 0, audio = 1, the same values as `LivingMediaMode`): `.video` (camera and
        /// sound, a tile in the mix; the default) or `.audio` (sound only: the line is an
        /// audio line, its co-hosts push no picture and get no tile, their voices are in
        /// the mix). A hoster in audio mode always opens an audio line.
        public var linkMediaMode: LivingMediaMode = .video
        /// Reconnect, congestion threshold and adaptive bitrate of the push.
        public var push = RTMPPublishSink.Options()
        /// Fresh tokens for every connect and reconnect of the push (the anyRTC SDK's token
        /// provider, getRTCToken); the line session uses the same one. Stored in `push`.
        public var tokenProvider: TokenProvider? {
            get { push.tokenProvider }
            set { push.tokenProvider = newValue }
        }

        /// Whether the line is an audio line: the live or the link is audio.
        var audioLine: Bool { livingMediaMode == .audio || linkMediaMode == .audio }

        public init() {
            push.bitrate = BitrateController.Settings(minKbps: 200, maxKbps: configuration.bitrateKbps)
        }
    }

    /// Makes the video source a spec names (`configuration.source`, `otherSources`).
    typealias SourceMaker = @Sendable (String, HosterConfiguration) throws -> VideoSource

    /// What the kit holds between calls, under `state`.
    struct State: ~Copyable {
        var sourceIndex = 0
        var pipeline: HosterPipeline?
        var sink: RTMPPublishSink?
        /// The camera in use (the last source made, when it is a V4L2 camera), for its controls.
        var camera: CameraControls?
        /// The name of the source in use (for errors about its controls).
        var sourceName: String?
        var preview: (@Sendable (VideoFrame) -> Void)?
        var rawHook: (@Sendable (VideoFrame) -> VideoFrame)?
        var videoEnabled = true
        var audioEnabled = true
        /// The mix stage, made by the first push or co-host (see `mixStage()`).
        var mix: HosterMix?
        /// The co-host line, from `createLine` to `closeLine`.
        var line: LineSession?
        /// The template and options the mix uses (setMixVideoModel / setVideoTemplate).
        var mixLayout: (template: MixTemplate, options: MixOptions)
        /// The fill image of co-host tiles without video (setVideoSubBackground).
        var subBackground: RGBAImage?
        /// The push is connecting for the first time: line opens wait for it (see `whenPushSettled`).
        var pushOpening = false
        var afterPushOpened: [@Sendable () -> Void] = []
        /// The push published and has not ended: the line's guests hear the live is on.
        var live = false
        /// The captured picture's size so far in this push (first-frame and size events).
        var localSize: (width: Int, height: Int)?
        /// When each co-host's level last went to the room (µs, monotonic), by peerId.
        var levelSentMicros: [String: UInt64] = [:]
    }

    public let options: Options
    private let pushHandler = Mutex<(@Sendable (HosterEvent) -> Void)?>(nil)
    /// The handler behind `onLineEvent` (Hoster+Line.swift).
    let lineHandler = Mutex<(@Sendable (LineSessionEvent) -> Void)?>(nil)
    let state: Mutex<State>
    private let filters: FilterChain
    private let makeSource: SourceMaker
    /// The shared picture and its events (Hoster+Share.swift).
    let shareState = HosterShare()

    /// Publish and local-picture events (the anyRTC SDK's ARHosterRtmpDelegate and its
    /// onRTCFirstLocalVideoFrame / onRTCLocalVideoViewChanged): on the publisher's loop
    /// thread (`ok`, `reconnecting`, `status`, `failed`, `closed`; a first connect that
    /// fails on the push's start thread), the capture thread (the local picture) and the
    /// audio thread (`localAudioActive`). May be set or replaced at any time, from any thread.
    public var onEvent: (@Sendable (HosterEvent) -> Void)? {
        get { pushHandler.withLock { $0 } }
        set { pushHandler.withLock { $0 = newValue } }
    }

    public convenience init(options: Options = Options()) throws {
        try self.init(options: options) { spec, c in
            try SourceSpec(parsing: spec).makeSource(width: c.width, height: c.height, fps: c.fps, realTime: c.realTime)
        }
    }

    /// A kit whose video sources come from `makeSource` (tests hand in simulated cameras).
    init(options: Options, makeSource: @escaping SourceMaker) throws {
        self.options = options
        self.makeSource = makeSource
        state = Mutex(State(mixLayout: (options.configuration.mixTemplate, options.configuration.mixOptions)))
        filters = try options.configuration.makeFilterChain()
        // Preview sees what is sent (after filters); the raw hook sees the camera's frame.
        filters.insert(FrameHookFilter(name: "raw") { [weak self] frame in self?.runRawHook(frame) ?? frame }, at: 0)
        filters.append(FrameHookFilter(name: "preview") { [weak self] frame in
            self?.runPreview(frame)
            return frame
        })
    }

    // MARK: - Push

    /// Starts capture, encoding and the push to `url` (the anyRTC SDK's
    /// startPushRtmpStream:) and returns at once: the connect runs on a thread of its own.
    /// `ok` follows once the server takes the stream (the line's guests then hear
    /// liveStart), or `failed` with its code when the first connect fails (100 no
    /// answer, 104/202/213 refused …; the run then ends and `wait` throws why); later
    /// losses are retried (`reconnecting`). Without `url` the run only records.
    /// `extraSinks` (a recording) get the same packets. `frameLimit` ends the run after
    /// that many video frames, `audioLimit` once the sound reaches that time (what ends an
    /// audio-only run).
    ///
    /// Throws `Error.alreadyPushing` while a push runs or is still stopping (one push per
    /// kit, never a second pipeline beside the first), and at once what cannot be made
    /// (the source, the encoder, the mix).
    public func startPush(url: RTMPURL?, extraSinks: [EncodedVideoSink] = [], frameLimit: Int? = nil,
                          audioLimit: MediaTime? = nil) throws {
        guard !isPushing else { throw Error.alreadyPushing }
        let configuration = options.configuration
        let firstSource = configuration.livingMediaMode == .audio ? nil : try makeSource(configuration.source, configuration)
        let pipeline = try HosterPipeline(configuration: configuration, source: firstSource, filters: filters, testMix: false)
        let (camera, sourceName) = (CameraControls(firstSource), firstSource?.name)
        // Claimed before anything else runs: a second caller racing this one gets the error.
        let claimed = state.withLock { state -> Bool in
            if let running = state.pipeline, !running.hasEnded { return false }
            state.pipeline = pipeline
            state.sink = nil
            state.camera = camera
            state.sourceName = sourceName
            state.sourceIndex = 0
            state.localSize = nil
            state.pushOpening = url != nil
            pipeline.setVideoEnabled(state.videoEnabled)
            pipeline.setAudioEnabled(state.audioEnabled)
            return true
        }
        guard claimed else { throw Error.alreadyPushing }
        do {
            if pipeline.source != nil || pipeline.audioSource != nil {
                // Always in place, so co-hosts can join mid-push; without any it passes frames
                // (and sound) through.
                let mix = try mixStage()
                if pipeline.source != nil { pipeline.setMixStage(mix.process) }
                if pipeline.audioSource != nil { pipeline.setAudioStage(mix.process(audio:)) }
                pipeline.onEnd { [weak self] in
                    mix.stop()
                    self?.dropMix(mix)
                    // Capture is over: the live is, whatever the connection does next.
                    self?.setLive(false)
                }
            }
        } catch {
            state.withLock { state in
                state.pipeline = nil
                state.pushOpening = false
            }
            throw error
        }
        pipeline.onSourceFrame { [weak self] frame, source in self?.sourceFrame(frame, from: source) }
        pipeline.onAudioLevel(every: configuration.audioLevelIntervalMilliseconds) { [weak self] level in
            self?.emit(.localAudioActive(level: level, showTime: configuration.audioLevelIntervalMilliseconds))
        }
        extraSinks.forEach(pipeline.addSink)
        if let url {
            let push = RTMPPublishSink(url: url, options: options.push)
            push.encoder = pipeline.encoder
            push.onEvent = { [weak self] event in self?.pushEvent(event) }
            pipeline.addSink(push)
            state.withLock { $0.sink = push }
        }
        pipeline.startInBackground(frameLimit: frameLimit, audioLimit: audioLimit)
    }

    /// Starts the push to `url` (the anyRTC SDK's startPushRtmpStream:); see
    /// `startPush(url:extraSinks:frameLimit:audioLimit:)`. A URL without a server
    /// (`live/room`) goes to `LiveLineSDK.defaultServer`.
    public func startPush(url text: String) throws {
        try startPush(url: try LiveLineSDK.pushURL(text))
    }

    /// Stops capture and the push (the anyRTC SDK's stopRtmpStream) and returns at once:
    /// queued frames are encoded and sent, the connection closed, then `closed` comes
    /// (and the line's guests hear liveStop). The line stays open (the SDK's stop also
    /// closes its RTC service: call `closeLine`, or `clear`, for that). `wait(seconds:)`
    /// waits for the end. Nothing happens without a push.
    public func stopPush() {
        currentPipeline?.stop()
    }

    /// Stops the push and closes the line (the anyRTC SDK's clear, before the kit goes);
    /// returns at once.
    public func clear() {
        stopPush()
        closeLine()
    }

    /// Waits up to `seconds` for the push to end (a frame limit, the source's end, a
    /// final failure, `stopPush`); true when it has ended (throws its error then).
    public func wait(seconds: Double) throws -> Bool {
        guard let pipeline = currentPipeline else { return true }
        return try pipeline.wait(seconds: seconds)
    }

    /// Ends the push from any thread without waiting (Ctrl-C); the same as `stopPush`.
    public func requestStop() { stopPush() }

    /// True from `startPush` until the push has ended.
    public var isPushing: Bool {
        state.withLock { state in state.pipeline.map { !$0.hasEnded } ?? false }
    }

    /// True while the push is published (from its first `ok` to its end): what the line's
    /// guests hear as liveStart / liveStop.
    public var isLive: Bool { state.withLock { $0.live } }

    /// The sound being sent (`tone 440 Hz`, …); nil without audio or before the push.
    public var audioSourceName: String? { currentPipeline?.audioSource?.name }

    /// The wall-clock time (µs since 1970) of the capture clock's zero (audio sample 0);
    /// nil before capture has started (it starts once the push has connected).
    public var captureClockZeroWallMicros: UInt64? { currentPipeline?.captureZeroWallMicros }

    /// Capture and encode figures (zero before the push).
    public var pipelineStats: PipelineStats { currentPipeline?.stats ?? PipelineStats() }

    /// The figures of the status event, now (zero without a push).
    public var pushStatus: HosterStatus {
        state.withLock { $0.sink }?.status ?? HosterStatus()
    }

    /// Runs `body` once the push has published or failed its first connect, at once when
    /// no first connect is under way (the line's create proves the publisher: it must
    /// not overtake the publish). Any thread; `body` runs on the push's thread or the caller's.
    func whenPushSettled(_ body: @escaping @Sendable () -> Void) {
        let now = state.withLock { state -> Bool in
            guard state.pushOpening else { return true }
            state.afterPushOpened.append(body)
            return false
        }
        if now { body() }
    }

    /// A publish event: the live switch and the waiting line opens, then the app's handler.
    private func pushEvent(_ event: HosterEvent) {
        switch event {
        case .ok: setLive(true)
        case .failed, .closed: setLive(false)
        default: break
        }
        emit(event)
    }

    /// The push is on (published) or off (stopped, failed): the line is told once per
    /// change, so its guests hear liveStart / liveStop.
    private func setLive(_ live: Bool) {
        let (changed, waiting, line) = state.withLock { state in
            let changed = state.live != live
            state.live = live
            let waiting = state.afterPushOpened
            state.afterPushOpened = []
            state.pushOpening = false
            return (changed, waiting, state.line)
        }
        waiting.forEach { $0() }
        guard changed, let line else { return }
        line.send { [refusal = lineRefusal] in $0.setLive(live, reply: refusal) }
    }

    func emit(_ event: HosterEvent) { pushHandler.withLock { $0 }?(event) }

    /// The mix stage, made on first use from the configuration (template, options, test
    /// co-hosts, the co-hosts' fill image).
    func mixStage() throws -> HosterMix {
        try state.withLock { state in
            if let mix = state.mix { return mix }
            var c = options.configuration
            (c.mixTemplate, c.mixOptions) = state.mixLayout
            let made = try c.makeMix() ?? HosterMix(width: c.width, height: c.height, template: c.mixTemplate, options: c.mixOptions)
            made.tokenProvider = options.tokenProvider
            if let image = state.subBackground { made.setSubBackground(image) }
            // Each co-host's voice level, as a line event (the SDK's onRTCRemoteAudioActive).
            let showTime = c.audioLevelIntervalMilliseconds
            made.voices.onLevel(every: showTime) { [weak self] peerId, userId, level in
                self?.reportLine(.remoteAudioActive(peerId: peerId, userId: userId, level: level, showTime: showTime))
                self?.tellRoomLevel(peerId: peerId, level: level, showTime: showTime)
            }
            state.mix = made
            return made
        }
    }

    /// The least time between two reports of one co-host's level to the room: the line's
    /// request budget (20 a second) must hold three co-hosts at any `showTime`.
    static let roomLevelIntervalMicros: UInt64 = 500_000

    /// Sends a co-host's level to the line, at most every `roomLevelIntervalMicros`, so
    /// the room's guests hear it as `remoteAudioActive` (audio thread).
    private func tellRoomLevel(peerId: String, level: Int, showTime: Int) {
        let now = Clock.monotonicMicros()
        let line = state.withLock { state -> LineSession? in
            guard let line = state.line, now >= (state.levelSentMicros[peerId] ?? 0) + Self.roomLevelIntervalMicros else { return nil }
            state.levelSentMicros[peerId] = now
            return line
        }
        guard let line else { return }
        var request = LineRequest(op: .audioLevel, peerId: peerId)
        (request.level, request.showTime) = (level, max(showTime, Int(Self.roomLevelIntervalMicros / 1000)))
        let sent = request
        line.send { client in client.send(sent) }
    }

    /// The mix in use, if any.
    var currentMix: HosterMix? { state.withLock { $0.mix } }

    var currentLine: LineSession? { state.withLock { $0.line } }

    func setLine(_ session: LineSession) { state.withLock { $0.line = session } }

    /// The line, which is no longer the hoster's afterwards.
    func takeLine() -> LineSession? {
        state.withLock { state in
            let taken = state.line
            state.line = nil
            return taken
        }
    }

    /// Forgets `session` when it is still the hoster's line (it ended by itself).
    func takeLine(ifItIs session: LineSession) {
        state.withLock { state in
            if state.line === session { state.line = nil }
        }
    }

    var mixLayoutNow: (template: MixTemplate, options: MixOptions) { state.withLock { $0.mixLayout } }

    func setMixLayout(_ template: MixTemplate, _ options: MixOptions) { state.withLock { $0.mixLayout = (template, options) } }

    private func dropMix(_ ended: HosterMix) {
        state.withLock { state in
            if state.mix === ended { state.mix = nil }
        }
    }

    private var currentPipeline: HosterPipeline? { state.withLock { $0.pipeline } }

    // MARK: - Controls

    /// Shows each sent frame to `preview` on the capture thread (the anyRTC SDK's
    /// setLocalVideoCapturer:): this hoster's own picture after the filters, before the
    /// mix. The frame is the pipeline's: copy what must outlive the call. nil removes it.
    public func setLocalVideoCapturer(_ preview: (@Sendable (VideoFrame) -> Void)?) {
        state.withLock { $0.preview = preview }
    }

    /// The app's own processing of each captured frame, before the built-in filters
    /// (the anyRTC SDK's onRTCCaptureVideoPixelBuffer with camera type third-party
    /// filter; only with `Options.cameraType` `.thirdFilter`). Runs on the capture thread;
    /// return the frame to send (the same one, edited, is fine).
    public func setRawFrameHook(_ hook: (@Sendable (VideoFrame) -> VideoFrame)?) {
        state.withLock { $0.rawHook = hook }
    }

    /// Off: this hoster's own picture is black, at the normal frame rate, inside the mix
    /// (co-hosts stay visible; without co-hosts the stream is the black picture), so
    /// players keep playing; the filters and the preview pause. The line's room hears
    /// remote AV status for the hoster (the anyRTC SDK's setLocalVideoEnable:).
    public func setLocalVideoEnable(_ enabled: Bool) {
        let (pipeline, audio) = state.withLock { state in
            state.videoEnabled = enabled
            return (state.pipeline, state.audioEnabled)
        }
        pipeline?.setVideoEnabled(enabled)
        setLineAVStatus(audio: audio, video: enabled)
    }

    /// Whether the picture is sent (`setLocalVideoEnable`).
    public var isLocalVideoEnabled: Bool { state.withLock { $0.videoEnabled } }

    /// Off: the stream's audio track carries silence in place of the sound (its timing
    /// goes on), the local level events stop, and the line's room hears remote AV status
    /// (the anyRTC SDK's setLocalAudioEnable:).
    public func setLocalAudioEnable(_ enabled: Bool) {
        let (pipeline, video) = state.withLock { state in
            state.audioEnabled = enabled
            return (state.pipeline, state.videoEnabled)
        }
        pipeline?.setAudioEnabled(enabled)
        setLineAVStatus(audio: enabled, video: video)
    }

    /// The local audio and video switches, as the line's room should hear them.
    var localAVStatus: (audio: Bool, video: Bool) { state.withLock { ($0.audioEnabled, $0.videoEnabled) } }

    /// Whether the sound is sent (`setLocalAudioEnable`).
    public var isLocalAudioEnabled: Bool { state.withLock { $0.audioEnabled } }

    /// Captures from the next configured source (the anyRTC SDK's switchCamera):
    /// `configuration.source` then `otherSources`, round. A source of another size is
    /// fitted into the stream's (`localVideoViewChanged` tells its size). Throws when the
    /// source cannot be made (the one in use stays then).
    public func switchCamera() throws {
        let all = [options.configuration.source] + options.otherSources
        guard all.count > 1 else { return }
        let next = state.withLock { ($0.sourceIndex + 1) % all.count }
        let source = try makeSource(all[next], options.configuration)
        let (camera, name) = (CameraControls(source), source.name)
        let pipeline = state.withLock { state in
            state.sourceIndex = next
            state.camera = camera
            state.sourceName = name
            return state.pipeline
        }
        pipeline?.switchSource(to: source)
    }

    /// The index in `[configuration.source] + otherSources` of the source in use.
    public var cameraIndex: Int { state.withLock { $0.sourceIndex } }

    /// Focus of the camera in use, through its V4L2 controls (`focus_automatic_continuous`,
    /// `focus_absolute`): `.automatic` turns continuous autofocus on; `.absolute(n)` turns
    /// it off (where the camera has it) and sets the focus distance, in the camera's own
    /// range (`cameraFocusRange`). The anyRTC SDK's setCameraFocusImage: is a tap-to-focus
    /// image on iOS; this is the Linux camera's equivalent. Throws `Error.noCameraControl`
    /// when the source is no camera or the camera lacks the control, and the camera's
    /// error for a value outside its range.
    public func setCameraFocus(_ focus: CameraFocus) throws {
        let camera = try currentCamera(for: "focus")
        switch focus {
        case .automatic:
            guard camera.range(of: .focusAutomatic) != nil else {
                throw Error.noCameraControl("\(camera.path) has no automatic focus control (focus_automatic_continuous)")
            }
            try camera.setValue(1, for: .focusAutomatic)
        case .absolute(let value):
            guard camera.range(of: .focus) != nil else {
                throw Error.noCameraControl("\(camera.path) has no focus control (focus_absolute)")
            }
            if camera.range(of: .focusAutomatic) != nil { try camera.setValue(0, for: .focusAutomatic) }
            try camera.setValue(value, for: .focus)
        }
    }

    /// The focus range of the camera in use; nil when it is no camera or has no focus control.
    public var cameraFocusRange: V4L2ControlRange? {
        state.withLock { $0.camera }?.camera.range(of: .focus)
    }

    /// The camera in use, or why a control of `name` cannot be set.
    private func currentCamera(for name: String) throws -> V4L2Camera {
        let (camera, sourceName) = state.withLock { ($0.camera, $0.sourceName) }
        if let camera { return camera.camera }
        guard let sourceName else { throw Error.noCameraControl("no camera in use (\(name) needs a running push with a v4l2: source)") }
        throw Error.noCameraControl("the source \(sourceName) is no camera: it has no \(name) control")
    }

    /// Beauty, original or blur (the anyRTC SDK's setCameraFilter:).
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

    /// The filter in use: `.beautiful`, `.gaussianBlur` or `.original`.
    public var cameraFilter: CameraFilterMode {
        let names = filters.names
        return names.contains("beauty") ? .beautiful : names.contains("blur") ? .gaussianBlur : .original
    }

    /// The digital zoom, 1.0…3.0 (the anyRTC SDK's setCameraZoom: / getCameraZoom).
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

    /// The anyRTC SDK's setCameraZoom:.
    public func setCameraZoom(_ zoom: Double) { cameraZoom = zoom }

    /// Mirrors the picture (the anyRTC SDK's setFontCameraMirrorEnable:).
    public func setMirror(_ enabled: Bool) {
        if let mirror = filters.first(MirrorFilter.self) {
            mirror.isEnabled = enabled
        } else if enabled {
            let names = filters.names
            filters.insert(MirrorFilter(), at: names.firstIndex(of: "watermark") ?? names.count - 1)
        }
    }

    /// Whether the picture is mirrored (`setMirror`).
    public var isMirrored: Bool { filters.first(MirrorFilter.self)?.isEnabled ?? false }

    /// A watermark at x, y; nil removes it (the anyRTC SDK's setLogoView:).
    public func setLogo(_ logo: RGBAImage?, x: Int, y: Int) {
        if let watermark = filters.first(WatermarkFilter.self) {
            watermark.setLogo(logo, x: x, y: y)
        } else if let logo {
            filters.insert(WatermarkFilter(image: logo, x: x, y: y), at: filters.names.count - 1)
        }
    }

    /// The fill image of every co-host tile whose video is off (its remote AV status
    /// says so) or has not arrived yet (the anyRTC SDK's setVideoSubBackground:); nil:
    /// flat grey. Any time, before or during the push.
    public func setVideoSubBackground(_ image: RGBAImage?) {
        let mix = state.withLock { state in
            state.subBackground = image
            return state.mix
        }
        mix?.setSubBackground(image)
    }

    /// `setVideoSubBackground` with a PNG or JPEG file (the SDK takes a file path).
    /// Throws when the file cannot be read as an image.
    public func setVideoSubBackground(path: String) throws {
        setVideoSubBackground(try ImageFile.read(path: path))
    }

    // MARK: - Capture thread

    private func runRawHook(_ frame: VideoFrame) -> VideoFrame {
        guard options.cameraType == .thirdFilter, let hook = state.withLock({ $0.rawHook }) else { return frame }
        return hook(frame)
    }

    private func runPreview(_ frame: VideoFrame) {
        state.withLock { $0.preview }?(frame)
    }

    /// Every captured frame with the source that made it: the first one's size, and
    /// later a new size (a camera of another resolution), as events. A camera reports
    /// the size it captures at, before it is fitted to the stream.
    private func sourceFrame(_ frame: VideoFrame, from source: VideoSource) {
        state.withLock { HosterEvent.localPicture(frame, from: source, after: &$0.localSize) }.map(emit)
    }
}

/// How the camera focuses (`Hoster.setCameraFocus`).
public enum CameraFocus: Sendable, Equatable {
    /// Continuous autofocus (V4L2 `focus_automatic_continuous` on).
    case automatic
    /// A fixed focus distance in the camera's `focus_absolute` range; autofocus off.
    case absolute(Int32)
}

/// A V4L2 camera's controls, reachable from any thread while the capture thread streams.
final class CameraControls: @unchecked Sendable {
    // @unchecked: only the camera's control ranges (fixed when it opened) and its control
    // ioctls are used here, which the driver serialises beside the capture thread's streaming.
    let camera: V4L2Camera

    /// The controls of `source` when it is a V4L2 camera.
    init?(_ source: VideoSource?) {
        guard let camera = source as? V4L2Camera else { return nil }
        self.camera = camera
    }
}
