/// What a V4L2 camera needs from its device, one method per ioctl (or syscall), so the
/// camera runs unchanged against the real driver (`LibV4L2Device`) or the in-memory
/// `SimulatedV4L2Device` that tests use (there is no camera on the build machines).
///
/// Failures throw `V4L2Error` naming the call and errno. An implementation is used
/// from one thread at a time (the capture thread).
public protocol V4L2DeviceIO: AnyObject {
    /// Opens the device node (`open(2)`); ENOENT when it does not exist.
    func open(path: String) throws
    /// Closes it; safe when not open.
    func close()
    /// `VIDIOC_QUERYCAP`.
    func queryCapability() throws -> V4L2Capability
    /// `VIDIOC_ENUM_FMT` over every index, for single-planar video capture.
    func enumerateFormats() throws -> [V4L2FormatDescription]
    /// `VIDIOC_ENUM_FRAMESIZES` for one format: discrete sizes, or one stepwise range.
    func enumerateFrameSizes(format: V4L2PixelFormat) throws -> [V4L2FrameSize]
    /// `VIDIOC_ENUM_FRAMEINTERVALS` as frame rates; empty when the driver does not say.
    func enumerateFrameRates(format: V4L2PixelFormat, width: Int, height: Int) throws -> [Double]
    /// `VIDIOC_TRY_FMT`: what the driver would choose for `format`, without applying it.
    func tryFormat(_ format: V4L2Format) throws -> V4L2Format
    /// `VIDIOC_S_FMT`: applies the format; returns what the driver chose.
    func setFormat(_ format: V4L2Format) throws -> V4L2Format
    /// `VIDIOC_S_PARM` with a time per frame of 1/`fps`; returns the rate the driver chose.
    func setFrameRate(_ fps: Int) throws -> Double
    /// `VIDIOC_REQBUFS` for memory-mapped buffers; returns how many the driver granted
    /// (0 frees them).
    func requestBuffers(count: Int) throws -> Int
    /// `VIDIOC_QUERYBUF`: where buffer `index` lives for `mmap`.
    func queryBuffer(index: Int) throws -> V4L2BufferInfo
    /// `mmap(2)` of a buffer.
    func map(_ buffer: V4L2BufferInfo) throws -> UnsafeMutableRawPointer
    /// `munmap(2)` of what `map` returned.
    func unmap(_ pointer: UnsafeMutableRawPointer, length: Int)
    /// `VIDIOC_QBUF`: hands buffer `index` to the driver to fill.
    func queueBuffer(index: Int) throws
    /// `VIDIOC_DQBUF`, waiting up to `timeoutMillis` for a filled buffer; nil on timeout.
    func dequeueBuffer(timeoutMillis: Int) throws -> V4L2FilledBuffer?
    /// `VIDIOC_STREAMON`.
    func streamOn() throws
    /// `VIDIOC_STREAMOFF`: also returns every buffer to the application.
    func streamOff() throws
    /// `VIDIOC_QUERYCTRL`; nil when the device lacks the control (or it is disabled).
    func queryControl(id: UInt32) throws -> V4L2ControlRange?
    /// `VIDIOC_G_CTRL`.
    func getControl(id: UInt32) throws -> Int32
    /// `VIDIOC_S_CTRL`.
    func setControl(id: UInt32, value: Int32) throws
}

/// What `VIDIOC_QUERYCAP` says about a device.
public struct V4L2Capability: Equatable, Sendable {
    public var driver: String
    public var card: String
    public var busInfo: String
    /// `V4L2_CAP_*` bits of this device node (device_caps when the driver sets it).
    public var capabilities: UInt32

    public init(driver: String, card: String, busInfo: String, capabilities: UInt32) {
        self.driver = driver
        self.card = card
        self.busInfo = busInfo
        self.capabilities = capabilities
    }

    /// Single-planar capture with streaming I/O: what `V4L2Camera` drives.
    public var canCaptureStreaming: Bool {
        capabilities & V4L2Capability.videoCapture != 0 && capabilities & V4L2Capability.streaming != 0
    }

    public static let videoCapture: UInt32 = 0x0000_0001
    public static let streaming: UInt32 = 0x0400_0000
}

/// One entry of `VIDIOC_ENUM_FMT`.
public struct V4L2FormatDescription: Equatable, Sendable {
    public var pixelFormat: V4L2PixelFormat
    public var description: String
    /// Converted in software by libv4l2 (for example I420 made from the camera's MJPEG).
    public var emulated: Bool

    public init(pixelFormat: V4L2PixelFormat, description: String, emulated: Bool = false) {
        self.pixelFormat = pixelFormat
        self.description = description
        self.emulated = emulated
    }
}

/// The single-planar capture format (`struct v4l2_pix_format`), as much as the camera uses.
public struct V4L2Format: Equatable, Sendable {
    public var pixelFormat: V4L2PixelFormat
    public var width: Int
    public var height: Int
    /// Bytes per row of the (first) plane; 0 asks the driver to choose.
    public var bytesPerLine: Int
    /// Bytes of a whole frame, as the driver reports it.
    public var sizeImage: Int

    public init(pixelFormat: V4L2PixelFormat, width: Int, height: Int, bytesPerLine: Int = 0, sizeImage: Int = 0) {
        self.pixelFormat = pixelFormat
        self.width = width
        self.height = height
        self.bytesPerLine = bytesPerLine
        self.sizeImage = sizeImage
    }
}

/// Where a memory-mapped buffer lives (`VIDIOC_QUERYBUF`).
public struct V4L2BufferInfo: Equatable, Sendable {
    public var index: Int
    public var offset: Int
    public var length: Int

    public init(index: Int, offset: Int, length: Int) {
        self.index = index
        self.offset = offset
        self.length = length
    }
}

/// A buffer the driver filled (`VIDIOC_DQBUF`).
public struct V4L2FilledBuffer: Equatable, Sendable {
    public var index: Int
    public var bytesUsed: Int
    /// The driver's frame counter; gaps mean frames it dropped.
    public var sequence: UInt32

    public init(index: Int, bytesUsed: Int, sequence: UInt32) {
        self.index = index
        self.bytesUsed = bytesUsed
        self.sequence = sequence
    }
}

/// An integer control's range (`VIDIOC_QUERYCTRL`).
public struct V4L2ControlRange: Equatable, Sendable {
    public var name: String
    public var minimum: Int32
    public var maximum: Int32
    public var step: Int32
    public var defaultValue: Int32

    public init(name: String, minimum: Int32, maximum: Int32, step: Int32, defaultValue: Int32) {
        self.name = name
        self.minimum = minimum
        self.maximum = maximum
        self.step = max(1, step)
        self.defaultValue = defaultValue
    }

    /// Whether `value` is inside the range and on a step from the minimum.
    public func accepts(_ value: Int32) -> Bool {
        value >= minimum && value <= maximum && (Int64(value) - Int64(minimum)) % Int64(step) == 0
    }
}
