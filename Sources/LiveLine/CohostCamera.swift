import LiveCapture
import LiveCore
import LiveFilter
import Synchronization

/// The guest's camera while it co-hosts, as the anyRTC SDK's guest kit controls it
/// (switchCamera, setCameraZoom / getCameraZoom, setFontCameraMirrorEnable,
/// setLocalVideoCapturer, onRTCCaptureVideoPixelBuffer). Its zoom, mirror and hook
/// filters are single objects that every co-host push of the guest runs, so a setting
/// made before co-hosting applies from the first frame and one made while co-hosting
/// applies to the running push at its next frame.
///
/// Order on each captured frame: the raw-frame hook (what the camera gave), zoom, the
/// configuration's filters (beauty or blur, its watermark), mirror, then the preview
/// (what is published). Thread-safe: settings from any thread, the filters on the
/// co-host push's capture thread.
final class CohostCamera: Sendable {
    private let configuration: HosterConfiguration
    private let zoom: ZoomFilter
    private let mirror: MirrorFilter
    private let state = Mutex(State())

    private struct State {
        var preview: (@Sendable (VideoFrame) -> Void)?
        var rawHook: (@Sendable (VideoFrame) -> VideoFrame)?
        var otherSources: [String] = []
        var sourceIndex = 0
    }

    init(configuration: HosterConfiguration) {
        self.configuration = configuration
        zoom = ZoomFilter(zoom: configuration.zoom)
        mirror = MirrorFilter(enabled: configuration.mirror)
    }

    /// The filters of one co-host push: the configuration's own (without its zoom and
    /// mirror, which this camera's shared ones replace) between the camera's.
    func makeFilterChain() throws -> FilterChain {
        var own = configuration
        own.zoom = 1.0
        own.mirror = false
        let chain = try own.makeFilterChain()
        chain.insert(FrameHookFilter(name: "raw") { [weak self] frame in self?.runRawHook(frame) ?? frame }, at: 0)
        chain.insert(zoom, at: 1)
        let names = chain.names
        chain.insert(mirror, at: names.firstIndex(of: "watermark") ?? names.count)
        chain.append(FrameHookFilter(name: "preview") { [weak self] frame in
            self?.runPreview(frame)
            return frame
        })
        return chain
    }

    /// The source to capture from now: `configuration.source` or one of `otherSources`.
    var sourceSpec: String {
        state.withLock { state in
            let all = [configuration.source] + state.otherSources
            return all[state.sourceIndex % all.count]
        }
    }

    /// The sources `switchCamera` steps through after `configuration.source`.
    var otherSources: [String] {
        get { state.withLock { $0.otherSources } }
        set { state.withLock { $0.otherSources = newValue; $0.sourceIndex = 0 } }
    }

    /// Steps to the next source and makes it; nil when there is no other source.
    func switchSource() throws -> VideoSource? {
        let spec: String? = state.withLock { state in
            let all = [configuration.source] + state.otherSources
            guard all.count > 1 else { return nil }
            state.sourceIndex = (state.sourceIndex + 1) % all.count
            return all[state.sourceIndex]
        }
        guard let spec else { return nil }
        let c = configuration
        return try SourceSpec(parsing: spec).makeSource(width: c.width, height: c.height, fps: c.fps, realTime: c.realTime)
    }

    /// The index in `[configuration.source] + otherSources` of the source in use.
    var sourceIndex: Int { state.withLock { $0.sourceIndex } }

    var zoomFactor: Double {
        get { zoom.zoom }
        set { zoom.zoom = newValue }
    }

    var isMirrored: Bool {
        get { mirror.isEnabled }
        set { mirror.isEnabled = newValue }
    }

    func setPreview(_ preview: (@Sendable (VideoFrame) -> Void)?) {
        state.withLock { $0.preview = preview }
    }

    func setRawHook(_ hook: (@Sendable (VideoFrame) -> VideoFrame)?) {
        state.withLock { $0.rawHook = hook }
    }

    // MARK: - Capture thread

    private func runRawHook(_ frame: VideoFrame) -> VideoFrame {
        guard let hook = state.withLock({ $0.rawHook }) else { return frame }
        return hook(frame)
    }

    private func runPreview(_ frame: VideoFrame) {
        state.withLock { $0.preview }?(frame)
    }
}

extension Guest.Options {
    /// What the guest publishes once accepted as a co-host (the anyRTC SDK's
    /// ARGuestOption.linkMediaModel, ARLinkMediaMode: video = 0, audio = 1): `.video`
    /// its picture and sound; `.audio` its sound only (no video track), and the room
    /// hears its video as off (`remoteAVStatus`). The same setting as
    /// `cohost.livingMediaMode`; on an audio line the push is sound only whatever it says.
    public var linkMediaMode: LivingMediaMode {
        get { cohost.livingMediaMode }
        set { cohost.livingMediaMode = newValue }
    }
}

extension Guest {
    /// The sources `switchCamera` steps through after `options.cohost.source` (the
    /// anyRTC SDK's front and back camera: e.g. another V4L2 device). Setting them goes
    /// back to `options.cohost.source` for the next co-host push.
    public var cohostOtherSources: [String] {
        get { cohostCamera.otherSources }
        set { cohostCamera.otherSources = newValue }
    }

    /// The index in `[options.cohost.source] + cohostOtherSources` of the co-host's source.
    public var cameraIndex: Int { cohostCamera.sourceIndex }

    /// Captures the co-host's picture from the next source (the anyRTC SDK's guest
    /// switchCamera): the running push switches at its next frame, a later push starts
    /// with it. Nothing happens without `cohostOtherSources`. Throws when the source
    /// cannot be made (the source in use stays then).
    public func switchCamera() throws {
        guard let source = try cohostCamera.switchSource() else { return }
        let pipeline = shared.withLock { $0.cohostPipeline }
        if let pipeline { pipeline.switchSource(to: source) } else { source.stop() }
    }

    /// The co-host's digital zoom, 1.0…3.0 (the anyRTC SDK's guest setCameraZoom: /
    /// getCameraZoom), on the running push from its next frame.
    public var cameraZoom: Double {
        get { cohostCamera.zoomFactor }
        set { cohostCamera.zoomFactor = newValue }
    }

    /// The anyRTC SDK's guest setCameraZoom:.
    public func setCameraZoom(_ zoom: Double) { cameraZoom = zoom }

    /// Mirrors the co-host's published picture (the anyRTC SDK's guest
    /// setFontCameraMirrorEnable:), on the running push from its next frame.
    public func setMirror(_ enabled: Bool) { cohostCamera.isMirrored = enabled }

    /// Whether the co-host's picture is mirrored.
    public var isMirrored: Bool { cohostCamera.isMirrored }

    /// Shows the co-host's own picture, as published (after zoom, filters and mirror),
    /// to `preview` on the co-host push's capture thread (the anyRTC SDK's guest
    /// setLocalVideoCapturer:, called after onRTCApplyLineResult 0); the frame is the
    /// pipeline's: copy what must outlive the call. nil stops it.
    public func setLocalVideoCapturer(_ preview: (@Sendable (VideoFrame) -> Void)?) {
        cohostCamera.setPreview(preview)
    }

    /// The app's own processing of each frame the co-host's camera captures, before
    /// zoom and the filters (the anyRTC SDK 3.0.1's guest onRTCCaptureVideoPixelBuffer:,
    /// a third-party filter): runs on the co-host push's capture thread; return the frame
    /// to publish (the same one, edited, is fine). nil: frames go on untouched.
    public func setRawFrameHook(_ hook: (@Sendable (VideoFrame) -> VideoFrame)?) {
        cohostCamera.setRawHook(hook)
    }
}
