import Foundation
import Testing
@testable import LiveCore

@Suite("Audio levels and tone detection")
struct AudioMeasureTests {
    func sine(_ frequency: Double, amplitude: Float, count: Int, rate: Int = 48000) -> [Float] {
        (0..<count).map { amplitude * Float(sin(2 * Double.pi * frequency * Double($0) / Double(rate))) }
    }

    @Test("level: silence 0, −60 dBFS and below 0, full-scale square 100, full-scale sine 95, each 6 dB ten points")
    func levelMapping() {
        #expect(AudioLevel.of([Float](repeating: 0, count: 480)) == 0)
        #expect(AudioLevel.of([Float]()) == 0)
        #expect(AudioLevel.level(rms: 0.001) == 0)  // −60 dBFS
        #expect(AudioLevel.level(rms: 0.0001) == 0)
        #expect(AudioLevel.of([Float](repeating: 1, count: 480)) == 100)
        #expect(AudioLevel.of(sine(1000, amplitude: 1, count: 4800)) == 95)
        #expect(AudioLevel.of(sine(1000, amplitude: 0.5, count: 4800)) == 85)
        #expect(AudioLevel.of(sine(1000, amplitude: 0.25, count: 4800)) == 75)
        #expect(AudioLevel.level(rms: .nan) == 0 && AudioLevel.level(rms: .infinity) == 0)
    }

    @Test("Goertzel: a pure tone is all its own frequency, none of another, silence none")
    func goertzelShares() {
        let tone = sine(1000, amplitude: 0.5, count: 4800)
        #expect(ToneDetector(frequency: 1000, sampleRate: 48000).share(in: tone) > 0.95)
        #expect(ToneDetector(frequency: 1500, sampleRate: 48000).share(in: tone) < 0.01)
        #expect(ToneDetector(frequency: 1000, sampleRate: 48000).share(in: [Float](repeating: 0, count: 4800)) == 0)
        // Two voices at equal level: each about half of the energy.
        let both = zip(tone, sine(600, amplitude: 0.5, count: 4800)).map { $0 + $1 }
        let share = ToneDetector(frequency: 600, sampleRate: 48000).share(in: both)
        #expect(share > 0.4 && share < 0.6)
    }

    @Test("an audio frame is planar: channel slices, sample count and duration")
    func frameShape() {
        let frame = AudioFrame(sampleRate: 48000, channelCount: 2, samples: [1, 2, 3, 4, 5, 6], pts: .zero)
        #expect(frame.sampleCount == 3)
        #expect(Array(frame.channel(0)) == [1, 2, 3] && Array(frame.channel(1)) == [4, 5, 6])
        #expect(AudioFrame(sampleRate: 48000, channelCount: 1, sampleCount: 480).duration == MediaTime(milliseconds: 10))
    }
}
