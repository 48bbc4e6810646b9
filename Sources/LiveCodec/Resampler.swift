import CFFmpeg
import LiveCore

/// Converts sound of any rate, channel layout (mono, stereo, 5.1, …) and sample format
/// (s16, s32, float, double, packed or planar) into LiveLine's `AudioFrame` (planar
/// float) at one rate and channel count, through libswresample.
///
/// Configured from the first input and again whenever the input's format changes (a new
/// stream: the few samples the filter held from the old format are dropped). Mono becomes stereo by copying the channel to both
/// sides at its own level; stereo becomes mono as the average of the two; other layouts
/// use libswresample's standard downmix.
///
/// Timing: output sample k of a call starts where libswresample says, `swr_next_pts` on
/// the input's pts, which subtracts the samples the filter still holds, so the output is
/// stamped with the input time it actually carries and consecutive outputs are
/// contiguous. An input without a pts continues the previous one.
///
/// Pure (no clock, no thread); not thread-safe: one thread converts.
public final class Resampler {
    /// A packed (interleaved) or planar PCM sample format.
    public enum SampleFormat: Sendable, CaseIterable {
        case u8, s16, s32, float, double
        case u8Planar, s16Planar, s32Planar, floatPlanar, doublePlanar

        var av: AVSampleFormat {
            switch self {
            case .u8: AV_SAMPLE_FMT_U8
            case .s16: AV_SAMPLE_FMT_S16
            case .s32: AV_SAMPLE_FMT_S32
            case .float: AV_SAMPLE_FMT_FLT
            case .double: AV_SAMPLE_FMT_DBL
            case .u8Planar: AV_SAMPLE_FMT_U8P
            case .s16Planar: AV_SAMPLE_FMT_S16P
            case .s32Planar: AV_SAMPLE_FMT_S32P
            case .floatPlanar: AV_SAMPLE_FMT_FLTP
            case .doublePlanar: AV_SAMPLE_FMT_DBLP
            }
        }

        /// Bytes of one sample of one channel.
        public var bytesPerSample: Int { Int(av_get_bytes_per_sample(av)) }
        /// Whether each channel has its own plane.
        public var isPlanar: Bool { av_sample_fmt_is_planar(av) != 0 }
    }

    /// What a block of PCM bytes holds.
    public struct InputFormat: Equatable, Sendable {
        public var sampleRate: Int
        /// 1…8, in FFmpeg's default layout for that count (1 mono, 2 stereo, 6 is 5.1).
        public var channelCount: Int
        public var sampleFormat: SampleFormat

        public init(sampleRate: Int, channelCount: Int, sampleFormat: SampleFormat) {
            self.sampleRate = sampleRate
            self.channelCount = channelCount
            self.sampleFormat = sampleFormat
        }
    }

    /// A conversion that cannot be set up.
    public enum ResamplerError: Error, CustomStringConvertible, Equatable, Sendable {
        case unsupportedOutput(sampleRate: Int, channelCount: Int)
        case unsupportedInput(String)

        public var description: String {
            switch self {
            case .unsupportedOutput(let rate, let channels):
                "cannot resample to \(rate) Hz with \(channels) channels (8000–192000 Hz, mono or stereo)"
            case .unsupportedInput(let what): "cannot resample \(what)"
            }
        }
    }

    /// Samples per second of every output frame.
    public let sampleRate: Int
    /// 1 or 2.
    public let channelCount: Int

    private var context: ResampleContext
    private var outputLayout = AVChannelLayout()
    private var inputLayout = AVChannelLayout()
    private var inputRate = 0
    private var inputFormat = AV_SAMPLE_FMT_NONE
    private var configured = false
    /// Where the next input sample would start and the next output sample does start, in
    /// libswresample's units of 1 / (input rate × output rate) s.
    private var nextInput: Int64?
    private var nextOutput: Int64 = 0

    /// A resampler producing `sampleRate` Hz (8000–192000) and 1 or 2 channels.
    public init(sampleRate: Int, channelCount: Int) throws {
        guard (8000...192_000).contains(sampleRate), (1...2).contains(channelCount) else {
            throw ResamplerError.unsupportedOutput(sampleRate: sampleRate, channelCount: channelCount)
        }
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        context = try ResampleContext()
        av_channel_layout_default(&outputLayout, Int32(channelCount))
    }

    deinit {
        av_channel_layout_uninit(&outputLayout)
        av_channel_layout_uninit(&inputLayout)
    }

    /// Converts `sampleCount` samples per channel of PCM bytes: one buffer for a packed
    /// format, one per channel for a planar one. `pts`: the time of the first sample (nil:
    /// right after the previous input). Nil when the filter keeps everything for now.
    public func convert(planes: [[UInt8]], format: InputFormat, sampleCount: Int, pts: MediaTime?) throws -> AudioFrame? {
        guard (1...8).contains(format.channelCount), format.sampleRate > 0, sampleCount >= 0 else {
            throw ResamplerError.unsupportedInput("\(sampleCount) samples of \(format.channelCount) channels at \(format.sampleRate) Hz")
        }
        let planeCount = format.sampleFormat.isPlanar ? format.channelCount : 1
        let planeBytes = sampleCount * format.sampleFormat.bytesPerSample * (format.sampleFormat.isPlanar ? 1 : format.channelCount)
        guard planes.count == planeCount, planes.allSatisfy({ $0.count >= planeBytes }) else {
            throw ResamplerError.unsupportedInput("\(planes.count) planes of \(planes.map(\.count)) bytes as \(sampleCount) samples of \(format)")
        }
        var layout = AVChannelLayout()
        av_channel_layout_default(&layout, Int32(format.channelCount))
        defer { av_channel_layout_uninit(&layout) }
        try configure(rate: format.sampleRate, layout: &layout, format: format.sampleFormat.av)
        return try withPointers(planes) { pointers in
            try run(input: pointers, count: sampleCount, pts: pts)
        }
    }

    /// Converts a LiveLine frame (the stream form, for a co-host's 44.1 kHz or mono voice
    /// in a 48 kHz stereo mix): contiguous inputs give contiguous outputs.
    public func convert(_ frame: AudioFrame) throws -> AudioFrame? {
        let count = frame.sampleCount
        var layout = AVChannelLayout()
        av_channel_layout_default(&layout, Int32(frame.channelCount))
        defer { av_channel_layout_uninit(&layout) }
        try configure(rate: frame.sampleRate, layout: &layout, format: AV_SAMPLE_FMT_FLTP)
        // The frame's own storage, read in place: one plane per channel, `count` apart.
        return try frame.samples.withUnsafeBytes { raw in
            let base = raw.baseAddress?.assumingMemoryBound(to: UInt8.self)
            var planes: [UnsafePointer<UInt8>?] = (0..<frame.channelCount).map { channel in
                base.map { $0 + channel * count * MemoryLayout<Float>.size }
            }
            return try planes.withUnsafeMutableBufferPointer { try run(input: $0.baseAddress!, count: count, pts: frame.pts) }
        }
    }

    /// `frame` at another rate and channel count in one go (what the filter holds is
    /// flushed into the result); the frame itself when nothing needs to change.
    public static func converting(_ frame: AudioFrame, toSampleRate sampleRate: Int, channelCount: Int) throws -> AudioFrame {
        if frame.sampleRate == sampleRate && frame.channelCount == channelCount { return frame }
        let resampler = try Resampler(sampleRate: sampleRate, channelCount: channelCount)
        let head = try resampler.convert(frame)
        let tail = try resampler.flush()
        return join(head, tail, sampleRate: sampleRate, channelCount: channelCount, pts: frame.pts)
    }

    /// The samples the filter still holds, at the end of a stream; nil when none.
    public func flush() throws -> AudioFrame? {
        guard configured else { return nil }
        let frame = try run(input: nil, count: 0, pts: nil)
        return frame
    }

    /// Converts a decoded FFmpeg frame; its pts (in `timeBase`) becomes the input time.
    func convert(avFrame: UnsafePointer<AVFrame>, timeBase: AVRational, startTime: Int64) throws -> AudioFrame? {
        let decoded = avFrame.pointee
        var layout = AVChannelLayout()
        defer { av_channel_layout_uninit(&layout) }
        // Devices and raw PCM often name only a channel count: give it the usual layout.
        if decoded.ch_layout.order == AV_CHANNEL_ORDER_UNSPEC || decoded.ch_layout.nb_channels == 0 {
            let channels = decoded.ch_layout.nb_channels
            guard channels > 0 else { throw ResamplerError.unsupportedInput("a frame without channels") }
            av_channel_layout_default(&layout, channels)
        } else {
            var source = decoded.ch_layout
            try FFmpegError.check(av_channel_layout_copy(&layout, &source), "av_channel_layout_copy")
        }
        try configure(rate: Int(decoded.sample_rate), layout: &layout, format: AVSampleFormat(decoded.format))
        var pts = decoded.best_effort_timestamp
        if pts == ll_av_nopts_value() { pts = decoded.pts }
        let time = pts == ll_av_nopts_value() ? nil
            : MediaTime(micros: av_rescale_q(pts - startTime, timeBase, AVRational(num: 1, den: 1_000_000)))
        let planes = UnsafeMutableRawPointer(decoded.extended_data!).assumingMemoryBound(to: UnsafePointer<UInt8>?.self)
        return try run(input: planes, count: Int(decoded.nb_samples), pts: time)
    }

    // MARK: - Inside

    /// (Re)configures libswresample for this input, flushing what an earlier format left behind.
    private func configure(rate: Int, layout: inout AVChannelLayout, format: AVSampleFormat) throws {
        if configured && rate == inputRate && format == inputFormat && av_channel_layout_compare(&layout, &inputLayout) == 0 {
            return
        }
        guard rate > 0, layout.nb_channels > 0, format != AV_SAMPLE_FMT_NONE else {
            throw ResamplerError.unsupportedInput("\(layout.nb_channels) channels of sample format \(format.rawValue) at \(rate) Hz")
        }
        // A fresh context: a custom matrix or the old filter's state must not carry over.
        if configured { context = try ResampleContext() }
        var swr: OpaquePointer? = context.pointer
        try FFmpegError.check(swr_alloc_set_opts2(&swr, &outputLayout, AV_SAMPLE_FMT_FLTP, Int32(sampleRate),
                                                  &layout, format, Int32(rate), 0, nil), "swr_alloc_set_opts2")
        let inChannels = Int(layout.nb_channels)
        // libswresample turns mono into stereo at -3 dB a side and stereo into mono at
        // +3 dB: LiveLine keeps the level (copy to both sides; average of the two).
        var matrix: [Double]? = nil
        if inChannels == 1 && channelCount == 2 { matrix = [1, 1] }
        if inChannels == 2 && channelCount == 1 { matrix = [0.5, 0.5] }
        if let matrix {
            try FFmpegError.check(swr_set_matrix(context.pointer, matrix, Int32(inChannels)), "swr_set_matrix")
        }
        try FFmpegError.check(swr_init(context.pointer), "swr_init(\(rate) Hz, \(inChannels) channels → \(sampleRate) Hz, \(channelCount))")
        av_channel_layout_uninit(&inputLayout)
        try FFmpegError.check(av_channel_layout_copy(&inputLayout, &layout), "av_channel_layout_copy")
        inputRate = rate
        inputFormat = format
        configured = true
        nextInput = nil
    }

    /// One swr_convert call (input nil: flush) and the frame it yields.
    private func run(input: UnsafeMutablePointer<UnsafePointer<UInt8>?>?, count: Int, pts: MediaTime?) throws -> AudioFrame? {
        let swr = context.pointer
        let units = Int64(inputRate) * Int64(sampleRate)
        if input != nil {
            // The time of this input in libswresample's units; swr_next_pts takes off the delay.
            let inputTime = pts.map { av_rescale($0.micros, units, 1_000_000) } ?? nextInput ?? 0
            nextOutput = swr_next_pts(swr, inputTime)
            nextInput = inputTime + Int64(count) * Int64(sampleRate)
        }
        let capacity = Int(swr_get_out_samples(swr, Int32(count))) + 16
        guard capacity > 0 else { return nil }
        var samples = [Float](repeating: 0, count: capacity * channelCount)
        let produced = try samples.withUnsafeMutableBytes { raw -> Int32 in
            let base = raw.baseAddress!.assumingMemoryBound(to: UInt8.self)
            var planes: [UnsafeMutablePointer<UInt8>?] = (0..<channelCount).map { base + $0 * capacity * 4 }
            return try planes.withUnsafeMutableBufferPointer { out in
                try FFmpegError.check(swr_convert(swr, out.baseAddress, Int32(capacity), input, Int32(count)), "swr_convert")
            }
        }
        let start = nextOutput
        nextOutput += Int64(produced) * Int64(inputRate)
        guard produced > 0 else { return nil }
        let n = Int(produced)
        if n < capacity {
            // Planes were laid out `capacity` apart: close the gaps.
            for channel in 1..<max(channelCount, 1) {
                samples.withUnsafeMutableBufferPointer { buffer in
                    let base = buffer.baseAddress!
                    (base + channel * n).update(from: base + channel * capacity, count: n)
                }
            }
            samples.removeSubrange((n * channelCount)...)
        }
        return AudioFrame(sampleRate: sampleRate, channelCount: channelCount, samples: samples,
                          pts: MediaTime(micros: av_rescale(start, 1_000_000, units)))
    }

    private func withPointers<Result>(_ planes: [[UInt8]], _ body: (UnsafeMutablePointer<UnsafePointer<UInt8>?>) throws -> Result) throws -> Result {
        // Nested closures keep every plane's storage pinned while libswresample reads it.
        func pin(_ index: Int, _ pointers: [UnsafePointer<UInt8>?]) throws -> Result {
            if index == planes.count {
                var pointers = pointers
                return try pointers.withUnsafeMutableBufferPointer { try body($0.baseAddress!) }
            }
            return try planes[index].withUnsafeBufferPointer { try pin(index + 1, pointers + [$0.baseAddress]) }
        }
        return try pin(0, [])
    }

    private static func join(_ head: AudioFrame?, _ tail: AudioFrame?, sampleRate: Int, channelCount: Int, pts: MediaTime) -> AudioFrame {
        let parts = [head, tail].compactMap { $0 }
        let total = parts.reduce(0) { $0 + $1.sampleCount }
        var samples: [Float] = []
        samples.reserveCapacity(total * channelCount)
        for channel in 0..<channelCount {
            for part in parts { samples += part.channel(channel) }
        }
        return AudioFrame(sampleRate: sampleRate, channelCount: channelCount, samples: samples, pts: parts.first?.pts ?? pts)
    }
}
