import Foundation
import LiveCodec
import LiveCore

/// A V4L2 camera as a `VideoSource` (the anyRTC SDK's camera capturer): opens the device,
/// negotiates the mode nearest to the requested size and rate (`V4L2Negotiation`),
/// streams through 4 memory-mapped buffers and delivers I420 frames of exactly the
/// requested size, converted with `YUVConversion` when the device's size matches and
/// scaled with swscale (by `renderMode`) when it does not.
///
/// Works against any `V4L2DeviceIO`: `LibV4L2Device` for real cameras, the
/// `SimulatedV4L2Device` in tests. Confined to the capture thread.
public final class V4L2Camera: VideoSource {
    public let path: String
    public let width: Int
    public let height: Int
    public let fps: Int
    /// The mode the device delivers (before conversion and scaling).
    public let mode: V4L2Mode
    /// The format the driver confirmed, with its row pitch.
    public let deviceFormat: V4L2Format
    public let capability: V4L2Capability
    /// How the device picture is fitted when its size differs from the requested one.
    public let renderMode: RenderMode
    /// How long `nextFrame` waits for the device before it gives up.
    public var frameTimeoutMillis = 2000

    private let device: V4L2DeviceIO
    private let pool: FramePool
    private var scaler: Scaler?
    private var buffers: [(pointer: UnsafeMutableRawPointer, length: Int)] = []
    private var streaming = false
    private var index: Int64 = 0
    private var controlRanges: [V4L2Control: V4L2ControlRange] = [:]

    /// Buffers requested from the driver: enough to absorb a late capture thread, few
    /// enough to keep latency at a frame or two.
    static let bufferCount = 4

    /// Opens `path` and negotiates a mode; streaming starts with `start()`.
    /// Throws `LiveError(.cameraNotFound)` when there is no camera at `path`,
    /// `.noCameraPermission` when it may not be opened, `.notSupported` when it offers
    /// no format LiveLine can convert.
    public init(path: String, width: Int, height: Int, fps: Int, device: V4L2DeviceIO = LibV4L2Device(),
                renderMode: RenderMode = .aspectFill) throws {
        try SourceSpec.checkFormat(width: width, height: height, fps: fps)
        self.path = path
        self.width = width
        self.height = height
        self.fps = fps
        self.device = device
        self.renderMode = renderMode
        pool = FramePool(width: width, height: height)

        do {
            try device.open(path: path)
        } catch let error as V4L2Error {
            switch error.errno {
            case ENOENT, ENODEV, ENXIO, ENOTDIR:
                throw LiveError(.cameraNotFound, "no camera at \(path): \(error)")
            case EACCES, EPERM:
                throw LiveError(.noCameraPermission, "may not open \(path): \(error)")
            default:
                throw error
            }
        }
        var ready = false
        defer { if !ready { device.close() } }

        capability = try device.queryCapability()
        guard capability.canCaptureStreaming else {
            throw LiveError(.cameraNotFound, "\(path) (\(capability.card)) is not a streaming video capture device")
        }
        let offers = try V4L2Camera.offers(of: device, width: width, height: height)
        guard let chosen = V4L2Negotiation.choose(width: width, height: height, fps: fps, offers: offers) else {
            let available = (try? device.enumerateFormats()) ?? []
            let formats = available.map { "\($0.pixelFormat)" }.joined(separator: ", ")
            throw LiveError(.notSupported,
                            "\(path) offers no format LiveLine can convert (it has: \(formats.isEmpty ? "none" : formats))")
        }
        let confirmed = try device.setFormat(V4L2Format(pixelFormat: chosen.pixelFormat, width: chosen.width,
                                                        height: chosen.height))
        guard V4L2PixelFormat.convertible.contains(confirmed.pixelFormat), confirmed.width >= 2, confirmed.height >= 2 else {
            throw LiveError(.notSupported, "\(path) switched to \(confirmed.pixelFormat) \(confirmed.width)x\(confirmed.height)")
        }
        var actualFPS = chosen.fps
        do {
            actualFPS = try device.setFrameRate(Int(chosen.fps.rounded()))
        } catch {
            // Some drivers have a fixed rate and refuse S_PARM; the stream still works.
            Log.warning("\(path): cannot set the frame rate: \(error)")
        }
        var format = confirmed
        if format.bytesPerLine == 0 {
            format.bytesPerLine = format.pixelFormat == .yuyv ? format.width * 2 : format.width
        }
        deviceFormat = format
        mode = V4L2Mode(pixelFormat: format.pixelFormat, width: format.width, height: format.height, fps: actualFPS)
        for control in V4L2Control.allCases {
            if let range = try? device.queryControl(id: control.id) { controlRanges[control] = range }
        }
        ready = true
    }

    deinit {
        stop()
        device.close()
    }

    /// Every (convertible format, size) the device offers, sizes taken nearest to the
    /// request when the device has ranges rather than a list.
    static func offers(of device: V4L2DeviceIO, width: Int, height: Int) throws -> [V4L2ModeOffer] {
        var offers: [V4L2ModeOffer] = []
        for format in try device.enumerateFormats() {
            guard V4L2PixelFormat.convertible.contains(format.pixelFormat) else { continue }
            var sizes = (try? device.enumerateFrameSizes(format: format.pixelFormat)) ?? []
            if sizes.isEmpty, let tried = try? device.tryFormat(
                V4L2Format(pixelFormat: format.pixelFormat, width: width, height: height)) {
                // A driver that does not enumerate sizes still says what it would do.
                sizes = [.discrete(width: tried.width, height: tried.height)]
            }
            for size in sizes {
                let (w, h) = size.nearest(toWidth: width, height: height)
                let rates = (try? device.enumerateFrameRates(format: format.pixelFormat, width: w, height: h)) ?? []
                offers.append(V4L2ModeOffer(pixelFormat: format.pixelFormat, width: w, height: h, frameRates: rates,
                                            emulated: format.emulated))
            }
        }
        return offers
    }

    public var name: String {
        "camera \(path) (\(capability.card), \(mode)) → \(width)x\(height)@\(fps)"
    }

    /// The frame at the device's size needs resizing into the requested one.
    public var scales: Bool { mode.width != width || mode.height != height }

    public func start() throws {
        guard !streaming else { return }
        do {
            let granted = try device.requestBuffers(count: V4L2Camera.bufferCount)
            guard granted >= 2 else {
                throw LiveError(.notSupported, "\(path) granted \(granted) capture buffers, at least 2 are needed")
            }
            for i in 0..<granted {
                let info = try device.queryBuffer(index: i)
                buffers.append((try device.map(info), info.length))
            }
            for i in 0..<granted { try device.queueBuffer(index: i) }
            try device.streamOn()
        } catch {
            releaseBuffers()
            throw error
        }
        if scales && scaler == nil { scaler = Scaler(filter: .bilinear, cacheCapacity: 1) }
        streaming = true
        index = 0
    }

    public func nextFrame() throws -> VideoFrame? {
        guard streaming else { throw LiveError(.notInitialized, "camera \(path) is not started") }
        let expected = deviceFormat.pixelFormat.frameBytes(width: deviceFormat.width, height: deviceFormat.height,
                                                           bytesPerLine: deviceFormat.bytesPerLine) ?? 0
        while true {
            guard let filled = try device.dequeueBuffer(timeoutMillis: frameTimeoutMillis) else {
                throw V4L2Error(call: "VIDIOC_DQBUF (no frame in \(frameTimeoutMillis) ms)", errno: ETIMEDOUT, path: path)
            }
            let captured = Clock.wallMicros()
            // The buffer goes back to the driver whatever happens to this frame.
            defer { try? device.queueBuffer(index: filled.index) }
            guard buffers.indices.contains(filled.index), filled.bytesUsed >= expected else {
                // A short (corrupt) frame: drop it rather than show garbage.
                continue
            }
            let frame = pool.acquire()
            try convert(buffers[filled.index].pointer, into: frame)
            frame.pts = MediaTime(frame: index, fps: fps)
            frame.captureTimeMicros = captured
            index += 1
            return frame
        }
    }

    private func convert(_ source: UnsafeMutableRawPointer, into frame: VideoFrame) throws {
        let f = deviceFormat
        guard let scaler else {
            YUVConversion.convert(source, format: f.pixelFormat, bytesPerLine: f.bytesPerLine, into: frame)
            return
        }
        let bytes = UnsafePointer(source.assumingMemoryBound(to: UInt8.self))
        let picture: Scaler.Picture
        switch f.pixelFormat {
        case .yuyv:
            picture = try .packed(.yuyv, data: bytes, stride: f.bytesPerLine, width: f.width, height: f.height)
        case .nv12:
            picture = .nv12(y: bytes, yStride: f.bytesPerLine, uv: bytes + f.bytesPerLine * f.height,
                            uvStride: f.bytesPerLine, width: f.width, height: f.height)
        default:
            let u = bytes + f.bytesPerLine * f.height
            picture = .i420(y: bytes, yStride: f.bytesPerLine, u: u, uStride: f.bytesPerLine / 2,
                            v: u + f.bytesPerLine / 2 * (f.height / 2), vStride: f.bytesPerLine / 2,
                            width: f.width, height: f.height)
        }
        try scaler.scale(picture, into: frame, mode: renderMode)
    }

    public func stop() {
        guard streaming || !buffers.isEmpty else { return }
        if streaming { try? device.streamOff() }
        streaming = false
        releaseBuffers()
    }

    private func releaseBuffers() {
        for buffer in buffers { device.unmap(buffer.pointer, length: buffer.length) }
        buffers = []
        _ = try? device.requestBuffers(count: 0)
    }

    // MARK: - Controls

    /// The range of `control`; nil when the device lacks it.
    public func range(of control: V4L2Control) -> V4L2ControlRange? { controlRanges[control] }

    /// The current value of `control`; nil when the device lacks it.
    public func value(of control: V4L2Control) throws -> Int32? {
        guard controlRanges[control] != nil else { return nil }
        return try device.getControl(id: control.id)
    }

    /// Sets `control` (the anyRTC SDK's setCameraZoomFactor and friends). Throws `.notSupported`
    /// when the device lacks it and `.invalidParams` when `value` is outside its range.
    public func setValue(_ value: Int32, for control: V4L2Control) throws {
        guard let range = controlRanges[control] else {
            throw LiveError(.notSupported, "\(path) has no \(control.rawValue) control")
        }
        guard range.accepts(value) else {
            throw LiveError(.invalidParams,
                            "\(control.rawValue) \(value) is outside \(range.minimum)...\(range.maximum) step \(range.step)")
        }
        try device.setControl(id: control.id, value: value)
    }

    public var zoom: V4L2ControlRange? { controlRanges[.zoom] }
    public var focus: V4L2ControlRange? { controlRanges[.focus] }
    public var exposure: V4L2ControlRange? { controlRanges[.exposure] }
}
