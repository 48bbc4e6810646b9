import CFFmpeg
import LiveCore

/// Reads the first video stream of a media file (anything libavformat opens) as I420
/// frames at the file's own size: the source behind a "file" camera and looping clips.
///
/// Frames come from a `FramePool`; pts are microseconds from the stream's start.
/// Confined to one thread at a time (the capture thread).
public final class MediaFileReader: @unchecked Sendable {
    // @unchecked: the demuxer and decoder are used by one thread at a time (the capture thread).
    public let path: String
    /// Picture size as the file declares it (frames are always this size, even).
    public let width: Int
    public let height: Int
    /// Frames per second from the stream's average (or else real base) frame rate; 0 when the file gives neither.
    public let fps: Double

    private var decoder: StreamDecoder
    private let pool: FramePool
    private var scaler: Scaler?
    private let timeBase: AVRational
    private let startTime: Int64

    /// Opens `path` and its video decoder; throws naming the file and the failing call.
    public init(path: String, poolCapacity: Int = 8) throws {
        self.path = path
        decoder = try StreamDecoder(path: path)
        let stream = decoder.stream.pointee
        let parameters = stream.codecpar.pointee
        guard parameters.width > 0, parameters.height > 0 else {
            throw FFmpegError(call: "avformat_find_stream_info(\(path))", message: "the video stream has no size")
        }
        width = (Int(parameters.width) + 1) & ~1
        height = (Int(parameters.height) + 1) & ~1
        let rate = stream.avg_frame_rate.num > 0 && stream.avg_frame_rate.den > 0 ? stream.avg_frame_rate
            : stream.r_frame_rate
        fps = rate.num > 0 && rate.den > 0 ? Double(rate.num) / Double(rate.den) : 0
        timeBase = stream.time_base
        startTime = stream.start_time == ll_av_nopts_value() ? 0 : stream.start_time
        pool = FramePool(width: width, height: height, capacity: poolCapacity)
    }

    /// The file's duration in µs (its longest track, sound included), when it declares one.
    public var durationMicros: Int64? { decoder.durationMicros }

    /// The next frame, or nil at the end of the file.
    public func nextFrame() throws -> VideoFrame? {
        guard let decoded = try decoder.nextFrame() else { return nil }
        let frame = pool.acquire()
        let format = AVPixelFormat(decoded.pointee.format)
        let sameSize = (Int(decoded.pointee.width) + 1) & ~1 == width && (Int(decoded.pointee.height) + 1) & ~1 == height
        if sameSize && (format == AV_PIX_FMT_YUV420P || format == AV_PIX_FMT_YUVJ420P) {
            H264Decoder.copyPlanes(from: decoded, to: frame)
        } else {
            if scaler == nil { scaler = Scaler() }
            try scaler!.scale(Scaler.Picture(avFrame: decoded), into: frame, mode: .stretch)
        }
        var pts = decoded.pointee.best_effort_timestamp
        if pts == ll_av_nopts_value() { pts = decoded.pointee.pts }
        if pts != ll_av_nopts_value() {
            frame.pts = MediaTime(micros: av_rescale_q(pts - startTime, timeBase, AVRational(num: 1, den: 1_000_000)))
        }
        return frame
    }

    /// Goes back to the first frame (for looping). Formats that cannot seek are reopened.
    public func rewind() throws {
        do {
            try decoder.rewind()
        } catch {
            decoder = try StreamDecoder(path: path)
        }
    }
}
