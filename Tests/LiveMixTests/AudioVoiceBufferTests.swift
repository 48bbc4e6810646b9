import LiveCore
import Testing
@testable import LiveMix

@Suite("AudioVoiceBuffer: bursts in, exact blocks out, an initial fill, a bounded depth")
struct AudioVoiceBufferTests {
    /// `count` samples per channel of a ramp starting at `start` (channel 1 negated), so
    /// every sample says where it came from.
    func ramp(_ start: Int, _ count: Int, channels: Int = 2, rate: Int = 48000) -> AudioFrame {
        let values = (start..<start + count).map { Float($0) }
        let samples = channels == 1 ? values : values + values.map { -$0 }
        return AudioFrame(sampleRate: rate, channelCount: channels, samples: samples)
    }

    @Test("frames in another format are refused with a typed error and nothing is kept")
    func refusesOtherFormats() throws {
        var buffer = try AudioVoiceBuffer()
        #expect(throws: AudioVoiceBuffer.Error.format(sampleRate: 44100, channelCount: 2, expectedSampleRate: 48000,
                                                      expectedChannelCount: 2)) {
            try buffer.push(ramp(0, 4410, rate: 44100))
        }
        #expect(throws: AudioVoiceBuffer.Error.self) { try buffer.push(ramp(0, 480, channels: 1)) }
        #expect(buffer.depth == 0)
        let message = "\(AudioVoiceBuffer.Error.format(sampleRate: 44100, channelCount: 1, expectedSampleRate: 48000, expectedChannelCount: 2))"
        #expect(message.contains("44100 Hz") && message.contains("resample"))
        #expect(throws: AudioVoiceBuffer.Error.self) { try AudioVoiceBuffer(maxMilliseconds: 40, startMilliseconds: 50) }
        #expect(throws: AudioVoiceBuffer.Error.self) { try AudioVoiceBuffer(maxMilliseconds: 0) }
        #expect(throws: AudioVoiceBuffer.Error.self) { try AudioVoiceBuffer(channelCount: 3) }
    }

    @Test("nothing plays before the initial fill; then every sample comes out once, in order, whatever the burst sizes")
    func initialFillAndContinuity() throws {
        var buffer = try AudioVoiceBuffer(maxMilliseconds: 200, startMilliseconds: 40)
        try buffer.push(ramp(0, 1440))  // 30 ms
        let early = buffer.pop(480)
        #expect(early.samples.allSatisfy { $0 == 0 })
        #expect(early.sampleCount == 480)
        #expect(!buffer.isPlaying)
        #expect(buffer.silentSamples == 0)  // waiting for the first fill is not an underrun
        #expect(buffer.depth == 1440)
        // Bursts of odd sizes, past the ring's end more than once.
        var pushed = 1440
        var out: [Float] = []
        var right: [Float] = []
        for size in [7, 1000, 333, 4800, 1, 2000, 959, 3000, 480, 5000] {
            try buffer.push(ramp(pushed, size))
            pushed += size
            while buffer.isPlaying, buffer.depth >= 480 {
                let block = buffer.pop(480)
                #expect(block.sampleCount == 480)
                out += block.channel(0)
                right += block.channel(1)
            }
        }
        #expect(buffer.isPlaying)
        #expect(out == (0..<out.count).map { Float($0) })
        #expect(right == out.map { -$0 })
        #expect(out.count + buffer.depth == pushed)
        #expect(buffer.underrunCount == 0 && buffer.droppedSamples == 0 && buffer.silentSamples == 0)
    }

    @Test("an underrun gives what there is then silence, is counted, and waits for the fill again")
    func underrun() throws {
        var buffer = try AudioVoiceBuffer(channelCount: 1, maxMilliseconds: 200, startMilliseconds: 20)
        try buffer.push(ramp(1, 1200, channels: 1))  // 25 ms: playing
        _ = buffer.pop(480)
        _ = buffer.pop(480)
        let short = buffer.pop(480)  // 240 left
        #expect(Array(short.samples.prefix(240)) == (961...1200).map { Float($0) })
        #expect(short.samples.dropFirst(240).allSatisfy { $0 == 0 })
        #expect(buffer.underrunCount == 1)
        #expect(buffer.silentSamples == 240)
        #expect(!buffer.isPlaying)
        // 10 ms arrive: under the 20 ms fill, so silence still, counted.
        try buffer.push(ramp(1201, 480, channels: 1))
        #expect(buffer.pop(480).samples.allSatisfy { $0 == 0 })
        #expect(buffer.silentSamples == 720)
        #expect(buffer.underrunCount == 1)
        try buffer.push(ramp(1681, 480, channels: 1))
        #expect(buffer.isPlaying)
        #expect(buffer.pop(480).samples == (1201...1680).map { Float($0) })
    }

    @Test("past the depth the oldest samples are dropped and counted; a burst longer than the ring keeps its newest")
    func boundedDepth() throws {
        var buffer = try AudioVoiceBuffer(maxMilliseconds: 200, startMilliseconds: 40)
        try buffer.push(ramp(0, 14_400))  // 300 ms at once
        #expect(buffer.depth == 9600)
        #expect(buffer.droppedSamples == 4800)
        let first = buffer.pop(480)
        #expect(first.channel(0).first == 4800)
        #expect(first.channel(1).first == -4800)
        try buffer.push(ramp(14_400, 960))  // 20 ms more: 40 ms over
        #expect(buffer.depth == 9600)
        #expect(buffer.droppedSamples == 4800 + 480)
        #expect(buffer.pop(480).channel(0).first == 5760)
        // Empty frames are harmless.
        try buffer.push(AudioFrame(sampleRate: 48000, channelCount: 2, sampleCount: 0))
        #expect(buffer.pop(0).sampleCount == 0)
    }
}
