import CFFmpeg
import Foundation
import LiveCore

/// Records encoded H.264 packets to an `.flv` or `.mp4` file with libavformat (the anyRTC
/// SDK's local recording of a live stream).
///
/// Recording starts at the first keyframe (earlier packets could not be decoded) and
/// timestamps are rebased so that keyframe's dts is 0. Both muxers take the Annex B
/// packets and SPS/PPS as the encoder makes them and store them length-prefixed.
///
/// A recording cut off (the process killed, the disk full) stays playable up to its
/// last complete part: FLV is a stream of self-contained tags, and MP4 is written
/// fragmented (`movflags` `fragmentFlags`: the track header up front, then a fragment
/// per keyframe and at least every `fragmentMicros`), so no index at the end is needed.
/// A failing write (ENOSPC) throws an `FFmpegError` naming the call and the errno; the
/// recorder then refuses further packets with `RecorderError.failed` and `finish` closes
/// the file, keeping what reached it.
/// Owns its AVFormatContext and AVPacket. Confined to one thread at a time.
public final class MediaRecorder: @unchecked Sendable {
    /// Why a recording could not be made.
    public enum RecorderError: Error, CustomStringConvertible, Equatable, Sendable {
        case unsupportedContainer(path: String)
        case finished(path: String)
        /// An earlier write failed (`cause`); the file keeps what was written before it.
        case failed(path: String, cause: String)

        public var description: String {
            switch self {
            case .unsupportedContainer(let path): "\(path): record to a .flv or .mp4 file"
            case .finished(let path): "\(path): the recording is already finished"
            case .failed(let path, let cause): "\(path): the recording stopped after a failed write: \(cause)"
            }
        }
    }

    /// The MP4 muxer's `movflags`: fragmented, so a file cut off anywhere plays up to its
    /// last complete fragment.
    public static let fragmentFlags = "frag_keyframe+empty_moov+default_base_moof"
    /// The longest an MP4 fragment runs without a keyframe, in µs: the most a kill can lose
    /// (plus what libavformat's write buffer holds).
    public static let fragmentMicros = 1_000_000

    public let path: String
    public let stream: VideoStreamInfo
    private var format: UnsafeMutablePointer<AVFormatContext>?
    private var packet: UnsafeMutablePointer<AVPacket>?
    private var isFinished = false
    /// The first write error, after which nothing more is written.
    private var failure: FFmpegError?
    private var origin: Int64?
    private var lastDTS: Int64 = .min
    /// Packets written so far (those before the first keyframe are not counted).
    public private(set) var packetsWritten = 0

    private static let microseconds = AVRational(num: 1, den: 1_000_000)

    /// Creates the file and writes its header; the container follows the extension.
    public init(path: String, stream: VideoStreamInfo) throws {
        self.path = path
        self.stream = stream
        let formatName: String
        switch URL(fileURLWithPath: path).pathExtension.lowercased() {
        case "flv": formatName = "flv"
        case "mp4": formatName = "mp4"
        default: throw RecorderError.unsupportedContainer(path: path)
        }
        FFmpegLog.applyDefault()
        try FFmpegError.check(avformat_alloc_output_context2(&format, nil, formatName, path),
                              "avformat_alloc_output_context2(\(formatName), \(path))")
        packet = av_packet_alloc()
        guard let format, packet != nil, let avStream = avformat_new_stream(format, nil) else {
            throw FFmpegError(call: "avformat_new_stream/av_packet_alloc(\(path))", message: "out of memory")
        }
        let parameters = avStream.pointee.codecpar!
        parameters.pointee.codec_type = AVMEDIA_TYPE_VIDEO
        parameters.pointee.codec_id = AV_CODEC_ID_H264
        parameters.pointee.width = Int32(stream.width)
        parameters.pointee.height = Int32(stream.height)
        parameters.pointee.bit_rate = Int64(stream.bitrate)
        if !stream.extradata.isEmpty {
            guard let memory = av_mallocz(stream.extradata.count + Int(AV_INPUT_BUFFER_PADDING_SIZE)) else {
                throw FFmpegError(call: "av_mallocz(extradata, \(path))", message: "out of memory")
            }
            memory.copyMemory(from: stream.extradata, byteCount: stream.extradata.count)
            parameters.pointee.extradata = memory.assumingMemoryBound(to: UInt8.self)
            parameters.pointee.extradata_size = Int32(stream.extradata.count)
        }
        let rate = AVRational(num: Int32(max(1, stream.fps)), den: 1)
        avStream.pointee.avg_frame_rate = rate
        avStream.pointee.r_frame_rate = rate
        // A hint; the muxer picks its own (FLV: milliseconds) in avformat_write_header.
        avStream.pointee.time_base = AVRational(num: 1, den: 90_000)
        if format.pointee.oformat.pointee.flags & AVFMT_NOFILE == 0 {
            try FFmpegError.check(avio_open(&format.pointee.pb, path, AVIO_FLAG_WRITE), "avio_open(\(path))")
        }
        var options: OpaquePointer?
        defer { av_dict_free(&options) }
        if formatName == "mp4" {
            av_dict_set(&options, "movflags", MediaRecorder.fragmentFlags, 0)
            av_dict_set(&options, "frag_duration", "\(MediaRecorder.fragmentMicros)", 0)
        }
        try FFmpegError.check(avformat_write_header(format, &options), "avformat_write_header(\(path))")
    }

    deinit {
        // Never finished: close the file without a trailer (both stay playable up to the last
        // complete fragment or tag).
        if let format, format.pointee.pb != nil, format.pointee.oformat.pointee.flags & AVFMT_NOFILE == 0 {
            avio_closep(&format.pointee.pb)
        }
        av_packet_free(&packet)
        avformat_free_context(format)
    }

    /// Appends one packet (in decode order). Packets before the first keyframe are skipped.
    public func write(_ encoded: EncodedVideoPacket) throws {
        guard !isFinished else { throw RecorderError.finished(path: path) }
        if let failure { throw RecorderError.failed(path: path, cause: failure.description) }
        guard let format, let packet else { return }
        if origin == nil {
            guard encoded.isKeyframe else { return }
            origin = encoded.dts.micros
        }
        let timeBase = format.pointee.streams[0]!.pointee.time_base
        func rescale(_ micros: Int64) -> Int64 { av_rescale_q(micros, MediaRecorder.microseconds, timeBase) }
        var dts = rescale(encoded.dts.micros - origin!)
        // Muxers need strictly increasing dts; two packets in one tick of a coarse time base
        // (FLV's millisecond) must not collide.
        if dts <= lastDTS { dts = lastDTS + 1 }
        lastDTS = dts
        let pts = max(dts, rescale(encoded.pts.micros - origin!))
        let result = encoded.data.withUnsafeBufferPointer { bytes -> Int32 in
            // Borrowed, not reference counted: av_write_frame writes it before returning.
            packet.pointee.data = UnsafeMutablePointer(mutating: bytes.baseAddress)
            packet.pointee.size = Int32(bytes.count)
            packet.pointee.pts = pts
            packet.pointee.dts = dts
            packet.pointee.duration = rescale(1_000_000 / Int64(max(1, stream.fps)))
            packet.pointee.flags = encoded.isKeyframe ? AV_PKT_FLAG_KEY : 0
            packet.pointee.stream_index = 0
            defer {
                packet.pointee.data = nil
                packet.pointee.size = 0
            }
            return av_write_frame(format, packet)
        }
        // Some muxers (FLV) leave a failed flush of the write buffer in `pb.error` only.
        let ioError = format.pointee.pb.map { $0.pointee.error } ?? 0
        if result < 0 || ioError < 0 {
            let error = FFmpegError(call: "av_write_frame(\(path))", code: result < 0 ? result : ioError)
            failure = error
            throw error
        }
        packetsWritten += 1
    }

    /// Writes the trailer and closes the file. After a failed write it only closes the
    /// file (what reached it stays) and throws that failure.
    public func finish() throws {
        guard !isFinished, let format else { return }
        isFinished = true
        if let failure {
            if format.pointee.oformat.pointee.flags & AVFMT_NOFILE == 0 { avio_closep(&format.pointee.pb) }
            throw RecorderError.failed(path: path, cause: failure.description)
        }
        let trailer = av_write_trailer(format)
        if format.pointee.oformat.pointee.flags & AVFMT_NOFILE == 0 {
            let closed = avio_closep(&format.pointee.pb)
            try FFmpegError.check(closed, "avio_closep(\(path))")
        }
        try FFmpegError.check(trailer, "av_write_trailer(\(path))")
    }
}
