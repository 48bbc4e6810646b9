import LiveCodec
import LiveCore

/// The screen of an X display as a live source (`screen:DISPLAY[+X,Y][@WxH]`, see
/// `ScreenSpec`), grabbed through FFmpeg's libavdevice x11grab: what a hoster shares
/// (the anyRTC SDK's screen share, `ARShareDelegate`) or pushes as its picture.
///
/// Each frame grabs the captured area at the moment it is due and converts it straight
/// into an I420 frame of the pipeline's size (aspect-fit: black bars when the shapes
/// differ). Frames are paced on the monotonic clock at `fps` from `start()`, with
/// `pts = MediaTime(frame: n, fps: fps)` like the other sources; the grab itself never
/// waits (x11grab is asked for a rate far above `fps`). The mouse pointer is drawn, as
/// x11grab does by default.
///
/// The display is opened by `init`, so a missing X server or an area outside the screen
/// is refused before anything starts; `stop()` closes it and `start()` opens it again.
/// Confined to the capture thread, like every `VideoSource`.
public final class ScreenSource: VideoSource {
    public let spec: ScreenSpec
    public let width: Int
    public let height: Int
    public let fps: Int
    /// The captured area's size on the screen.
    public private(set) var screenWidth = 0
    public private(set) var screenHeight = 0

    private let display: String
    private var reader: VideoDeviceReader?
    private let pool: FramePool
    private var pacer: FramePacer
    private var index: Int64 = 0
    /// x11grab sleeps until its own next frame time; this rate keeps that time behind ours.
    private static let grabRate = "1000"

    /// Opens the display's screen; throws `.invalidParams` for a size or rate the
    /// pipeline cannot take and `.cameraNotFound` (the SDK's "no capture device") naming
    /// the display and what to check when it cannot be captured.
    public init(spec: ScreenSpec, width: Int, height: Int, fps: Int) throws {
        try SourceSpec.checkFormat(width: width, height: height, fps: fps)
        guard let display = spec.resolvedDisplay else {
            throw LiveError(.invalidParams, "screen: names no display and DISPLAY is not set (write screen::N for display :N)")
        }
        self.spec = spec
        self.display = display
        self.width = width
        self.height = height
        self.fps = fps
        pool = FramePool(width: width, height: height)
        pacer = FramePacer(fps: fps)
        try open()
    }

    public var name: String {
        let area = spec.size.map { "\($0.width)x\($0.height)+\(spec.x),\(spec.y)" } ?? "\(screenWidth)x\(screenHeight)"
        return "screen \(display) (\(area)) → \(width)x\(height)@\(fps)"
    }

    public func start() throws {
        if reader == nil { try open() }
        index = 0
        pacer.start()
    }

    public func nextFrame() throws -> VideoFrame? {
        guard let reader else { return nil }
        pacer.wait(forFrame: index)
        let frame = pool.acquire()
        do {
            guard try reader.read(into: frame, mode: .aspectFit) else { return nil }
        } catch {
            throw LiveError(.exception, "capturing the screen of display \(display) failed: \(ffmpegReason(error))")
        }
        frame.pts = MediaTime(frame: index, fps: fps)
        frame.captureTimeMicros = Clock.wallMicros()
        index += 1
        return frame
    }

    public func stop() {
        reader = nil
    }

    private func open() throws {
        var options = [("framerate", Self.grabRate)]
        if let size = spec.size { options.append(("video_size", "\(size.width)x\(size.height)")) }
        let url = display + (spec.x != 0 || spec.y != 0 ? "+\(spec.x),\(spec.y)" : "")
        do {
            reader = try Self.grab(url: url, options: options)
        } catch {
            // x11grab says "Invalid argument" for an area off the screen: measure the
            // screen to say which part is off (when the display opens at all).
            let partial = spec.size != nil || spec.x != 0 || spec.y != 0
            if partial, let whole = try? Self.grab(url: display, options: [("framerate", Self.grabRate)]) {
                let area = spec.size.map { "\($0.width)x\($0.height)" } ?? "the area"
                throw LiveError(.invalidParams, "\(area) at +\(spec.x),\(spec.y) does not fit the "
                    + "\(whole.deviceWidth)x\(whole.deviceHeight) screen of display \(display)")
            }
            throw LiveError(.cameraNotFound, ffmpegReason(error))
        }
        screenWidth = reader!.deviceWidth
        screenHeight = reader!.deviceHeight
    }

    private static func grab(url: String, options: [(String, String)]) throws -> VideoDeviceReader {
        let display = url.split(separator: "+", maxSplits: 1).first.map(String.init) ?? url
        return try VideoDeviceReader(format: "x11grab", url: url, options: options,
                                     name: "the screen of display \(display)",
                                     hint: "is an X server running on \(display)? e.g. `Xvfb \(display) -noreset &`; "
                                         + "DISPLAY and XAUTHORITY must let this user in")
    }
}

/// FFmpeg's message without the call that produced it, for people.
func ffmpegReason(_ error: Error) -> String {
    (error as? FFmpegError)?.message ?? "\(error)"
}
