import Foundation
import LiveCore
import Testing
@testable import LiveMix

@Suite("Audio mixer")
struct AudioMixerTests {
    func voice(_ frequency: Double, amplitude: Float, count: Int = 480, start: Int = 0, channels: Int = 2) -> AudioFrame {
        let mono = (start..<start + count).map { amplitude * Float(sin(2 * Double.pi * frequency * Double($0) / 48000)) }
        return AudioFrame(sampleRate: 48000, channelCount: channels, samples: Array([[Float]](repeating: mono, count: channels).joined()))
    }

    @Test("silence in, silence out; one voice under the ceiling passes unchanged")
    func silenceAndPassThrough() throws {
        var mixer = AudioMixer()
        let silent = AudioFrame(sampleRate: 48000, channelCount: 2, sampleCount: 480)
        let quiet = mixer.mix([silent, silent])
        #expect(try #require(quiet).samples.allSatisfy { $0 == 0 })
        let one = voice(440, amplitude: 0.5)
        let alone = mixer.mix([one])
        #expect(alone == one)
        #expect(mixer.mix([]) == nil)
    }

    @Test("four loud voices: the sum is limited below the ceiling, each voice still there")
    func fourLoudVoicesDoNotClip() throws {
        var mixer = AudioMixer()
        let frequencies = [300.0, 500.0, 700.0, 900.0]
        for block in 0..<20 {
            let voices = frequencies.map { voice($0, amplitude: 0.7, start: block * 480) }
            let mixed = mixer.mix(voices)
            let out = try #require(mixed)
            #expect(out.samples.allSatisfy { abs($0) <= mixer.ceiling }, "block \(block) clipped")
            for frequency in frequencies {
                let share = ToneDetector(frequency: frequency, sampleRate: 48000).share(in: out.channel(0))
                #expect(share > 0.15, "\(frequency) Hz is \(share) of block \(block)")
            }
        }
        #expect(mixer.gain < 1)
    }

    @Test("the gain recovers when the sum is quiet again, and never lets a block clip on the way")
    func gainRecovers() throws {
        var mixer = AudioMixer()
        _ = mixer.mix([voice(440, amplitude: 0.9), voice(660, amplitude: 0.9)])
        let limited = mixer.gain
        #expect(limited < 0.7)
        for _ in 0..<30 {
            let mixed = mixer.mix([voice(440, amplitude: 0.3)])
            let out = try #require(mixed)
            #expect(out.samples.allSatisfy { abs($0) <= mixer.ceiling })
        }
        #expect(mixer.gain > 0.99)
    }

    @Test("the gain rises in a glide, not in steps at the blocks' starts (a step is a click)")
    func gainGlides() throws {
        var mixer = AudioMixer()
        _ = mixer.mix([voice(440, amplitude: 0.9), voice(660, amplitude: 0.9)])
        #expect(mixer.gain < 0.7)
        // A steady level after the loud block: what comes out is the gain's own course.
        let steady = AudioFrame(sampleRate: 48000, channelCount: 2, samples: [Float](repeating: 0.3, count: 960))
        var out: [[Float]] = []
        for _ in 0..<10 {
            let mixed = mixer.mix([steady])
            out.append(Array(try #require(mixed).channel(1)))
        }
        let course = Array(out.joined())
        let jumps = zip(course, course.dropFirst()).map { $1 - $0 }
        #expect(jumps.allSatisfy { $0 >= 0 && $0 < 0.001 }, "largest step \(jumps.map(abs).max() ?? 0)")
        #expect((course.last ?? 0) > 0.3 * 0.9)
        // Both channels take the same gain at the same instant.
        let mixed = mixer.mix([steady])
        let both = try #require(mixed)
        #expect(Array(both.channel(0)) == Array(both.channel(1)))
    }

    @Test("a shorter voice counts as silence past its end")
    func unevenLengths() throws {
        var mixer = AudioMixer()
        let long = AudioFrame(sampleRate: 48000, channelCount: 1, samples: [0.1, 0.1, 0.1, 0.1])
        let short = AudioFrame(sampleRate: 48000, channelCount: 1, samples: [0.2, 0.2])
        let mixed = mixer.mix([long, short])
        #expect(mixed?.samples == [Float(0.1) + 0.2, Float(0.1) + 0.2, 0.1, 0.1])
    }
}
