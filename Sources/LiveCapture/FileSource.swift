import LiveCodec
import LiveCore

/// A media file as a live source (`file:PATH`, the anyRTC SDK's "file as camera"): decoded
/// with `MediaFileReader`, fitted into the requested size (aspect-fit, black bars) and
/// delivered at the requested frame rate.
///
/// Output frame n is due at n / fps on the timeline that starts at `start()`; it shows
/// the file frame whose pts was the latest at that time, so a 25 fps file played at
/// 30 fps repeats a frame now and then and stays in step with the file's own clock.
/// At the end of the file it rewinds when `loop` is set, and the timeline (and the
/// pts, `MediaTime(frame: n, fps: fps)`) carry on without a jump; otherwise the stream ends.
/// A pass lasts the file's declared duration (the longest of its tracks) or its last
/// picture's end, whichever is later, so a file's sound played by `MediaAudioSource`
/// starts each pass with the pictures.
///
/// Confined to the capture thread, like every `VideoSource`.
public final class FileSource: VideoSource {
    public let path: String
    public let width: Int
    public let height: Int
    public let fps: Int
    public let realTime: Bool
    public let loop: Bool
    public let renderMode: RenderMode
    /// The file's own picture size and rate.
    public let fileWidth: Int
    public let fileHeight: Int
    public let fileFPS: Double

    private let reader: MediaFileReader
    private let scaler = Scaler(filter: .bilinear, cacheCapacity: 1)
    private let pool: FramePool
    private var pacer: FramePacer
    private var index: Int64 = 0
    /// One file frame's duration, used to place the first frame of the next pass.
    private let fileFrameMicros: Int64

    /// A decoded file frame with its time on the output timeline (µs since the start).
    private typealias Timed = (frame: VideoFrame, time: Int64)
    private var current: Timed?
    private var upcoming: Timed?
    private var readAll = false
    private var firstPts: Int64?
    private var passOffset: Int64 = 0
    private var lastTime: Int64 = -1
    private var framesRead = 0

    /// Opens `path`; throws `.invalidParams` when it cannot be opened or has no video.
    public init(path: String, width: Int, height: Int, fps: Int, realTime: Bool = true, loop: Bool = true,
                renderMode: RenderMode = .aspectFit) throws {
        try SourceSpec.checkFormat(width: width, height: height, fps: fps)
        do {
            reader = try MediaFileReader(path: path)
        } catch {
            throw LiveError(.invalidParams, "cannot read video from \(path): \(error)")
        }
        self.path = path
        self.width = width
        self.height = height
        self.fps = fps
        self.realTime = realTime
        self.loop = loop
        self.renderMode = renderMode
        fileWidth = reader.width
        fileHeight = reader.height
        fileFPS = reader.fps
        fileFrameMicros = Int64(1_000_000 / (reader.fps > 0 ? reader.fps : Double(fps)))
        pool = FramePool(width: width, height: height)
        pacer = FramePacer(fps: fps)
    }

    public var name: String {
        let rate = fileFPS == fileFPS.rounded() ? String(Int(fileFPS)) : String(fileFPS)
        return "file \(path) (\(fileWidth)x\(fileHeight)@\(rate)) → \(width)x\(height)@\(fps)\(loop ? ", looped" : "")"
    }

    /// Starts from the first frame of the file.
    public func start() throws {
        if framesRead > 0 { try reader.rewind() }
        current = nil
        upcoming = nil
        readAll = false
        firstPts = nil
        passOffset = 0
        lastTime = -1
        framesRead = 0
        index = 0
        pacer.start()
    }

    public func nextFrame() throws -> VideoFrame? {
        let due = MediaTime(frame: index, fps: fps).micros
        if current == nil {
            guard let first = try read() else { return nil }
            current = first
        }
        if upcoming == nil && !readAll { upcoming = try read() }
        while let next = upcoming, next.time <= due {
            current = next
            upcoming = try read()
        }
        guard let shown = current else { return nil }
        // Without a loop the stream ends once the last frame has had its time.
        if upcoming == nil && readAll && due >= shown.time + fileFrameMicros { return nil }

        if realTime { pacer.wait(untilOffset: due) }
        let frame = pool.acquire()
        try scaler.scale(shown.frame, into: frame, mode: renderMode)
        frame.pts = MediaTime(micros: due)
        frame.captureTimeMicros = Clock.wallMicros()
        index += 1
        return frame
    }

    public func stop() {
        current = nil
        upcoming = nil
    }

    /// The next file frame placed on the output timeline, rewinding at the end when looping.
    private func read() throws -> Timed? {
        guard !readAll else { return nil }
        var decoded = try reader.nextFrame()
        if decoded == nil && loop && framesRead > 0 {
            try reader.rewind()
            firstPts = nil
            // A pass lasts the file's declared duration when that is longer (its sound
            // track ends later), the period `MediaAudioSource` loops the file's sound on.
            passOffset = max(lastTime + fileFrameMicros, passOffset + (reader.durationMicros ?? 0))
            decoded = try reader.nextFrame()
        }
        guard let frame = decoded else {
            readAll = true
            return nil
        }
        framesRead += 1
        if firstPts == nil { firstPts = frame.pts.micros }
        var time = frame.pts.micros - firstPts! + passOffset
        // Missing or repeated timestamps still move forward by one file frame.
        if time <= lastTime { time = lastTime + fileFrameMicros }
        lastTime = time
        return (frame, time)
    }
}
