import CFFmpeg
import LiveCore

/// AAC-LC through FFmpeg's built-in `aac` encoder: planar float PCM in (any block size),
/// raw AAC frames of 1024 samples out, with the AudioSpecificConfig as `streamInfo`.
///
/// Timing: the first sample given is at the first frame's `pts`; later frames continue
/// by sample count, so gaps in the input's timestamps do not reach the encoder (what the
/// caller feeds must be continuous: a muted source feeds silence, see DESIGN.md).
/// Not thread-safe: one thread encodes.
public final class AACEncoder: @unchecked Sendable {
    // @unchecked: the codec state is used by one thread at a time (the audio encode thread).
    public enum EncoderError: Error, CustomStringConvertible, Equatable, Sendable {
        case invalidConfig(String)
        case frameShape(sampleRate: Int, channelCount: Int)

        public var description: String {
            switch self {
            case .invalidConfig(let why): "invalid AAC encoder configuration: \(why)"
            case .frameShape(let rate, let channels):
                "audio of \(rate) Hz with \(channels) channel(s) given to an encoder configured otherwise"
            }
        }
    }

    public let sampleRate: Int
    public let channelCount: Int
    public let bitrateKbps: Int
    /// Samples per channel in one AAC frame.
    public let frameSize: Int

    private let codecContext: CodecContext
    private let codecFrame: CodecFrame
    private let codecPacket: CodecPacket
    private var context: UnsafeMutablePointer<AVCodecContext> { codecContext.pointer }
    private var audioSpecificConfig: [UInt8] = []
    /// Input waiting for a whole frame, per channel.
    private var pending: [[Float]]
    /// Sample index (at `sampleRate`) of the next frame's first sample.
    private var nextSample: Int64?
    private var originMicros: Int64 = 0

    public init(sampleRate: Int = 48000, channelCount: Int = 2, bitrateKbps: Int = 96) throws {
        guard [44100, 48000].contains(sampleRate) else {
            throw EncoderError.invalidConfig("sample rate \(sampleRate) is not 44100 or 48000")
        }
        guard (1...2).contains(channelCount) else {
            throw EncoderError.invalidConfig("\(channelCount) channels; 1 or 2 are supported")
        }
        guard (8...512).contains(bitrateKbps) else {
            throw EncoderError.invalidConfig("bitrate \(bitrateKbps) kbit/s is outside 8…512")
        }
        FFmpegLog.applyDefault()
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        self.bitrateKbps = bitrateKbps
        guard let codec = avcodec_find_encoder(AV_CODEC_ID_AAC) else {
            throw FFmpegError(call: "avcodec_find_encoder(aac)", message: "FFmpeg's AAC encoder is not available")
        }
        codecContext = try CodecContext(codec: codec, for: "aac")
        codecFrame = try CodecFrame()
        codecPacket = try CodecPacket()
        let context = codecContext.pointer
        context.pointee.sample_rate = Int32(sampleRate)
        context.pointee.sample_fmt = AV_SAMPLE_FMT_FLTP
        av_channel_layout_default(&context.pointee.ch_layout, Int32(channelCount))
        context.pointee.bit_rate = Int64(bitrateKbps) * 1000
        context.pointee.time_base = AVRational(num: 1, den: Int32(sampleRate))
        context.pointee.profile = FF_PROFILE_AAC_LOW
        // The AudioSpecificConfig in extradata, raw frames out (no ADTS headers).
        context.pointee.flags |= Int32(AV_CODEC_FLAG_GLOBAL_HEADER)
        try FFmpegError.check(avcodec_open2(context, codec, nil), "avcodec_open2(aac)")
        frameSize = Int(context.pointee.frame_size)
        if let data = context.pointee.extradata, context.pointee.extradata_size > 0 {
            audioSpecificConfig = Array(UnsafeBufferPointer(start: data, count: Int(context.pointee.extradata_size)))
        }
        pending = [[Float]](repeating: [], count: channelCount)
    }

    /// What a muxer or an FLV sequence header needs.
    public var streamInfo: AudioStreamInfo {
        AudioStreamInfo(sampleRate: sampleRate, channelCount: channelCount, bitrate: bitrateKbps * 1000,
                        audioSpecificConfig: audioSpecificConfig)
    }

    /// Adds `frame` and returns the AAC frames now complete (none until 1024 samples
    /// per channel have arrived; the encoder's own delay holds a frame or two more).
    public func encode(_ frame: AudioFrame) throws -> [EncodedAudioPacket] {
        guard frame.sampleRate == sampleRate, frame.channelCount == channelCount else {
            throw EncoderError.frameShape(sampleRate: frame.sampleRate, channelCount: frame.channelCount)
        }
        if nextSample == nil {
            originMicros = frame.pts.micros
            nextSample = 0
        }
        for channel in 0..<channelCount { pending[channel] += frame.channel(channel) }
        var packets: [EncodedAudioPacket] = []
        while pending[0].count >= frameSize {
            try send(count: frameSize)
            packets += try receive()
        }
        return packets
    }

    /// Encodes what is left (padded with silence to a whole frame) and drains the encoder.
    public func flush() throws -> [EncodedAudioPacket] {
        var packets: [EncodedAudioPacket] = []
        if let count = pending.first?.count, count > 0 {
            for channel in 0..<channelCount { pending[channel] += [Float](repeating: 0, count: frameSize - count) }
            try send(count: frameSize)
            packets += try receive()
        }
        let result = avcodec_send_frame(context, nil)
        if result < 0, result != FFmpegError.eof { throw FFmpegError(call: "avcodec_send_frame(aac, flush)", code: result) }
        packets += try receive()
        return packets
    }

    private func send(count: Int) throws {
        let avFrame = codecFrame.pointer
        av_frame_unref(avFrame)
        avFrame.pointee.nb_samples = Int32(count)
        avFrame.pointee.format = AV_SAMPLE_FMT_FLTP.rawValue
        avFrame.pointee.sample_rate = Int32(sampleRate)
        try FFmpegError.check(av_channel_layout_copy(&avFrame.pointee.ch_layout, &context.pointee.ch_layout),
                              "av_channel_layout_copy")
        try FFmpegError.check(av_frame_get_buffer(avFrame, 0), "av_frame_get_buffer(audio)")
        for channel in 0..<channelCount {
            guard let plane = avFrame.pointee.extended_data[channel] else { continue }
            plane.withMemoryRebound(to: Float.self, capacity: count) { target in
                pending[channel].withUnsafeBufferPointer { source in
                    target.update(from: source.baseAddress!, count: count)
                }
            }
            pending[channel].removeFirst(count)
        }
        let sample = nextSample ?? 0
        avFrame.pointee.pts = sample
        nextSample = sample + Int64(count)
        try FFmpegError.check(avcodec_send_frame(context, avFrame), "avcodec_send_frame(aac)")
    }

    private func receive() throws -> [EncodedAudioPacket] {
        var packets: [EncodedAudioPacket] = []
        let packet = codecPacket.pointer
        while true {
            let result = avcodec_receive_packet(context, packet)
            if result == FFmpegError.again || result == FFmpegError.eof { break }
            try FFmpegError.check(result, "avcodec_receive_packet(aac)")
            defer { av_packet_unref(packet) }
            let data = Array(UnsafeBufferPointer(start: packet.pointee.data, count: Int(packet.pointee.size)))
            let duration = packet.pointee.duration > 0 ? packet.pointee.duration : Int64(frameSize)
            packets.append(EncodedAudioPacket(data: data, pts: micros(packet.pointee.pts),
                                              duration: MediaTime(micros: duration * 1_000_000 / Int64(sampleRate))))
        }
        return packets
    }

    /// A sample index as a time on the caller's clock.
    private func micros(_ sample: Int64) -> MediaTime {
        MediaTime(micros: originMicros + sample * 1_000_000 / Int64(sampleRate))
    }
}
