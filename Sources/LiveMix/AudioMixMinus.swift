import LiveCore

/// The sound of a co-host line: the program (everyone's voice, what viewers hear) and,
/// for each voice, the mix-minus (everyone but that voice: what that participant hears,
/// so nobody hears their own voice come back late).
///
/// Voices are `[hoster, cohost1, …, cohostN]`, aligned blocks of the mix's format (one
/// tick's block from each `AudioVoiceBuffer`). The sum is made once and each mix-minus
/// is that sum less its own voice, so N+1 outputs cost N+1 subtractions, not N+1 sums.
/// Each output then goes through its own limiter (`AudioMixer.limit`), after the
/// subtraction: the mix-minus is limited for what it holds, and one output's loudness
/// never changes another's gain. No output passes `ceiling`; silence in gives silence
/// out.
///
/// Limiter state is kept by position: when the number of voices changes, outputs keep
/// their limiters by index (a co-host who moves up a place takes over its new place's
/// gain, which settles within a few blocks). Pure value; the thread that mixes owns it.
public struct AudioMixMinus: Sendable {
    /// Why a set of voices cannot be mixed.
    public enum Error: Swift.Error, CustomStringConvertible, Equatable, Sendable {
        case noVoices
        /// Voice `index` differs from the first voice in rate, channels or block length.
        case misaligned(index: Int)

        public var description: String {
            switch self {
            case .noVoices: "no voices to mix"
            case .misaligned(let index):
                "voice \(index) does not match the first voice's sample rate, channels and block length"
            }
        }
    }

    /// Everything one block of voices makes.
    public struct Output: Sendable, Equatable {
        /// Every voice, limited: the viewers' stream.
        public var program: AudioFrame
        /// `minus[i]`: every voice but voice `i`, limited (`minus[0]` is what the hoster hears).
        public var minus: [AudioFrame]
    }

    public let ceiling: Float
    public let release: Float
    /// The program's limiter.
    public private(set) var program: AudioMixer
    /// One limiter per mix-minus output, by voice position.
    public private(set) var minus: [AudioMixer] = []
    /// The unlimited sum of the last block (kept for its capacity).
    private var sum: [Float] = []

    /// `ceiling` and `release` as for `AudioMixer`, for every output.
    public init(ceiling: Float = AudioMixer.defaultCeiling, release: Float = 0.2) {
        self.ceiling = ceiling
        self.release = release
        program = AudioMixer(ceiling: ceiling, release: release)
    }

    /// Mixes one block of each voice (see the type's comment); the outputs are timed as
    /// the first voice.
    public mutating func mix(_ voices: [AudioFrame]) throws -> Output {
        let count = try sumOf(voices)
        let first = voices[0]
        while minus.count < voices.count { minus.append(AudioMixer(ceiling: ceiling, release: release)) }
        if minus.count > voices.count { minus.removeLast(minus.count - voices.count) }
        var programSamples = sum
        program.limit(&programSamples, channelCount: first.channelCount)
        var outputs: [AudioFrame] = []
        outputs.reserveCapacity(voices.count)
        for index in voices.indices {
            var samples = [Float](unsafeUninitializedCapacity: count) { buffer, initialized in
                sum.withUnsafeBufferPointer { total in
                    voices[index].samples.withUnsafeBufferPointer { own in
                        for k in 0..<count { buffer[k] = total[k] - own[k] }
                    }
                }
                initialized = count
            }
            minus[index].limit(&samples, channelCount: first.channelCount)
            outputs.append(AudioFrame(sampleRate: first.sampleRate, channelCount: first.channelCount, samples: samples, pts: first.pts))
        }
        return Output(program: AudioFrame(sampleRate: first.sampleRate, channelCount: first.channelCount, samples: programSamples,
                                          pts: first.pts),
                      minus: outputs)
    }

    /// Checks that `voices` are aligned and adds them into `sum`; returns its sample count.
    private mutating func sumOf(_ voices: [AudioFrame]) throws -> Int {
        guard let first = voices.first else { throw Error.noVoices }
        for (index, voice) in voices.enumerated()
            where voice.sampleRate != first.sampleRate || voice.channelCount != first.channelCount
            || voice.samples.count != first.samples.count
        {
            throw Error.misaligned(index: index)
        }
        let count = first.samples.count
        if sum.count == count {
            sum.withUnsafeMutableBufferPointer { $0.update(repeating: 0) }
        } else {
            sum = [Float](repeating: 0, count: count)
        }
        sum.withUnsafeMutableBufferPointer { total in
            for voice in voices {
                voice.samples.withUnsafeBufferPointer { samples in
                    for k in 0..<count { total[k] += samples[k] }
                }
            }
        }
        return count
    }
}
