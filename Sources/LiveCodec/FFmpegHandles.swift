import CFFmpeg

// One owning class per FFmpeg handle, freed in deinit with its matching free function,
// so every early `throw` during set-up releases what was allocated so far.

/// Owns an `AVCodecContext` (avcodec_alloc_context3 / avcodec_free_context).
final class CodecContext {
    let pointer: UnsafeMutablePointer<AVCodecContext>

    init(codec: UnsafePointer<AVCodec>, for what: String) throws {
        guard let pointer = avcodec_alloc_context3(codec) else {
            throw FFmpegError(call: "avcodec_alloc_context3(\(what))", message: "out of memory")
        }
        self.pointer = pointer
    }

    deinit {
        var pointer: UnsafeMutablePointer<AVCodecContext>? = pointer
        avcodec_free_context(&pointer)
    }
}

/// Owns an `AVFrame` (av_frame_alloc / av_frame_free).
final class CodecFrame {
    let pointer: UnsafeMutablePointer<AVFrame>

    init() throws {
        guard let pointer = av_frame_alloc() else {
            throw FFmpegError(call: "av_frame_alloc", message: "out of memory")
        }
        self.pointer = pointer
    }

    deinit {
        var pointer: UnsafeMutablePointer<AVFrame>? = pointer
        av_frame_free(&pointer)
    }
}

/// Owns an `AVPacket` (av_packet_alloc / av_packet_free).
final class CodecPacket {
    let pointer: UnsafeMutablePointer<AVPacket>

    init() throws {
        guard let pointer = av_packet_alloc() else {
            throw FFmpegError(call: "av_packet_alloc", message: "out of memory")
        }
        self.pointer = pointer
    }

    deinit {
        var pointer: UnsafeMutablePointer<AVPacket>? = pointer
        av_packet_free(&pointer)
    }
}

/// Owns an opened input `AVFormatContext` (avformat_open_input / avformat_close_input).
final class FormatInput {
    let pointer: UnsafeMutablePointer<AVFormatContext>

    init(path: String) throws {
        var pointer: UnsafeMutablePointer<AVFormatContext>?
        try FFmpegError.check(avformat_open_input(&pointer, path, nil, nil), "avformat_open_input(\(path))")
        guard let pointer else {
            throw FFmpegError(call: "avformat_open_input(\(path))", message: "no context")
        }
        self.pointer = pointer
    }

    /// Opens `url` with the demuxer or libavdevice input `format` (such as "alsa") and its
    /// `options` (such as sample_rate); `what` names the call in errors.
    init(url: String, format: UnsafePointer<AVInputFormat>, options: [(String, String)], what: String) throws {
        var dictionary: OpaquePointer?
        defer { av_dict_free(&dictionary) }
        for (key, value) in options {
            try FFmpegError.check(av_dict_set(&dictionary, key, value, 0), "av_dict_set(\(key))")
        }
        var pointer: UnsafeMutablePointer<AVFormatContext>?
        try FFmpegError.check(avformat_open_input(&pointer, url, format, &dictionary), what)
        guard let pointer else { throw FFmpegError(call: what, message: "no context") }
        self.pointer = pointer
    }

    deinit {
        var pointer: UnsafeMutablePointer<AVFormatContext>? = pointer
        avformat_close_input(&pointer)
    }
}

/// Owns a `SwrContext` (swr_alloc / swr_free).
final class ResampleContext {
    let pointer: OpaquePointer

    init() throws {
        guard let pointer = swr_alloc() else { throw FFmpegError(call: "swr_alloc", message: "out of memory") }
        self.pointer = pointer
    }

    deinit {
        var pointer: OpaquePointer? = pointer
        swr_free(&pointer)
    }
}
