import CFFmpeg
import LiveCore

/// Reads sound as LiveLine frames at one rate and channel count: the audio track of a
/// media file (anything libavformat opens), or a capture device through libavdevice
/// (ALSA, PulseAudio). Decoded with the decoder libavformat names (AAC, MP3, Opus, or
/// the PCM a device delivers) and converted by `Resampler`.
///
/// Frames come in whatever size the decoder gives (1024 samples for AAC, a device
/// period for ALSA), with pts in µs from the track's start as the input stamps them.
/// Reading a device blocks until the device has a period ready. Confined to one thread
/// at a time (the audio capture thread).
public final class MediaAudioReader {
    /// A sound device libavdevice can capture from.
    public enum Device: Equatable, Sendable, CustomStringConvertible {
        /// An ALSA PCM name, such as `default`, `hw:0` or `plughw:1,0`.
        case alsa(String)
        /// A PulseAudio source name, or `default`.
        case pulse(String)

        var inputFormat: String {
            switch self {
            case .alsa: "alsa"
            case .pulse: "pulse"
            }
        }

        var url: String {
            switch self {
            case .alsa(let name), .pulse(let name): name
            }
        }

        public var description: String {
            switch self {
            case .alsa(let name): "ALSA device '\(name)'"
            case .pulse(let name): "PulseAudio source '\(name)'"
            }
        }

        /// What to check when the device does not open.
        var hint: String {
            switch self {
            case .alsa: "is the name right? `arecord -L` lists the ALSA capture devices"
            case .pulse: "is a PulseAudio or PipeWire-Pulse server running for this user? `pactl list sources short` lists the sources"
            }
        }
    }

    /// The file's path or the device's description.
    public let name: String
    /// Samples per second of every frame delivered.
    public let sampleRate: Int
    /// Channels of every frame delivered (1 or 2).
    public let channelCount: Int
    /// The track's own rate and channel count, before conversion.
    public let sourceSampleRate: Int
    public let sourceChannelCount: Int
    /// Whether the input also has a video track (a file's pictures, read by `MediaFileReader`).
    public let hasVideo: Bool
    /// The input's duration in µs (its longest track), when it declares one.
    public let durationMicros: Int64?

    private let reopen: () throws -> StreamDecoder
    private var decoder: StreamDecoder
    private var resampler: Resampler
    private var flushed = false
    /// The track's declared length in output samples (files; nil for devices) and what
    /// this pass has delivered: AAC decodes whole 1024-sample frames, and the padding
    /// after the declared end would put a gap in every loop.
    private let trackSamples: Int64?
    private var deliveredSamples: Int64 = 0

    /// Opens the audio track of the file at `path`; throws naming the file, and saying
    /// "… has no audio track" for a file without one.
    public convenience init(path: String, sampleRate: Int, channelCount: Int) throws {
        try self.init(name: path, sampleRate: sampleRate, channelCount: channelCount) {
            try StreamDecoder(path: path, media: AVMEDIA_TYPE_AUDIO)
        }
    }

    /// Opens a capture device, asking it for `sampleRate` and `channelCount` (what it
    /// delivers instead is converted). Throws naming the device and FFmpeg's reason.
    public convenience init(device: Device, sampleRate: Int, channelCount: Int) throws {
        try self.init(name: device.description, sampleRate: sampleRate, channelCount: channelCount) {
            try Self.open(device, sampleRate: sampleRate, channelCount: channelCount)
        }
    }

    private init(name: String, sampleRate: Int, channelCount: Int, open: @escaping () throws -> StreamDecoder) throws {
        self.name = name
        resampler = try Resampler(sampleRate: sampleRate, channelCount: channelCount)
        decoder = try open()
        reopen = open
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        let parameters = decoder.stream.pointee.codecpar.pointee
        sourceSampleRate = Int(parameters.sample_rate)
        sourceChannelCount = Int(parameters.ch_layout.nb_channels)
        hasVideo = decoder.has(AVMEDIA_TYPE_VIDEO)
        durationMicros = decoder.durationMicros
        let timeBase = decoder.stream.pointee.time_base
        trackSamples = decoder.declaredStreamDuration.map {
            av_rescale_q($0, timeBase, AVRational(num: 1, den: Int32(sampleRate)))
        }
    }

    /// The next block of converted samples; nil once the input has ended and what the
    /// resampler held has been delivered.
    public func nextFrame() throws -> AudioFrame? {
        while !flushed {
            let converted: AudioFrame?
            if let decoded = try decoder.nextFrame() {
                let stream = decoder.stream.pointee
                let start = stream.start_time == ll_av_nopts_value() ? 0 : stream.start_time
                converted = try resampler.convert(avFrame: decoded, timeBase: stream.time_base, startTime: start)
            } else {
                flushed = true
                converted = try resampler.flush()
            }
            if let frame = converted.flatMap(trimmed) { return frame }
        }
        return nil
    }

    /// `frame` cut at the track's declared end; nil past it.
    private func trimmed(_ frame: AudioFrame) -> AudioFrame? {
        let count = Int64(frame.sampleCount)
        defer { deliveredSamples += count }
        guard let limit = trackSamples, deliveredSamples + count > limit else { return frame }
        let kept = Int(max(0, limit - deliveredSamples))
        guard kept > 0 else { return nil }
        let samples = (0..<frame.channelCount).flatMap { frame.channel($0).prefix(kept) }
        return AudioFrame(sampleRate: frame.sampleRate, channelCount: frame.channelCount, samples: samples, pts: frame.pts)
    }

    /// Goes back to the start of the track (for looping) by opening the input again:
    /// after a seek the MP4 demuxer no longer skips the encoder's priming samples, which
    /// would put 20 ms of silence into every loop.
    public func rewind() throws {
        decoder = try reopen()
        resampler = try Resampler(sampleRate: sampleRate, channelCount: channelCount)
        flushed = false
        deliveredSamples = 0
    }

    /// Whether the file at `path` opens and has an audio track (false for a picture-only
    /// file, or one that cannot be read).
    public static func hasAudioTrack(path: String) -> Bool {
        FFmpegLog.applyDefault()
        guard let input = try? FormatInput(path: path), avformat_find_stream_info(input.pointer, nil) >= 0 else { return false }
        return av_find_best_stream(input.pointer, AVMEDIA_TYPE_AUDIO, -1, -1, nil, 0) >= 0
    }

    private static func open(_ device: Device, sampleRate: Int, channelCount: Int) throws -> StreamDecoder {
        let input = try FormatInput.device(format: device.inputFormat, url: device.url,
                                           options: [("sample_rate", String(sampleRate)), ("channels", String(channelCount))],
                                           device: device.description, hint: device.hint)
        return try StreamDecoder(input: input, media: AVMEDIA_TYPE_AUDIO, name: device.description, probe: false)
    }
}
