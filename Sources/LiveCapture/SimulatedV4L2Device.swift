import Foundation

/// An in-memory V4L2 camera behind `V4L2DeviceIO`, so `V4L2Camera` runs unchanged
/// where no camera exists (the build machines): configurable formats, discrete sizes,
/// frame rates and controls, and a ring of "mmap" buffers that each dequeue fills
/// with `fillPattern` for the frame's sequence number.
///
/// It keeps the driver's rules the camera must follow (a buffer is dequeued only
/// after it was queued, no format change while buffers exist, no streaming without
/// buffers) and answers breaking them with the errno a driver would.
/// Confined to one thread at a time, like a device.
public final class SimulatedV4L2Device: V4L2DeviceIO {
    /// A pixel format with the sizes and rates offered for it.
    public struct FormatOffer: Sendable {
        public var pixelFormat: V4L2PixelFormat
        public var sizes: [(width: Int, height: Int)]
        public var frameRates: [Double]

        public init(pixelFormat: V4L2PixelFormat, sizes: [(width: Int, height: Int)], frameRates: [Double] = [30, 15]) {
            self.pixelFormat = pixelFormat
            self.sizes = sizes
            self.frameRates = frameRates
        }
    }

    public let path: String
    public let capability: V4L2Capability
    public let offers: [FormatOffer]
    public let controlRanges: [UInt32: V4L2ControlRange]

    /// What the simulation looked like to a test: set by the calls the camera made.
    public private(set) var isOpen = false
    public private(set) var isStreaming = false
    public private(set) var format: V4L2Format?
    public private(set) var frameRate: Double = 30
    public private(set) var mappedCount = 0
    public private(set) var dequeuedCount = 0

    private var controlValues: [UInt32: Int32]
    private var buffers: [UnsafeMutableRawPointer] = []
    private var bufferLength = 0
    private var queued: [Int] = []
    private var sequence: UInt32 = 0

    /// A UVC-like webcam: YUYV and NV12 at 640x480 and 1280x720, MJPEG up to 1920x1080,
    /// with zoom, focus and exposure.
    public static let defaultOffers: [FormatOffer] = [
        FormatOffer(pixelFormat: .yuyv, sizes: [(640, 480), (1280, 720)], frameRates: [30, 15]),
        FormatOffer(pixelFormat: .mjpeg, sizes: [(640, 480), (1280, 720), (1920, 1080)], frameRates: [30]),
        FormatOffer(pixelFormat: .nv12, sizes: [(640, 480), (1280, 720)], frameRates: [30]),
    ]

    public static let defaultControls: [UInt32: V4L2ControlRange] = [
        V4L2Control.zoom.id: V4L2ControlRange(name: "Zoom, Absolute", minimum: 100, maximum: 500, step: 1, defaultValue: 100),
        V4L2Control.focus.id: V4L2ControlRange(name: "Focus, Absolute", minimum: 0, maximum: 250, step: 5, defaultValue: 0),
        V4L2Control.exposure.id: V4L2ControlRange(name: "Exposure, Absolute", minimum: 3, maximum: 2047, step: 1,
                                                  defaultValue: 250),
    ]

    public init(path: String = "/dev/video0", card: String = "Simulated Camera", offers: [FormatOffer] = defaultOffers,
                controls: [UInt32: V4L2ControlRange] = defaultControls) {
        self.path = path
        capability = V4L2Capability(driver: "simulated", card: card, busInfo: "memory",
                                    capabilities: V4L2Capability.videoCapture | V4L2Capability.streaming)
        self.offers = offers
        controlRanges = controls
        controlValues = controls.mapValues(\.defaultValue)
    }

    deinit { freeBuffers() }

    private func fail(_ call: String, _ code: Int32) -> V4L2Error { V4L2Error(call: call, errno: code, path: path) }

    private func requireOpen(_ call: String) throws {
        if !isOpen { throw fail(call, EBADF) }
    }

    public func open(path: String) throws {
        guard path == self.path else { throw V4L2Error(call: "open", errno: ENOENT, path: path) }
        isOpen = true
    }

    public func close() {
        if isStreaming { try? streamOff() }
        freeBuffers()
        isOpen = false
    }

    public func queryCapability() throws -> V4L2Capability {
        try requireOpen("VIDIOC_QUERYCAP")
        return capability
    }

    public func enumerateFormats() throws -> [V4L2FormatDescription] {
        try requireOpen("VIDIOC_ENUM_FMT")
        return offers.map { V4L2FormatDescription(pixelFormat: $0.pixelFormat, description: "\($0.pixelFormat)") }
    }

    public func enumerateFrameSizes(format: V4L2PixelFormat) throws -> [V4L2FrameSize] {
        try requireOpen("VIDIOC_ENUM_FRAMESIZES")
        guard let offer = offers.first(where: { $0.pixelFormat == format }) else { throw fail("VIDIOC_ENUM_FRAMESIZES", EINVAL) }
        return offer.sizes.map { .discrete(width: $0.width, height: $0.height) }
    }

    public func enumerateFrameRates(format: V4L2PixelFormat, width: Int, height: Int) throws -> [Double] {
        try requireOpen("VIDIOC_ENUM_FRAMEINTERVALS")
        guard let offer = offers.first(where: { $0.pixelFormat == format }),
              offer.sizes.contains(where: { $0.width == width && $0.height == height }) else {
            throw fail("VIDIOC_ENUM_FRAMEINTERVALS", EINVAL)
        }
        return offer.frameRates
    }

    /// As drivers do: an unknown pixel format becomes the first one, the size the nearest offered.
    public func tryFormat(_ requested: V4L2Format) throws -> V4L2Format {
        try requireOpen("VIDIOC_TRY_FMT")
        guard let first = offers.first else { throw fail("VIDIOC_TRY_FMT", EINVAL) }
        let offer = offers.first { $0.pixelFormat == requested.pixelFormat } ?? first
        let size = offer.sizes.min {
            abs($0.width * $0.height - requested.width * requested.height)
                < abs($1.width * $1.height - requested.width * requested.height)
        } ?? (requested.width, requested.height)
        let pitch = offer.pixelFormat == .yuyv ? size.width * 2 : size.width
        let bytes = offer.pixelFormat.frameBytes(width: size.width, height: size.height)
            ?? size.width * size.height  // a compressed frame's worst case, for the buffer size
        return V4L2Format(pixelFormat: offer.pixelFormat, width: size.width, height: size.height,
                          bytesPerLine: pitch, sizeImage: bytes)
    }

    public func setFormat(_ requested: V4L2Format) throws -> V4L2Format {
        try requireOpen("VIDIOC_S_FMT")
        if !buffers.isEmpty { throw fail("VIDIOC_S_FMT", EBUSY) }
        let chosen = try tryFormat(requested)
        format = chosen
        return chosen
    }

    public func setFrameRate(_ fps: Int) throws -> Double {
        try requireOpen("VIDIOC_S_PARM")
        let rates = format.flatMap { f in offers.first { $0.pixelFormat == f.pixelFormat }?.frameRates } ?? []
        frameRate = rates.min { abs($0 - Double(fps)) < abs($1 - Double(fps)) } ?? Double(fps)
        return frameRate
    }

    public func requestBuffers(count: Int) throws -> Int {
        try requireOpen("VIDIOC_REQBUFS")
        if isStreaming { throw fail("VIDIOC_REQBUFS", EBUSY) }
        freeBuffers()
        guard count > 0 else { return 0 }
        guard let format else { throw fail("VIDIOC_REQBUFS", EINVAL) }
        bufferLength = format.sizeImage
        let granted = min(count, 8)
        buffers = (0..<granted).map { _ in
            let buffer = UnsafeMutableRawPointer.allocate(byteCount: bufferLength, alignment: 64)
            buffer.initializeMemory(as: UInt8.self, repeating: 0, count: bufferLength)
            return buffer
        }
        return granted
    }

    private func freeBuffers() {
        for buffer in buffers { buffer.deallocate() }
        buffers = []
        queued = []
    }

    /// Offsets are page-spaced, as a driver's mmap cookies are.
    private var pageSpacing: Int { (bufferLength + 4095) / 4096 * 4096 }

    public func queryBuffer(index: Int) throws -> V4L2BufferInfo {
        try requireOpen("VIDIOC_QUERYBUF")
        guard buffers.indices.contains(index) else { throw fail("VIDIOC_QUERYBUF", EINVAL) }
        return V4L2BufferInfo(index: index, offset: index * pageSpacing, length: bufferLength)
    }

    public func map(_ buffer: V4L2BufferInfo) throws -> UnsafeMutableRawPointer {
        let index = pageSpacing > 0 ? buffer.offset / pageSpacing : -1
        guard buffers.indices.contains(index), buffer.length <= bufferLength else { throw fail("mmap", EINVAL) }
        mappedCount += 1
        return buffers[index]
    }

    public func unmap(_ pointer: UnsafeMutableRawPointer, length: Int) {
        mappedCount -= 1
    }

    public func queueBuffer(index: Int) throws {
        try requireOpen("VIDIOC_QBUF")
        guard buffers.indices.contains(index), !queued.contains(index) else { throw fail("VIDIOC_QBUF", EINVAL) }
        queued.append(index)
    }

    /// Fills the oldest queued buffer at once (a simulated camera never keeps anyone waiting);
    /// nil, like a timeout, when nothing is queued.
    public func dequeueBuffer(timeoutMillis: Int) throws -> V4L2FilledBuffer? {
        try requireOpen("VIDIOC_DQBUF")
        guard isStreaming, let format else { throw fail("VIDIOC_DQBUF", EINVAL) }
        guard !queued.isEmpty else { return nil }
        let index = queued.removeFirst()
        SimulatedV4L2Device.fillPattern(buffers[index], format: format, sequence: sequence)
        defer { sequence &+= 1 }
        dequeuedCount += 1
        return V4L2FilledBuffer(index: index, bytesUsed: format.sizeImage, sequence: sequence)
    }

    public func streamOn() throws {
        try requireOpen("VIDIOC_STREAMON")
        guard !buffers.isEmpty else { throw fail("VIDIOC_STREAMON", EINVAL) }
        isStreaming = true
    }

    public func streamOff() throws {
        try requireOpen("VIDIOC_STREAMOFF")
        isStreaming = false
        queued = []
    }

    public func queryControl(id: UInt32) throws -> V4L2ControlRange? {
        try requireOpen("VIDIOC_QUERYCTRL")
        return controlRanges[id]
    }

    public func getControl(id: UInt32) throws -> Int32 {
        try requireOpen("VIDIOC_G_CTRL")
        guard let value = controlValues[id] else { throw fail("VIDIOC_G_CTRL", EINVAL) }
        return value
    }

    public func setControl(id: UInt32, value: Int32) throws {
        try requireOpen("VIDIOC_S_CTRL")
        guard let range = controlRanges[id] else { throw fail("VIDIOC_S_CTRL", EINVAL) }
        guard value >= range.minimum, value <= range.maximum else { throw fail("VIDIOC_S_CTRL", ERANGE) }
        controlValues[id] = value
    }

    /// The picture of frame `sequence` in `format`'s layout: luma and chroma ramps that
    /// move with the sequence, so every sample of every frame is predictable.
    public static func fillPattern(_ buffer: UnsafeMutableRawPointer, format: V4L2Format, sequence: UInt32) {
        let w = format.width, h = format.height, pitch = format.bytesPerLine
        let p = buffer.assumingMemoryBound(to: UInt8.self)
        let s = Int(sequence)
        func luma(_ x: Int, _ y: Int) -> UInt8 { UInt8(truncatingIfNeeded: x + 2 * y + 5 * s) }
        // Chroma varies per row too, so 4:2:2 → 4:2:0 must really average two rows.
        func cb(_ cx: Int, _ y: Int) -> UInt8 { UInt8(truncatingIfNeeded: 3 * cx + y + 7 * s) }
        func cr(_ cx: Int, _ y: Int) -> UInt8 { UInt8(truncatingIfNeeded: 255 - cx + 3 * y + 11 * s) }
        switch format.pixelFormat {
        case .yuyv:
            for y in 0..<h {
                let row = p + y * pitch
                for cx in 0..<(w / 2) {
                    row[4 * cx] = luma(2 * cx, y)
                    row[4 * cx + 1] = cb(cx, y)
                    row[4 * cx + 2] = luma(2 * cx + 1, y)
                    row[4 * cx + 3] = cr(cx, y)
                }
            }
        case .nv12, .i420:
            for y in 0..<h {
                for x in 0..<w { p[y * pitch + x] = luma(x, y) }
            }
            let chroma = p + pitch * h
            for cy in 0..<(h / 2) {
                for cx in 0..<(w / 2) {
                    if format.pixelFormat == .nv12 {
                        chroma[cy * pitch + 2 * cx] = cb(cx, cy)
                        chroma[cy * pitch + 2 * cx + 1] = cr(cx, cy)
                    } else {
                        chroma[cy * (pitch / 2) + cx] = cb(cx, cy)
                        chroma[(pitch / 2) * (h / 2) + cy * (pitch / 2) + cx] = cr(cx, cy)
                    }
                }
            }
        default:
            // A compressed frame: bytes that decode to nothing, which is what the camera must refuse.
            for i in 0..<format.sizeImage { p[i] = UInt8(truncatingIfNeeded: i + s) }
        }
    }
}
