import CFFmpeg
import LiveCore

/// Demuxes a file (anything libavformat opens: MP4, FLV, MKV, PNG, JPEG, …) and decodes its
/// first video stream into `AVFrame`s. The common part of `MediaFileReader` and `ImageFile`.
///
/// Owns the AVFormatContext, AVCodecContext, AVFrame and AVPacket it opens. Confined to
/// one thread at a time.
final class VideoFileDecoder {
    let path: String
    private var format: UnsafeMutablePointer<AVFormatContext>?
    private var codec: UnsafeMutablePointer<AVCodecContext>?
    private var frame: UnsafeMutablePointer<AVFrame>?
    private var packet: UnsafeMutablePointer<AVPacket>?
    private(set) var streamIndex: Int32 = -1
    private var draining = false
    private var finished = false

    init(path: String) throws {
        FFmpegLog.applyDefault()
        self.path = path
        try FFmpegError.check(avformat_open_input(&format, path, nil, nil), "avformat_open_input(\(path))")
        try FFmpegError.check(avformat_find_stream_info(format, nil), "avformat_find_stream_info(\(path))")
        var decoder: UnsafePointer<AVCodec>?
        let index = av_find_best_stream(format, AVMEDIA_TYPE_VIDEO, -1, -1, &decoder, 0)
        try FFmpegError.check(index, "av_find_best_stream(video, \(path))")
        streamIndex = index
        guard let decoder else {
            throw FFmpegError(call: "av_find_best_stream(\(path))", message: "no decoder for the video stream")
        }
        codec = avcodec_alloc_context3(decoder)
        frame = av_frame_alloc()
        packet = av_packet_alloc()
        guard let codec, frame != nil, packet != nil else {
            throw FFmpegError(call: "avcodec_alloc_context3/av_frame_alloc/av_packet_alloc", message: "out of memory")
        }
        let stream = format!.pointee.streams[Int(index)]!
        try FFmpegError.check(avcodec_parameters_to_context(codec, stream.pointee.codecpar),
                              "avcodec_parameters_to_context(\(path))")
        codec.pointee.pkt_timebase = stream.pointee.time_base
        try FFmpegError.check(avcodec_open2(codec, decoder, nil), "avcodec_open2(\(path))")
    }

    deinit {
        av_packet_free(&packet)
        av_frame_free(&frame)
        avcodec_free_context(&codec)
        avformat_close_input(&format)
    }

    var stream: UnsafeMutablePointer<AVStream> { format!.pointee.streams[Int(streamIndex)]! }

    /// The next decoded picture, valid until the next call; nil at the end of the file.
    func nextFrame() throws -> UnsafeMutablePointer<AVFrame>? {
        guard !finished, let codec, let frame, let packet else { return nil }
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
            let read = av_read_frame(format, packet)
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
        guard let format, let codec else { return }
        let start = stream.pointee.start_time == ll_av_nopts_value() ? 0 : stream.pointee.start_time
        try FFmpegError.check(av_seek_frame(format, streamIndex, start, AVSEEK_FLAG_BACKWARD),
                              "av_seek_frame(\(path))")
        avcodec_flush_buffers(codec)
        draining = false
        finished = false
    }
}
