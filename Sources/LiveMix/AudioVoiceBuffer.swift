import LiveCore

/// One remote voice on its way into a mix (a co-host's decoded audio, already resampled
/// to the mix's rate and channels): frames of any size arrive in bursts with the
/// network's jitter, and the mixer takes exactly one block per tick.
///
/// - Initial fill: nothing plays until `startSamples` are buffered (about 40 ms), so
///   a burst arriving a little late does not make the voice stutter. Until then, and
///   again after an underrun, `pop` gives silence while the buffer refills.
/// - Underrun: a `pop` that finds less than a block gives what there is followed by
///   silence, counts it (`underrunCount`, `silentSamples`) and waits for the fill again,
///   rather than stuttering block after block.
/// - Bounded depth: past `maxSamples` (about 200 ms) the oldest samples are dropped
///   and counted (`droppedSamples`), so a voice that arrived in a large burst, or whose
///   sender's clock runs fast, costs no more than that much delay.
///
/// Pure value, samples planar like `AudioFrame`: a ring of `maxSamples` per channel
/// allocated once. The thread that mixes owns it; pushing from another thread goes
/// through the caller's lock or queue.
public struct AudioVoiceBuffer: Sendable {
    /// Why a voice buffer cannot be made or fed.
    public enum Error: Swift.Error, CustomStringConvertible, Equatable, Sendable {
        /// A frame in a rate or channel count other than the mix's (it must be resampled first).
        case format(sampleRate: Int, channelCount: Int, expectedSampleRate: Int, expectedChannelCount: Int)
        /// The depths asked for do not make a buffer (why).
        case invalidDepth(String)

        public var description: String {
            switch self {
            case .format(let rate, let channels, let expectedRate, let expectedChannels):
                "audio of \(rate) Hz with \(channels) channel(s) given to a mix of \(expectedRate) Hz with \(expectedChannels) channel(s); resample it first"
            case .invalidDepth(let why): "invalid voice buffer depth: \(why)"
            }
        }
    }

    public let sampleRate: Int
    public let channelCount: Int
    /// The most samples per channel held; older ones are dropped beyond it.
    public let maxSamples: Int
    /// Samples per channel buffered before playing starts (and restarts after an underrun).
    public let startSamples: Int

    /// Samples per channel buffered now.
    public private(set) var depth = 0
    /// True once the initial fill was reached, until the next underrun.
    public private(set) var isPlaying = false
    /// Pops that found less than a block while playing.
    public private(set) var underrunCount = 0
    /// Samples per channel of silence given for want of audio, after playing first started
    /// (the initial fill is not counted; refills after an underrun are).
    public private(set) var silentSamples = 0
    /// Samples per channel dropped, oldest first, because the buffer was full.
    public private(set) var droppedSamples = 0

    /// The ring: channel `c` at `c * maxSamples`; its oldest sample at `head`.
    private var ring: [Float]
    private var head = 0
    private var hasPlayed = false

    /// A buffer for a mix of `sampleRate` Hz and `channelCount` channels holding at most
    /// `maxMilliseconds` of audio and starting to play at `startMilliseconds`.
    public init(sampleRate: Int = 48000, channelCount: Int = 2, maxMilliseconds: Int = 200, startMilliseconds: Int = 40) throws {
        guard sampleRate > 0, (1...2).contains(channelCount) else {
            throw Error.invalidDepth("\(sampleRate) Hz with \(channelCount) channel(s) is not an audio format")
        }
        guard (1...10_000).contains(maxMilliseconds) else {
            throw Error.invalidDepth("a depth of \(maxMilliseconds) ms is outside 1…10000 ms")
        }
        guard (0...maxMilliseconds).contains(startMilliseconds) else {
            throw Error.invalidDepth("a start fill of \(startMilliseconds) ms is outside 0…\(maxMilliseconds) ms (the depth)")
        }
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        maxSamples = max(1, sampleRate * maxMilliseconds / 1000)
        startSamples = sampleRate * startMilliseconds / 1000
        ring = [Float](repeating: 0, count: maxSamples * channelCount)
    }

    /// Adds `frame` behind what is buffered, dropping the oldest samples past the depth.
    /// Throws (and keeps nothing of it) when its format is not the mix's.
    public mutating func push(_ frame: AudioFrame) throws {
        guard frame.sampleRate == sampleRate, frame.channelCount == channelCount else {
            throw Error.format(sampleRate: frame.sampleRate, channelCount: frame.channelCount,
                               expectedSampleRate: sampleRate, expectedChannelCount: channelCount)
        }
        let count = frame.sampleCount
        guard count > 0 else { return }
        // Of a frame longer than the whole ring only its newest samples can stay.
        let skip = max(0, count - maxSamples)
        let keep = count - skip
        let overflow = max(0, depth + keep - maxSamples)
        if overflow > 0 {
            head = (head + overflow) % maxSamples
            depth -= overflow
        }
        droppedSamples += skip + overflow
        let tail = (head + depth) % maxSamples
        frame.samples.withUnsafeBufferPointer { source in
            ring.withUnsafeMutableBufferPointer { ring in
                for channel in 0..<channelCount {
                    let from = source.baseAddress! + channel * count + skip
                    let to = ring.baseAddress! + channel * maxSamples
                    let first = min(keep, maxSamples - tail)
                    (to + tail).update(from: from, count: first)
                    if keep > first { to.update(from: from + first, count: keep - first) }
                }
            }
        }
        depth += keep
        if !isPlaying, depth >= max(1, startSamples) {
            isPlaying = true
            hasPlayed = true
        }
    }

    /// Exactly `count` samples per channel, timed `pts`: the oldest buffered, then
    /// silence if the buffer ran dry (see the type's comment).
    public mutating func pop(_ count: Int, pts: MediaTime = .zero) -> AudioFrame {
        let count = max(0, count)
        var frame = AudioFrame(sampleRate: sampleRate, channelCount: channelCount, sampleCount: count, pts: pts)
        guard isPlaying else {
            if hasPlayed { silentSamples += count }
            return frame
        }
        let taken = min(count, depth)
        if taken > 0 { copyOut(taken, into: &frame.samples, stride: count) }
        head = (head + taken) % maxSamples
        depth -= taken
        if taken < count {
            underrunCount += 1
            silentSamples += count - taken
            isPlaying = false
        }
        return frame
    }

    /// Copies the oldest `taken` samples of each channel to the start of each of
    /// `target`'s channels (`stride` samples apart).
    private func copyOut(_ taken: Int, into target: inout [Float], stride: Int) {
        target.withUnsafeMutableBufferPointer { target in
            ring.withUnsafeBufferPointer { ring in
                for channel in 0..<channelCount {
                    let from = ring.baseAddress! + channel * maxSamples
                    let to = target.baseAddress! + channel * stride
                    let first = min(taken, maxSamples - head)
                    to.update(from: from + head, count: first)
                    if taken > first { (to + first).update(from: from, count: taken - first) }
                }
            }
        }
    }
}
