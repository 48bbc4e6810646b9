import CFFmpeg
import LiveCore

/// Demuxes an input (a file anything libavformat opens: MP4, FLV, MKV, M4A, PNG, JPEG, …;
/// or a libavdevice capture device) and decodes its best stream of one kind, video or
/// audio, into `AVFrame`s. The common part of `MediaFileReader`, `ImageFile` and
/// `MediaAudioReader`.
///
/// Owns (through their handle classes) the AVFormatContext, AVCodecContext, AVFrame and
/// AVPacket it opens. Confined to one thread at a time.
final class StreamDecoder {
    /// The file's path or the device's name, for messages.
    let path: String
    private let input: FormatInput
    private let codecContext: CodecContext
    private let codecFrame: CodecFrame
    private let codecPacket: CodecPacket
    let streamIndex: Int32
    private var finished = false

    /// Opens the file at `path` and the decoder of its best `media` stream.
    convenience init(path: String, media: AVMediaType = AVMEDIA_TYPE_VIDEO) throws {
        try self.init(input: FormatInput(path: path), media: media, name: path, probe: true)
    }

    /// Decodes the best `media` stream of an opened input. `probe` reads ahead to fill in
    /// stream parameters (files); devices declare theirs when opened and must not be read
    /// ahead of the caller.
    init(input: FormatInput, media: AVMediaType, name: String, probe: Bool) throws {
        FFmpegLog.applyDefault()
        path = name
        self.input = input
        let format = input.pointer
        if probe {
            try FFmpegError.check(avformat_find_stream_info(format, nil), "avformat_find_stream_info(\(name))")
        }
        let kind = media == AVMEDIA_TYPE_AUDIO ? "audio" : "video"
        var decoder: UnsafePointer<AVCodec>?
        let index = av_find_best_stream(format, media, -1, -1, &decoder, 0)
        if index == FFmpegError.streamNotFound {
            throw FFmpegError(call: "av_find_best_stream(\(kind), \(name))", message: "\(name) has no \(kind) track")
        }
        try FFmpegError.check(index, "av_find_best_stream(\(kind), \(name))")
        streamIndex = index
        guard let decoder else {
            throw FFmpegError(call: "av_find_best_stream(\(name))", message: "no decoder for the \(kind) stream")
        }
        codecContext = try CodecContext(codec: decoder, for: name)
        codecFrame = try CodecFrame()
        codecPacket = try CodecPacket()
        let codec = codecContext.pointer
        let stream = format.pointee.streams[Int(index)]!
        try FFmpegError.check(avcodec_parameters_to_context(codec, stream.pointee.codecpar),
                              "avcodec_parameters_to_context(\(name))")
        codec.pointee.pkt_timebase = stream.pointee.time_base
        try FFmpegError.check(avcodec_open2(codec, decoder, nil), "avcodec_open2(\(name))")
    }

    var stream: UnsafeMutablePointer<AVStream> { input.pointer.pointee.streams[Int(streamIndex)]! }

    /// The input's whole duration (the longest of its streams) in µs, when it declares one.
    var durationMicros: Int64? {
        let duration = input.pointer.pointee.duration
        return duration == ll_av_nopts_value() || duration <= 0 ? nil : duration
    }

    /// The stream's declared length in its time base, when the container states it (an
    /// MP4 edit list, a WAV header, an Ogg's last granule), not when libavformat guessed
    /// it from the bitrate (an MP3 without a header, which can be well off).
    var declaredStreamDuration: Int64? {
        let duration = stream.pointee.duration
        guard duration > 0, duration != ll_av_nopts_value(),
              input.pointer.pointee.duration_estimation_method != AVFMT_DURATION_FROM_BITRATE else { return nil }
        return duration
    }

    /// Whether the input also holds a stream of `media` (such as video beside the audio decoded).
    func has(_ media: AVMediaType) -> Bool {
        let format = input.pointer.pointee
        return (0..<Int(format.nb_streams)).contains { format.streams[$0]!.pointee.codecpar.pointee.codec_type == media }
    }

    /// The next decoded frame, valid until the next call; nil at the end of the input.
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
                try FFmpegError.check(avcodec_send_packet(codec, nil), "avcodec_send_packet(flush, \(path))")
                continue
            }
            try FFmpegError.check(read, "av_read_frame(\(path))")
            defer { av_packet_unref(packet) }
            guard packet.pointee.stream_index == streamIndex else { continue }
            let sent = avcodec_send_packet(codec, packet)
            // A damaged packet costs a picture or a few ms of sound, not the whole file.
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
        finished = false
    }
}
