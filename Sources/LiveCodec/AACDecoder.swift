import CFFmpeg
import LiveCore

/// AAC through FFmpeg's decoder: raw AAC frames (as FLV and MP4 carry them) in, planar
/// float PCM out, configured by the stream's AudioSpecificConfig. Not thread-safe: one
/// thread decodes.
public final class AACDecoder {
    /// Samples per second of what comes out.
    public var sampleRate: Int { Int(codecContext.pointer.pointee.sample_rate) }
    /// Channels of what comes out.
    public var channelCount: Int { Int(codecContext.pointer.pointee.ch_layout.nb_channels) }

    private let codecContext: CodecContext
    private let codecFrame: CodecFrame
    private let codecPacket: CodecPacket

    /// A decoder for the stream `audioSpecificConfig` describes (the FLV AAC sequence
    /// header's payload, or an encoder's `streamInfo`).
    public init(audioSpecificConfig: [UInt8]) throws {
        guard !audioSpecificConfig.isEmpty, audioSpecificConfig.count <= 64 else {
            throw FFmpegError(call: "AAC decoder", message: "an AudioSpecificConfig of \(audioSpecificConfig.count) bytes")
        }
        FFmpegLog.applyDefault()
        guard let codec = avcodec_find_decoder(AV_CODEC_ID_AAC) else {
            throw FFmpegError(call: "avcodec_find_decoder(aac)", message: "FFmpeg's AAC decoder is not available")
        }
        codecContext = try CodecContext(codec: codec, for: "aac decoder")
        codecFrame = try CodecFrame()
        codecPacket = try CodecPacket()
        let context = codecContext.pointer
        let size = audioSpecificConfig.count
        guard let extradata = av_mallocz(size + Int(AV_INPUT_BUFFER_PADDING_SIZE))?.assumingMemoryBound(to: UInt8.self) else {
            throw FFmpegError(call: "av_mallocz", message: "out of memory")
        }
        extradata.update(from: audioSpecificConfig, count: size)
        context.pointee.extradata = extradata
        context.pointee.extradata_size = Int32(size)
        context.pointee.request_sample_fmt = AV_SAMPLE_FMT_FLTP
        try FFmpegError.check(avcodec_open2(context, codec, nil), "avcodec_open2(aac decoder)")
    }

    /// Decodes one raw AAC frame whose first sample is at `pts`.
    public func decode(_ data: [UInt8], pts: MediaTime) throws -> [AudioFrame] {
        guard !data.isEmpty else { return [] }
        let packet = codecPacket.pointer
        try FFmpegError.check(av_new_packet(packet, Int32(data.count)), "av_new_packet(aac)")
        defer { av_packet_unref(packet) }
        data.withUnsafeBufferPointer { packet.pointee.data.update(from: $0.baseAddress!, count: data.count) }
        packet.pointee.pts = pts.micros
        try FFmpegError.check(avcodec_send_packet(codecContext.pointer, packet), "avcodec_send_packet(aac)")
        return try receive()
    }

    private func receive() throws -> [AudioFrame] {
        var frames: [AudioFrame] = []
        let decoded = codecFrame.pointer
        while true {
            let result = avcodec_receive_frame(codecContext.pointer, decoded)
            if result == FFmpegError.again || result == FFmpegError.eof { break }
            try FFmpegError.check(result, "avcodec_receive_frame(aac)")
            defer { av_frame_unref(decoded) }
            frames.append(try frame(from: decoded))
        }
        return frames
    }

    private func frame(from decoded: UnsafeMutablePointer<AVFrame>) throws -> AudioFrame {
        let count = Int(decoded.pointee.nb_samples)
        let channels = Int(decoded.pointee.ch_layout.nb_channels)
        guard (1...2).contains(channels), decoded.pointee.format == AV_SAMPLE_FMT_FLTP.rawValue else {
            throw FFmpegError(call: "AAC decoder", message: "\(channels) channels of sample format \(decoded.pointee.format); mono or stereo planar float expected")
        }
        var samples = [Float](repeating: 0, count: count * channels)
        samples.withUnsafeMutableBufferPointer { target in
            for channel in 0..<channels {
                guard let plane = decoded.pointee.extended_data[channel] else { continue }
                plane.withMemoryRebound(to: Float.self, capacity: count) { source in
                    (target.baseAddress! + channel * count).update(from: source, count: count)
                }
            }
        }
        let pts = decoded.pointee.pts == ll_av_nopts_value() ? MediaTime.zero : MediaTime(micros: decoded.pointee.pts)
        return AudioFrame(sampleRate: Int(decoded.pointee.sample_rate), channelCount: channels, samples: samples, pts: pts)
    }
}
