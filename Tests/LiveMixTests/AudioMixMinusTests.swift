import Foundation
import LiveCore
import Testing
@testable import LiveMix

@Suite("AudioMixMinus: the program holds every voice, each mix-minus every voice but its own")
struct AudioMixMinusTests {
    let frequencies = [300.0, 500.0, 700.0, 900.0]  // hoster, co-hosts 1…3

    func voice(_ frequency: Double, amplitude: Float, block: Int, count: Int = 480) -> AudioFrame {
        let mono = (block * count..<(block + 1) * count).map { amplitude * Float(sin(2 * Double.pi * frequency * Double($0) / 48000)) }
        return AudioFrame(sampleRate: 48000, channelCount: 2, samples: mono + mono)
    }

    func share(_ frequency: Double, in frame: AudioFrame, channel: Int = 0) -> Double {
        ToneDetector(frequency: frequency, sampleRate: 48000).share(in: frame.channel(channel))
    }

    @Test("four loud tones: the program holds all four, mix-minus i lacks its own (share < 0.01) and holds the other three; nothing passes the ceiling")
    func programAndMixMinus() throws {
        var mix = AudioMixMinus()
        for block in 0..<30 {
            let voices = frequencies.map { voice($0, amplitude: 0.7, block: block) }
            let out = try mix.mix(voices)
            #expect(out.minus.count == 4)
            for frame in [out.program] + out.minus {
                #expect(frame.sampleCount == 480 && frame.channelCount == 2)
                #expect(frame.samples.allSatisfy { abs($0) <= mix.ceiling }, "block \(block) passed the ceiling")
            }
            for frequency in frequencies {
                #expect(share(frequency, in: out.program) > 0.15, "program: \(frequency) Hz in block \(block)")
            }
            for (own, minus) in zip(frequencies, out.minus) {
                for channel in 0..<2 {
                    #expect(share(own, in: minus, channel: channel) < 0.01, "mix-minus of \(own) Hz still holds it")
                }
                for other in frequencies where other != own {
                    #expect(share(other, in: minus) > 0.2, "mix-minus of \(own) Hz lacks \(other) Hz")
                }
            }
        }
        #expect(mix.program.gain < 1)
    }

    @Test("silence in, silence out, on every output")
    func silence() throws {
        var mix = AudioMixMinus()
        let silent = AudioFrame(sampleRate: 48000, channelCount: 2, sampleCount: 480)
        let out = try mix.mix([silent, silent, silent])
        #expect(([out.program] + out.minus).allSatisfy { $0.samples.allSatisfy { $0 == 0 } })
        #expect(out.minus.count == 3)
    }

    @Test("each output is limited for itself, after the subtraction: a loud hoster does not turn down what the hoster hears")
    func limiterPerOutput() throws {
        var mix = AudioMixMinus()
        var plain = AudioMixer()
        for block in 0..<10 {
            let hoster = voice(300, amplitude: 0.95, block: block)
            let cohosts = [voice(500, amplitude: 0.2, block: block), voice(700, amplitude: 0.2, block: block)]
            let out = try mix.mix([hoster] + cohosts)
            // What the hoster hears (the two co-hosts, 0.4 at most) is their plain sum, unlimited.
            let mixed = plain.mix(cohosts)
            let expected = try #require(mixed)
            #expect(zip(out.minus[0].samples, expected.samples).allSatisfy { abs($0 - $1) < 1e-6 })
            #expect(out.program.samples.allSatisfy { abs($0) <= mix.ceiling })
        }
        #expect(mix.minus[0].gain == 1)
        #expect(mix.program.gain < 1)
        #expect(mix.minus[1].gain < 1)  // hoster + one co-host: 1.15 at its peak
    }

    @Test("the outputs follow the number of voices; misaligned voices are refused with a typed error")
    func voicesComeAndGo() throws {
        var mix = AudioMixMinus()
        // 0.4 + 0.4 stays under the ceiling: no limiting to recover from afterwards.
        #expect(try mix.mix([voice(300, amplitude: 0.4, block: 0), voice(500, amplitude: 0.4, block: 0)]).minus.count == 2)
        let alone = try mix.mix([voice(300, amplitude: 0.5, block: 1)])
        #expect(alone.minus.count == 1)
        #expect(alone.minus[0].samples.allSatisfy { $0 == 0 })  // the hoster alone hears no one
        #expect(alone.program == voice(300, amplitude: 0.5, block: 1))
        #expect(throws: AudioMixMinus.Error.noVoices) { try mix.mix([]) }
        #expect(throws: AudioMixMinus.Error.misaligned(index: 1)) {
            try mix.mix([voice(300, amplitude: 0.5, block: 0), voice(500, amplitude: 0.5, block: 0, count: 441)])
        }
        let mono = AudioFrame(sampleRate: 48000, channelCount: 1, sampleCount: 960)
        #expect(throws: AudioMixMinus.Error.misaligned(index: 2)) {
            try mix.mix([voice(300, amplitude: 0.5, block: 0), voice(500, amplitude: 0.5, block: 0), mono])
        }
    }

    @Test("co-hosts' voices arriving in uneven bursts through voice buffers mix without their own frequency")
    func voiceBuffersIntoTheMix() throws {
        var buffers = try (0..<3).map { _ in try AudioVoiceBuffer() }
        var mix = AudioMixMinus()
        var sent = [0, 0, 0]
        var checked = 0
        for tick in 0..<40 {
            // Co-host c delivers in bursts of (c + 1) blocks every (c + 1) ticks.
            for c in 0..<3 where tick % (c + 1) == 0 {
                for _ in 0...c {
                    try buffers[c].push(voice(frequencies[c + 1], amplitude: 0.6, block: sent[c]))
                    sent[c] += 1
                }
            }
            let voices = [voice(frequencies[0], amplitude: 0.6, block: tick)] + buffers.indices.map { buffers[$0].pop(480) }
            let out = try mix.mix(voices)
            guard buffers.allSatisfy(\.isPlaying) else { continue }
            checked += 1
            for (index, minus) in out.minus.enumerated() {
                #expect(share(frequencies[index], in: minus) < 0.01)
            }
            #expect(frequencies.allSatisfy { share($0, in: out.program) > 0.1 })
        }
        #expect(checked > 20)
        #expect(buffers.allSatisfy { $0.underrunCount == 0 })
    }
}
