import CFFmpeg
import LiveCore

/// Pictures from a libavdevice video capture input, such as the screen of an X display
/// through x11grab: each read grabs one picture and converts it with swscale straight
/// into an I420 frame of the caller's size (one conversion, whatever the device's
/// format and size).
///
/// Reading blocks as long as the device makes it (x11grab sleeps until its own frame
/// time: give it a `framerate` above the rate it is read at and it grabs at once).
/// Confined to one thread at a time (the capture thread).
public final class VideoDeviceReader {
    /// The device for people, such as `the screen of display :99`.
    public let name: String
    /// The size of the pictures the device delivers.
    public let deviceWidth: Int
    public let deviceHeight: Int

    private let decoder: StreamDecoder
    private let scaler = Scaler(filter: .bilinear, cacheCapacity: 1)

    /// Opens `url` with the libavdevice input `format` (such as "x11grab") and its
    /// `options`; `name` names it and `hint` says what to check when it does not open.
    /// Throws an `FFmpegError` carrying both.
    public init(format: String, url: String, options: [(String, String)], name: String, hint: String) throws {
        let input = try FormatInput.device(format: format, url: url, options: options, device: name, hint: hint)
        decoder = try StreamDecoder(input: input, media: AVMEDIA_TYPE_VIDEO, name: name, probe: false)
        let parameters = decoder.stream.pointee.codecpar.pointee
        guard parameters.width > 0, parameters.height > 0 else {
            throw FFmpegError(call: "avformat_open_input(\(format):\(url))", message: "\(name) declares no picture size")
        }
        self.name = name
        deviceWidth = Int(parameters.width)
        deviceHeight = Int(parameters.height)
    }

    /// Grabs the next picture and draws it into `frame`, fitted by `mode`; false when the
    /// device has ended.
    public func read(into frame: VideoFrame, mode: RenderMode) throws -> Bool {
        guard let decoded = try decoder.nextFrame() else { return false }
        try scaler.scale(Scaler.Picture(avFrame: decoded), into: frame, mode: mode)
        return true
    }
}
