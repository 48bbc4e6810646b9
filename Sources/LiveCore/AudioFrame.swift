/// A block of PCM audio: 32-bit float samples in −1…1, planar (all of channel 0, then
/// all of channel 1), the one audio format inside every pipeline, as `VideoFrame` is for
/// pictures. libswresample converts at the edges; FFmpeg's AAC encoder takes planar
/// float as it is.
public struct AudioFrame: Sendable, Equatable {
    /// Samples per second of each channel (48000 or 44100).
    public let sampleRate: Int
    /// 1 (mono) or 2 (stereo).
    public let channelCount: Int
    /// `channelCount * sampleCount` samples, channel after channel.
    public var samples: [Float]
    /// Presentation time of the first sample, in the pipeline's clock.
    public var pts: MediaTime

    /// A frame of `sampleCount` samples per channel, all silent.
    public init(sampleRate: Int, channelCount: Int, sampleCount: Int, pts: MediaTime = .zero) {
        precondition(sampleRate > 0 && (1...2).contains(channelCount) && sampleCount >= 0, "invalid audio frame shape")
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        samples = [Float](repeating: 0, count: channelCount * sampleCount)
        self.pts = pts
    }

    /// A frame holding `samples` (planar, a whole number of samples per channel).
    public init(sampleRate: Int, channelCount: Int, samples: [Float], pts: MediaTime = .zero) {
        precondition(sampleRate > 0 && (1...2).contains(channelCount) && samples.count % channelCount == 0,
                     "invalid audio frame shape")
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        self.samples = samples
        self.pts = pts
    }

    /// Samples per channel.
    public var sampleCount: Int { samples.count / channelCount }

    /// How long the frame lasts.
    public var duration: MediaTime { MediaTime(micros: Int64(sampleCount) * 1_000_000 / Int64(sampleRate)) }

    /// The samples of `channel`.
    public func channel(_ channel: Int) -> ArraySlice<Float> {
        samples[channel * sampleCount..<(channel + 1) * sampleCount]
    }
}
