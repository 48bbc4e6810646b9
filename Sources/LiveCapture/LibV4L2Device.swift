import CV4L2
import Foundation

/// A real V4L2 device driven through libv4l2 (`v4l2_open`, `v4l2_ioctl`, `v4l2_mmap`),
/// which also offers I420 converted in software for cameras that only send MJPEG.
///
/// Owns the file descriptor and closes it in `deinit`. Confined to one thread at a time.
public final class LibV4L2Device: V4L2DeviceIO {
    private var fd: Int32 = -1
    public private(set) var path = ""

    private static let captureType = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
    private static let mmapMemory = V4L2_MEMORY_MMAP.rawValue

    public init() {}

    deinit { close() }

    public func open(path: String) throws {
        close()
        self.path = path
        // Only character devices are V4L2 nodes; libv4l2 would complain on stderr about anything else.
        var info = stat()
        if stat(path, &info) == 0 && info.st_mode & S_IFMT != S_IFCHR {
            throw V4L2Error(call: "open", errno: ENODEV, path: path)
        }
        // Non-blocking, so a stalled camera times out in `poll` instead of hanging DQBUF.
        fd = try V4L2Error.check("open", path: path) { ll_v4l2_open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC) }!
    }

    public func close() {
        guard fd >= 0 else { return }
        _ = v4l2_close(fd)
        fd = -1
    }

    /// One ioctl on the open device, named for the error it may throw.
    @discardableResult
    private func ioctl<T>(_ name: String, _ request: UInt, _ argument: inout T, wouldBlockIsNil: Bool = false) throws -> Bool {
        let fd = self.fd
        guard fd >= 0 else { throw V4L2Error(call: name, errno: EBADF, path: path) }
        return try withUnsafeMutablePointer(to: &argument) { pointer in
            try V4L2Error.check(name, path: path, wouldBlockIsNil: wouldBlockIsNil) {
                ll_v4l2_ioctl(fd, request, UnsafeMutableRawPointer(pointer))
            } != nil
        }
    }

    /// Runs an enumerating ioctl for index 0, 1, … until the driver answers EINVAL.
    private func enumerate<T>(_ name: String, _ request: UInt, make: (UInt32) -> T, _ body: (T) -> Void) throws {
        var index: UInt32 = 0
        while index < 1024 {
            var entry = make(index)
            do {
                try ioctl(name, request, &entry)
            } catch let error as V4L2Error where error.errno == EINVAL {
                return
            }
            body(entry)
            index += 1
        }
    }

    private static func string<T>(_ tuple: T) -> String {
        withUnsafeBytes(of: tuple) { raw in String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self) }
    }

    public func queryCapability() throws -> V4L2Capability {
        var caps = v4l2_capability()
        try ioctl("VIDIOC_QUERYCAP", LL_VIDIOC_QUERYCAP, &caps)
        let bits = caps.capabilities & LL_V4L2_CAP_DEVICE_CAPS != 0 ? caps.device_caps : caps.capabilities
        return V4L2Capability(driver: Self.string(caps.driver), card: Self.string(caps.card),
                              busInfo: Self.string(caps.bus_info), capabilities: bits)
    }

    public func enumerateFormats() throws -> [V4L2FormatDescription] {
        var formats: [V4L2FormatDescription] = []
        try enumerate("VIDIOC_ENUM_FMT", LL_VIDIOC_ENUM_FMT, make: { index in
            var desc = v4l2_fmtdesc()
            desc.index = index
            desc.type = Self.captureType
            return desc
        }) { desc in
            formats.append(V4L2FormatDescription(
                pixelFormat: V4L2PixelFormat(fourcc: desc.pixelformat), description: Self.string(desc.description),
                emulated: desc.flags & LL_V4L2_FMT_FLAG_EMULATED != 0))
        }
        return formats
    }

    public func enumerateFrameSizes(format: V4L2PixelFormat) throws -> [V4L2FrameSize] {
        var sizes: [V4L2FrameSize] = []
        try enumerate("VIDIOC_ENUM_FRAMESIZES", LL_VIDIOC_ENUM_FRAMESIZES, make: { index in
            var entry = v4l2_frmsizeenum()
            entry.index = index
            entry.pixel_format = format.fourcc
            return entry
        }) { entry in
            if entry.type == V4L2_FRMSIZE_TYPE_DISCRETE.rawValue {
                sizes.append(.discrete(width: Int(entry.discrete.width), height: Int(entry.discrete.height)))
            } else {
                let s = entry.stepwise
                let continuous = entry.type == V4L2_FRMSIZE_TYPE_CONTINUOUS.rawValue
                sizes.append(.stepwise(
                    minWidth: Int(s.min_width), maxWidth: Int(s.max_width), stepWidth: continuous ? 1 : Int(s.step_width),
                    minHeight: Int(s.min_height), maxHeight: Int(s.max_height),
                    stepHeight: continuous ? 1 : Int(s.step_height)))
            }
        }
        return sizes
    }

    public func enumerateFrameRates(format: V4L2PixelFormat, width: Int, height: Int) throws -> [Double] {
        var rates: [Double] = []
        try enumerate("VIDIOC_ENUM_FRAMEINTERVALS", LL_VIDIOC_ENUM_FRAMEINTERVALS, make: { index in
            var entry = v4l2_frmivalenum()
            entry.index = index
            entry.pixel_format = format.fourcc
            entry.width = UInt32(width)
            entry.height = UInt32(height)
            return entry
        }) { entry in
            func rate(_ f: v4l2_fract) -> Double? { f.numerator == 0 ? nil : Double(f.denominator) / Double(f.numerator) }
            if entry.type == V4L2_FRMIVAL_TYPE_DISCRETE.rawValue {
                if let r = rate(entry.discrete) { rates.append(r) }
            } else {
                // A range: its two ends (S_PARM picks the nearest inside it).
                if let r = rate(entry.stepwise.min) { rates.append(r) }
                if let r = rate(entry.stepwise.max) { rates.append(r) }
            }
        }
        return rates
    }

    private func pixFormat(_ format: V4L2Format) -> v4l2_format {
        var f = v4l2_format()
        f.type = Self.captureType
        f.fmt.pix.width = UInt32(format.width)
        f.fmt.pix.height = UInt32(format.height)
        f.fmt.pix.pixelformat = format.pixelFormat.fourcc
        f.fmt.pix.field = V4L2_FIELD_NONE.rawValue
        f.fmt.pix.bytesperline = UInt32(format.bytesPerLine)
        return f
    }

    private func format(_ f: v4l2_format) -> V4L2Format {
        V4L2Format(pixelFormat: V4L2PixelFormat(fourcc: f.fmt.pix.pixelformat), width: Int(f.fmt.pix.width),
                   height: Int(f.fmt.pix.height), bytesPerLine: Int(f.fmt.pix.bytesperline),
                   sizeImage: Int(f.fmt.pix.sizeimage))
    }

    public func tryFormat(_ format: V4L2Format) throws -> V4L2Format {
        var f = pixFormat(format)
        try ioctl("VIDIOC_TRY_FMT", LL_VIDIOC_TRY_FMT, &f)
        return self.format(f)
    }

    public func setFormat(_ format: V4L2Format) throws -> V4L2Format {
        var f = pixFormat(format)
        try ioctl("VIDIOC_S_FMT", LL_VIDIOC_S_FMT, &f)
        return self.format(f)
    }

    public func setFrameRate(_ fps: Int) throws -> Double {
        var parm = v4l2_streamparm()
        parm.type = Self.captureType
        parm.parm.capture.timeperframe = v4l2_fract(numerator: 1, denominator: UInt32(max(1, fps)))
        try ioctl("VIDIOC_S_PARM", LL_VIDIOC_S_PARM, &parm)
        let t = parm.parm.capture.timeperframe
        return t.numerator == 0 ? Double(fps) : Double(t.denominator) / Double(t.numerator)
    }

    public func requestBuffers(count: Int) throws -> Int {
        var req = v4l2_requestbuffers()
        req.count = UInt32(count)
        req.type = Self.captureType
        req.memory = Self.mmapMemory
        try ioctl("VIDIOC_REQBUFS", LL_VIDIOC_REQBUFS, &req)
        return Int(req.count)
    }

    public func queryBuffer(index: Int) throws -> V4L2BufferInfo {
        var buf = v4l2_buffer()
        buf.index = UInt32(index)
        buf.type = Self.captureType
        buf.memory = Self.mmapMemory
        try ioctl("VIDIOC_QUERYBUF", LL_VIDIOC_QUERYBUF, &buf)
        return V4L2BufferInfo(index: index, offset: Int(buf.m.offset), length: Int(buf.length))
    }

    public func map(_ buffer: V4L2BufferInfo) throws -> UnsafeMutableRawPointer {
        let mapped = v4l2_mmap(nil, buffer.length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, Int64(buffer.offset))
        guard let mapped, mapped != UnsafeMutableRawPointer(bitPattern: -1) else {
            throw V4L2Error(call: "mmap", errno: errno, path: path)
        }
        return mapped
    }

    public func unmap(_ pointer: UnsafeMutableRawPointer, length: Int) {
        _ = v4l2_munmap(pointer, length)
    }

    public func queueBuffer(index: Int) throws {
        var buf = v4l2_buffer()
        buf.index = UInt32(index)
        buf.type = Self.captureType
        buf.memory = Self.mmapMemory
        try ioctl("VIDIOC_QBUF", LL_VIDIOC_QBUF, &buf)
    }

    public func dequeueBuffer(timeoutMillis: Int) throws -> V4L2FilledBuffer? {
        var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let ready = try V4L2Error.check("poll", path: path) { poll(&pfd, 1, Int32(timeoutMillis)) }!
        guard ready > 0 else { return nil }
        var buf = v4l2_buffer()
        buf.type = Self.captureType
        buf.memory = Self.mmapMemory
        guard try ioctl("VIDIOC_DQBUF", LL_VIDIOC_DQBUF, &buf, wouldBlockIsNil: true) else { return nil }
        return V4L2FilledBuffer(index: Int(buf.index), bytesUsed: Int(buf.bytesused), sequence: buf.sequence)
    }

    public func streamOn() throws {
        var type = Self.captureType
        try ioctl("VIDIOC_STREAMON", LL_VIDIOC_STREAMON, &type)
    }

    public func streamOff() throws {
        var type = Self.captureType
        try ioctl("VIDIOC_STREAMOFF", LL_VIDIOC_STREAMOFF, &type)
    }

    public func queryControl(id: UInt32) throws -> V4L2ControlRange? {
        var query = v4l2_queryctrl()
        query.id = id
        do {
            try ioctl("VIDIOC_QUERYCTRL", LL_VIDIOC_QUERYCTRL, &query)
        } catch let error as V4L2Error where error.errno == EINVAL {
            return nil
        }
        guard query.flags & LL_V4L2_CTRL_FLAG_DISABLED == 0 else { return nil }
        return V4L2ControlRange(name: Self.string(query.name), minimum: query.minimum, maximum: query.maximum,
                                step: query.step, defaultValue: query.default_value)
    }

    public func getControl(id: UInt32) throws -> Int32 {
        var control = v4l2_control(id: id, value: 0)
        try ioctl("VIDIOC_G_CTRL", LL_VIDIOC_G_CTRL, &control)
        return control.value
    }

    public func setControl(id: UInt32, value: Int32) throws {
        var control = v4l2_control(id: id, value: value)
        try ioctl("VIDIOC_S_CTRL", LL_VIDIOC_S_CTRL, &control)
    }
}
