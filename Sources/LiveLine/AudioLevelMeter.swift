import LiveCore

/// The 0–100 level (`AudioLevel`) of decoded audio, two ways: over the last
/// `windowMicros` of audio (the guest's `audioLevel` figure), and over what came since
/// the last `takeSinceLast()` (the throttled level events, the anyRTC SDK: onRTCHosterAudioActive).
/// Pure: keeps sums of squares per frame, not the samples.
public struct AudioLevelMeter: Sendable {
    /// How much recent audio `level` covers.
    public static let windowMicros: Int64 = 1_000_000

    private var recent: [(sum: Double, count: Int, micros: Int64)] = []
    private var recentMicros: Int64 = 0
    private var sinceLast = (sum: 0.0, count: 0)

    public init() {}

    public mutating func add(_ frame: AudioFrame) {
        var sum = 0.0
        for sample in frame.samples { sum += Double(sample) * Double(sample) }
        let micros = frame.duration.micros
        recent.append((sum, frame.samples.count, micros))
        recentMicros += micros
        while recent.count > 1, recentMicros - recent[0].micros >= Self.windowMicros {
            recentMicros -= recent.removeFirst().micros
        }
        sinceLast.sum += sum
        sinceLast.count += frame.samples.count
    }

    /// The level over the last `windowMicros` of audio; nil before any audio.
    public var level: Int? {
        let count = recent.reduce(0) { $0 + $1.count }
        guard count > 0 else { return nil }
        return AudioLevel.level(rms: (recent.reduce(0) { $0 + $1.sum } / Double(count)).squareRoot())
    }

    /// The level of the audio added since the last call, nil when none was; starts over.
    public mutating func takeSinceLast() -> Int? {
        defer { sinceLast = (0, 0) }
        guard sinceLast.count > 0 else { return nil }
        return AudioLevel.level(rms: (sinceLast.sum / Double(sinceLast.count)).squareRoot())
    }
}
