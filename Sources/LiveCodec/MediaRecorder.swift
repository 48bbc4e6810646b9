import CFFmpeg
import Foundation
import LiveCore

/// Records encoded H.264 packets and, optionally, raw AAC frames to a file with
/// libavformat, without re-encoding (the anyRTC SDK's local recording of a live stream;
/// the guest's `--record` and `--out`).
///
/// Containers, from the extension: `.flv`, `.mp4`, `.nut`, `.mkv`; the path "-" is
/// standard output as NUT (a stream format a pipe can carry: `| ffplay -`).
///
/// Recording starts at the first keyframe (earlier packets could not be decoded), or at
/// the first audio frame of a recording without video, and timestamps of both tracks are
/// rebased on that one origin, so they stay in sync; audio from before it is left out.
/// The muxers take the Annex B packets and SPS/PPS as the encoder makes them (MP4 and
/// Matroska store them length-prefixed) and the AudioSpecificConfig as the audio's
/// global header. With two tracks packets go through libavformat's interleaving queue.
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
    // @unchecked: the muxer is used by one thread at a time (see above).
    /// Why a recording could not be made.
    public enum RecorderError: Error, CustomStringConvertible, Equatable, Sendable {
        case unsupportedContainer(path: String)
        case finished(path: String)
        /// An earlier write failed (`cause`); the file keeps what was written before it.
        case failed(path: String, cause: String)
        /// Neither a video nor an audio track was given.
        case noTracks(path: String)

        public var description: String {
            switch self {
            case .unsupportedContainer(let path): "\(path): record to a .flv, .mp4, .nut or .mkv file"
            case .finished(let path): "\(path): the recording is already finished"
            case .failed(let path, let cause): "\(path): the recording stopped after a failed write: \(cause)"
            case .noTracks(let path): "\(path): a recording needs a video or an audio track"
            }
        }
    }

    /// The container formats, named as libavformat names its muxers.
    public enum Container: String, Sendable, CaseIterable {
        case flv, mp4, nut, matroska

        /// The container for `path`'s extension ("-": NUT on standard output); nil for others.
        public init?(path: String) {
            if path == "-" {
                self = .nut
                return
            }
            switch URL(fileURLWithPath: path).pathExtension.lowercased() {
            case "flv": self = .flv
            case "mp4": self = .mp4
            case "nut": self = .nut
            case "mkv": self = .matroska
            default: return nil
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
    public let container: Container
    /// The video track, if any.
    public let video: VideoStreamInfo?
    /// The audio track, if any.
    public let audio: AudioStreamInfo?
    private var format: UnsafeMutablePointer<AVFormatContext>?
    private var packet: UnsafeMutablePointer<AVPacket>?
    private var isFinished = false
    /// The first write error, after which nothing more is written.
    private var failure: FFmpegError?
    private var origin: Int64?
    /// Per stream index (video first when there is one).
    private var lastDTS: [Int64] = []
    private let videoIndex: Int32?
    private let audioIndex: Int32?
    /// Packets written so far (those before the first keyframe are not counted).
    public private(set) var packetsWritten = 0
    /// Audio frames written so far.
    public private(set) var audioPacketsWritten = 0

    private static let microseconds = AVRational(num: 1, den: 1_000_000)

    /// Creates a video-only file and writes its header; the container follows the extension.
    public convenience init(path: String, stream: VideoStreamInfo) throws {
        try self.init(path: path, video: stream, audio: nil)
    }

    /// The video track (a recording with one).
    public var stream: VideoStreamInfo? { video }

    /// Creates the file (or standard output for "-") with the tracks given and writes its
    /// header; the container follows the extension unless `container` says.
    public init(path: String, container: Container? = nil, video: VideoStreamInfo?, audio: AudioStreamInfo?) throws {
        self.path = path
        guard let container = container ?? Container(path: path) else { throw RecorderError.unsupportedContainer(path: path) }
        guard video != nil || audio != nil else { throw RecorderError.noTracks(path: path) }
        self.container = container
        self.video = video
        self.audio = audio
        videoIndex = video == nil ? nil : 0
        audioIndex = audio == nil ? nil : (video == nil ? 0 : 1)
        lastDTS = [Int64](repeating: .min, count: (video == nil ? 0 : 1) + (audio == nil ? 0 : 1))
        let formatName = container.rawValue
        let target = path == "-" ? "pipe:1" : path
        FFmpegLog.applyDefault()
        try FFmpegError.check(avformat_alloc_output_context2(&format, nil, formatName, target),
                              "avformat_alloc_output_context2(\(formatName), \(path))")
        packet = av_packet_alloc()
        guard let format, packet != nil else {
            throw FFmpegError(call: "avformat_alloc_output_context2/av_packet_alloc(\(path))", message: "out of memory")
        }
        if let video {
            guard let avStream = avformat_new_stream(format, nil) else {
                throw FFmpegError(call: "avformat_new_stream(\(path))", message: "out of memory")
            }
            let parameters = avStream.pointee.codecpar!
            parameters.pointee.codec_type = AVMEDIA_TYPE_VIDEO
            parameters.pointee.codec_id = AV_CODEC_ID_H264
            parameters.pointee.width = Int32(video.width)
            parameters.pointee.height = Int32(video.height)
            parameters.pointee.bit_rate = Int64(video.bitrate)
            try Self.setExtradata(video.extradata, on: parameters, path: path)
            let rate = AVRational(num: Int32(max(1, video.fps)), den: 1)
            avStream.pointee.avg_frame_rate = rate
            avStream.pointee.r_frame_rate = rate
            // A hint; the muxer picks its own (FLV: milliseconds) in avformat_write_header.
            avStream.pointee.time_base = AVRational(num: 1, den: 90_000)
        }
        if let audio {
            guard let avStream = avformat_new_stream(format, nil) else {
                throw FFmpegError(call: "avformat_new_stream(\(path))", message: "out of memory")
            }
            let parameters = avStream.pointee.codecpar!
            parameters.pointee.codec_type = AVMEDIA_TYPE_AUDIO
            parameters.pointee.codec_id = AV_CODEC_ID_AAC
            parameters.pointee.sample_rate = Int32(audio.sampleRate)
            av_channel_layout_default(&parameters.pointee.ch_layout, Int32(audio.channelCount))
            parameters.pointee.bit_rate = Int64(audio.bitrate)
            parameters.pointee.frame_size = 1024
            try Self.setExtradata(audio.audioSpecificConfig, on: parameters, path: path)
            avStream.pointee.time_base = AVRational(num: 1, den: Int32(audio.sampleRate))
        }
        if format.pointee.oformat.pointee.flags & AVFMT_NOFILE == 0 {
            try FFmpegError.check(avio_open(&format.pointee.pb, target, AVIO_FLAG_WRITE), "avio_open(\(path))")
        }
        var options: OpaquePointer?
        defer { av_dict_free(&options) }
        if container == .mp4 {
            av_dict_set(&options, "movflags", MediaRecorder.fragmentFlags, 0)
            av_dict_set(&options, "frag_duration", "\(MediaRecorder.fragmentMicros)", 0)
        }
        try FFmpegError.check(avformat_write_header(format, &options), "avformat_write_header(\(path))")
    }

    private static func setExtradata(_ bytes: [UInt8], on parameters: UnsafeMutablePointer<AVCodecParameters>,
                                     path: String) throws {
        guard !bytes.isEmpty else { return }
        guard let memory = av_mallocz(bytes.count + Int(AV_INPUT_BUFFER_PADDING_SIZE)) else {
            throw FFmpegError(call: "av_mallocz(extradata, \(path))", message: "out of memory")
        }
        memory.copyMemory(from: bytes, byteCount: bytes.count)
        parameters.pointee.extradata = memory.assumingMemoryBound(to: UInt8.self)
        parameters.pointee.extradata_size = Int32(bytes.count)
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

    /// Appends one video packet (in decode order). Packets before the first keyframe are
    /// skipped, as are all of them in a recording without video.
    public func write(_ encoded: EncodedVideoPacket) throws {
        try checkWritable()
        guard let videoIndex, let video else { return }
        if origin == nil {
            guard encoded.isKeyframe else { return }
            origin = encoded.dts.micros
        }
        try write(encoded.data, stream: videoIndex, dts: encoded.dts.micros, pts: encoded.pts.micros,
                  duration: 1_000_000 / Int64(max(1, video.fps)), keyframe: encoded.isKeyframe)
        packetsWritten += 1
    }

    /// Appends one raw AAC frame (in order). Frames before the origin (the first
    /// keyframe, or the first audio frame without video) are skipped, as are all of them
    /// in a recording without audio.
    public func write(audio encoded: EncodedAudioPacket) throws {
        try checkWritable()
        guard let audioIndex else { return }
        if origin == nil {
            guard videoIndex == nil else { return }
            origin = encoded.pts.micros
        }
        guard encoded.pts.micros >= origin! else { return }
        try write(encoded.data, stream: audioIndex, dts: encoded.pts.micros, pts: encoded.pts.micros,
                  duration: encoded.duration.micros, keyframe: true)
        audioPacketsWritten += 1
    }

    private func checkWritable() throws {
        guard !isFinished else { throw RecorderError.finished(path: path) }
        if let failure { throw RecorderError.failed(path: path, cause: failure.description) }
    }

    /// Writes `data` on stream `index` with times in µs on the stream's clock.
    private func write(_ data: [UInt8], stream index: Int32, dts dtsMicros: Int64, pts ptsMicros: Int64,
                       duration: Int64, keyframe: Bool) throws {
        guard let format, let packet, let origin else { return }
        let timeBase = format.pointee.streams[Int(index)]!.pointee.time_base
        func rescale(_ micros: Int64) -> Int64 { av_rescale_q(micros, MediaRecorder.microseconds, timeBase) }
        var dts = rescale(dtsMicros - origin)
        // Muxers need strictly increasing dts; two packets in one tick of a coarse time base
        // (FLV's millisecond) must not collide.
        if dts <= lastDTS[Int(index)] { dts = lastDTS[Int(index)] + 1 }
        lastDTS[Int(index)] = dts
        let pts = max(dts, rescale(ptsMicros - origin))
        let interleaved = lastDTS.count > 1
        let result = data.withUnsafeBufferPointer { bytes -> Int32 in
            if interleaved {
                // The interleaving queue keeps packets: it takes a reference-counted copy.
                guard av_new_packet(packet, Int32(bytes.count)) == 0 else { return -12 }  // ENOMEM
                if let base = bytes.baseAddress { packet.pointee.data.update(from: base, count: bytes.count) }
            } else {
                // Borrowed, not reference counted: av_write_frame writes it before returning.
                packet.pointee.data = UnsafeMutablePointer(mutating: bytes.baseAddress)
                packet.pointee.size = Int32(bytes.count)
            }
            packet.pointee.pts = pts
            packet.pointee.dts = dts
            packet.pointee.duration = rescale(duration)
            packet.pointee.flags = keyframe ? AV_PKT_FLAG_KEY : 0
            packet.pointee.stream_index = index
            if interleaved {
                // Takes the packet's reference and leaves it blank.
                return av_interleaved_write_frame(format, packet)
            }
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
