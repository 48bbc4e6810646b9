import LiveCore

/// Frames of one flat colour (`color:NAME`): what a co-host with video off shows, and
/// a cheap source for tests.
///
/// Confined to the capture thread, like every `VideoSource`.
public final class ColorSource: VideoSource {
    public let width: Int
    public let height: Int
    public let fps: Int
    public let color: YUVColor
    public let realTime: Bool

    private let pool: FramePool
    private var pacer: FramePacer
    private var index: Int64 = 0

    /// `realTime`: deliver `fps` frames per second; false: as fast as they are asked for.
    public init(color: YUVColor, width: Int, height: Int, fps: Int, realTime: Bool = true) throws {
        try SourceSpec.checkFormat(width: width, height: height, fps: fps)
        self.color = color
        self.width = width
        self.height = height
        self.fps = fps
        self.realTime = realTime
        pool = FramePool(width: width, height: height)
        pacer = FramePacer(fps: fps)
    }

    public var name: String { "colour \(color) \(width)x\(height)@\(fps)" }

    public func start() throws {
        index = 0
        pacer.start()
    }

    public func nextFrame() throws -> VideoFrame? {
        if realTime { pacer.wait(forFrame: index) }
        let frame = pool.acquire()
        // Refilled every time: a filter downstream may have drawn on a recycled frame.
        frame.fill(color)
        frame.pts = MediaTime(frame: index, fps: fps)
        frame.captureTimeMicros = Clock.wallMicros()
        index += 1
        return frame
    }

    public func stop() {}
}
