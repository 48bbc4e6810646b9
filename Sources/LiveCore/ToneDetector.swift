import Foundation

/// How much of a block of samples is one frequency: the Goertzel algorithm, one DFT bin
/// without a whole FFT. Used to find the test tone's marker beeps in decoded audio (A/V
/// sync) and by the tests to check which voices a mix holds.
public struct ToneDetector: Sendable {
    public let frequency: Double
    public let sampleRate: Int
    private let coefficient: Double

    public init(frequency: Double, sampleRate: Int) {
        precondition(frequency > 0 && sampleRate > 0 && frequency < Double(sampleRate) / 2, "frequency must be under Nyquist")
        self.frequency = frequency
        self.sampleRate = sampleRate
        coefficient = 2 * cos(2 * Double.pi * frequency / Double(sampleRate))
    }

    /// The share of the block's energy at `frequency`, 0…1 (about 1 for a pure tone of
    /// that frequency, about 0 for silence or other frequencies, given a block of at least
    /// a few periods).
    public func share<Samples: Collection>(in samples: Samples) -> Double where Samples.Element == Float {
        guard !samples.isEmpty else { return 0 }
        var previous = 0.0, beforePrevious = 0.0, energy = 0.0
        for sample in samples {
            let value = Double(sample)
            energy += value * value
            let current = value + coefficient * previous - beforePrevious
            beforePrevious = previous
            previous = current
        }
        guard energy > 0 else { return 0 }
        let power = previous * previous + beforePrevious * beforePrevious - coefficient * previous * beforePrevious
        // A pure tone of N samples puts N/2 × its energy in the bin's power.
        return min(1, power / (energy * Double(samples.count) / 2))
    }
}
