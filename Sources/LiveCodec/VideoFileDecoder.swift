import CFFmpeg
import LiveCore

/// Demuxes a file (anything libavformat opens: MP4, FLV, MKV, PNG, JPEG, …) and decodes its
/// first video stream into `AVFrame`s. The common part of `MediaFileReader` and `ImageFile`.
///
/// Owns (through their handle classes) the AVFormatContext, AVCodecContext, AVFrame and
/// AVPacket it opens. Confined to one thread at a time.
final class VideoFileDecoder {
    let path: String
    private let input: FormatInput
    private let codecContext: CodecContext
    private let codecFrame: CodecFrame
    private let codecPacket: CodecPacket
    let streamIndex: Int32
    private var draining = false
    private var finished = false

    init(path: String) throws {
        FFmpegLog.applyDefault()
        self.path = path
        input = try FormatInput(path: path)
        let format = input.pointer
        try FFmpegError.check(avformat_find_stream_info(format, nil), "avformat_find_stream_info(\(path))")
        var decoder: UnsafePointer<AVCodec>?
        let index = av_find_best_stream(format, AVMEDIA_TYPE_VIDEO, -1, -1, &decoder, 0)
        try FFmpegError.check(index, "av_find_best_stream(video, \(path))")
        streamIndex = index
        guard let decoder else {
            throw FFmpegError(call: "av_find_best_stream(\(path))", message: "no decoder for the video stream")
        }
        codecContext = try CodecContext(codec: decoder, for: path)
        codecFrame = try CodecFrame()
        codecPacket = try CodecPacket()
        let codec = codecContext.pointer
        let stream = format.pointee.streams[Int(index)]!
        try FFmpegError.check(avcodec_parameters_to_context(codec, stream.pointee.codecpar),
                              "avcodec_parameters_to_context(\(path))")
        codec.pointee.pkt_timebase = stream.pointee.time_base
        try FFmpegError.check(avcodec_open2(codec, decoder, nil), "avcodec_open2(\(path))")
    }

    var stream: UnsafeMutablePointer<AVStream> { input.pointer.pointee.streams[Int(streamIndex)]! }

    /// The next decoded picture, valid until the next call; nil at the end of the file.
    func nextFrame() throws -> UnsafeMutablePointer<AVFrame>? {
        guard !finished else { return nil }
        let codec = codecContext.pointer, frame = codecFrame.pointer, packet = codecPacket.pointer
        while true {
            let received = avcodec_receive_frame(codec, frame)
            if received == 0 { return frame }
            if received == FFmpegError.eof {
                finished = true
                return nil
            }
            if received != FFmpegError.again {
                throw FFmpegError(call: "avcodec_receive_frame(\(path))", code: received)
            }
            let read = av_read_frame(input.pointer, packet)
            if read == FFmpegError.eof {
                draining = true
                try FFmpegError.check(avcodec_send_packet(codec, nil), "avcodec_send_packet(flush, \(path))")
                continue
            }
            try FFmpegError.check(read, "av_read_frame(\(path))")
            defer { av_packet_unref(packet) }
            guard packet.pointee.stream_index == streamIndex else { continue }
            let sent = avcodec_send_packet(codec, packet)
            // A damaged packet costs a picture, not the whole file.
            if sent < 0 && sent != FFmpegError.invalidData {
                throw FFmpegError(call: "avcodec_send_packet(\(path))", code: sent)
            }
        }
    }

    /// Seeks back to the start of the stream and resets the decoder.
    func rewind() throws {
        let start = stream.pointee.start_time == ll_av_nopts_value() ? 0 : stream.pointee.start_time
        try FFmpegError.check(av_seek_frame(input.pointer, streamIndex, start, AVSEEK_FLAG_BACKWARD),
                              "av_seek_frame(\(path))")
        avcodec_flush_buffers(codecContext.pointer)
        draining = false
        finished = false
    }
}
