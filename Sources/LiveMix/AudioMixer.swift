import LiveCore

/// Sums voices into one program (the hoster's mix of itself and its co-hosts, or a
/// co-host's mix-minus) without clipping: the voices are added sample by sample and a
/// peak limiter scales the sum so that no sample passes `ceiling`.
///
/// The limiter works per block: when the block's peak times the current gain would pass
/// the ceiling, the gain drops at once to exactly what fits (no sample of that block is
/// over); when the sum is quieter again, the gain returns towards 1 by `release` of the
/// way per block (about 60 ms from −6 dB to −1 dB with 10 ms blocks), never above what
/// fits the block, gliding across the block rather than stepping at its start (a step
/// is a click). Silence in gives silence out; a single voice under the ceiling passes
/// unchanged. Pure value: the caller keeps one per program.
///
/// The default ceiling, −1 dBFS (0.89), leaves the headroom lossy delivery asks for
/// (EBU R 128's −1 dBTP): AAC's decoder rebuilds a limited sum up to about a tenth
/// above the level it was given, and at 0.98 a listener's decoder would clip.
public struct AudioMixer: Sendable {
    /// The largest absolute sample value out.
    public let ceiling: Float
    /// The share of the way back to unity gain taken per block.
    public let release: Float
    /// The current gain (1: no limiting).
    public private(set) var gain: Float = 1

    /// −1 dBFS.
    public static let defaultCeiling: Float = 0.891

    public init(ceiling: Float = AudioMixer.defaultCeiling, release: Float = 0.2) {
        precondition(ceiling > 0 && ceiling <= 1 && release > 0 && release <= 1, "ceiling and release must be in 0…1")
        self.ceiling = ceiling
        self.release = release
    }

    /// The sum of `voices` (equal sample rates and channel counts; shorter voices count
    /// as silent past their end), limited; timed as the first voice.
    public mutating func mix(_ voices: [AudioFrame]) -> AudioFrame? {
        guard let first = voices.first else { return nil }
        precondition(voices.allSatisfy { $0.sampleRate == first.sampleRate && $0.channelCount == first.channelCount },
                     "voices to mix must share sample rate and channel count")
        let count = voices.map(\.sampleCount).max() ?? 0
        var sum = [Float](repeating: 0, count: count * first.channelCount)
        for voice in voices {
            for channel in 0..<first.channelCount {
                let source = voice.channel(channel)
                var index = channel * count
                for sample in source {
                    sum[index] += sample
                    index += 1
                }
            }
        }
        limit(&sum, channelCount: first.channelCount)
        return AudioFrame(sampleRate: first.sampleRate, channelCount: first.channelCount, samples: sum, pts: first.pts)
    }

    /// Scales `samples` in place so that none passes the ceiling (see the type's comment).
    /// `samples` are planar, `channelCount` channels one after the other: every channel
    /// takes the same gain at the same instant.
    public mutating func limit(_ samples: inout [Float], channelCount: Int) {
        var peak: Float = 0
        for sample in samples { peak = max(peak, abs(sample)) }
        let fits = peak > ceiling ? ceiling / peak : 1
        let start = gain
        gain = min(fits, gain + (1 - gain) * release)
        guard gain < 1 || start < 1 else { return }
        // Rising, the gain glides from where it was to where it goes, every step at most
        // `gain`, which fits; falling, it drops at the block's start. peak × (ceiling /
        // peak) may round one step above the ceiling: clamp that step.
        let ceiling = ceiling, end = gain, from = min(start, end)
        let perChannel = samples.count / max(1, channelCount)
        let step = perChannel == 0 ? 0 : (end - from) / Float(perChannel)
        for index in samples.indices {
            let gain = from + step * Float(index % perChannel + 1)
            samples[index] = min(ceiling, max(-ceiling, samples[index] * gain))
        }
    }
}
