import Foundation
import LiveCore
import Testing
@testable import LiveCodec

@Suite struct ResamplerTests {
    /// `count` samples of a sine at `hertz`, amplitude 0.5, starting at sample `start`.
    static func sine(_ hertz: Double, rate: Int, start: Int = 0, count: Int) -> [Float] {
        (start..<start + count).map { Float(0.5 * sin(2 * Double.pi * hertz * Double($0) / Double(rate))) }
    }

    /// Streams `input` through `resampler` in `block`-sample frames (pts counting from
    /// `origin`) and flushes; returns the outputs in order.
    static func stream(_ input: [Float], rate: Int, channels: Int = 1, block: Int, origin: MediaTime = .zero,
                       through resampler: Resampler) throws -> [AudioFrame] {
        var outputs: [AudioFrame] = []
        let perChannel = input.count / channels
        var offset = 0
        while offset < perChannel {
            let count = min(block, perChannel - offset)
            var samples: [Float] = []
            for channel in 0..<channels {
                samples += input[channel * perChannel + offset..<channel * perChannel + offset + count]
            }
            let frame = AudioFrame(sampleRate: rate, channelCount: channels, samples: samples,
                                   pts: origin + MediaTime(micros: Int64(offset) * 1_000_000 / Int64(rate)))
            if let out = try resampler.convert(frame) { outputs.append(out) }
            offset += count
        }
        if let tail = try resampler.flush() { outputs.append(tail) }
        return outputs
    }

    static func joined(_ frames: [AudioFrame], channel: Int) -> [Float] {
        frames.flatMap { Array($0.channel(channel)) }
    }

    @Test("44.1 kHz mono tone → 48 kHz stereo: the frequency holds on both sides, 1 s gives 48000 samples, pts contiguous")
    func monoToStereoKeepsFrequency() throws {
        let resampler = try Resampler(sampleRate: 48000, channelCount: 2)
        let input = Self.sine(1000, rate: 44100, count: 44100)
        let outputs = try Self.stream(input, rate: 44100, block: 441, origin: MediaTime(micros: 2_000_000), through: resampler)
        let total = outputs.reduce(0) { $0 + $1.sampleCount }
        #expect(abs(total - 48000) <= 4)
        #expect(outputs.allSatisfy { $0.sampleRate == 48000 && $0.channelCount == 2 })
        let detector = ToneDetector(frequency: 1000, sampleRate: 48000)
        let left = Self.joined(outputs, channel: 0), right = Self.joined(outputs, channel: 1)
        #expect(detector.share(in: left[480..<47520]) > 0.9)
        #expect(detector.share(in: right[480..<47520]) > 0.9)
        // Copied to both sides at its own level (libswresample alone would give -3 dB).
        let peak = left[480..<47520].map { abs($0) }.max() ?? 0
        #expect(abs(peak - 0.5) < 0.02)
        #expect(left == right)
        // The first output starts at the first input's time; each follows the previous one.
        #expect(outputs[0].pts == MediaTime(micros: 2_000_000))
        var samplesBefore: Int64 = 0
        for frame in outputs {
            let expected = 2_000_000 + samplesBefore * 1_000_000 / 48000
            #expect(abs(frame.pts.micros - expected) <= 1, "output at sample \(samplesBefore)")
            samplesBefore += Int64(frame.sampleCount)
        }
    }

    @Test("the filter's delay is accounted for: an impulse lands at the same time on the output")
    func impulseKeepsItsTime() throws {
        let resampler = try Resampler(sampleRate: 48000, channelCount: 1)
        var input = [Float](repeating: 0, count: 44100)
        input[4410] = 1  // 100 ms in
        let outputs = try Self.stream(input, rate: 44100, block: 1024, through: resampler)
        let output = Self.joined(outputs, channel: 0)
        let peak = try #require(output.indices.max { abs(output[$0]) < abs(output[$1]) })
        #expect(abs(peak - 4800) <= 2)
    }

    @Test("silence in, silence out (every rate and channel change)", arguments: [(44100, 1, 48000, 2), (48000, 2, 44100, 1), (48000, 2, 48000, 1)])
    func silence(inRate: Int, inChannels: Int, outRate: Int, outChannels: Int) throws {
        let resampler = try Resampler(sampleRate: outRate, channelCount: outChannels)
        let input = [Float](repeating: 0, count: inRate / 2 * inChannels)
        let outputs = try Self.stream(input, rate: inRate, channels: inChannels, block: inRate / 100, through: resampler)
        let total = outputs.reduce(0) { $0 + $1.sampleCount }
        #expect(abs(total - outRate / 2) <= 4)
        #expect(outputs.allSatisfy { $0.samples.allSatisfy { $0 == 0 } })
    }

    @Test("s16 interleaved stereo converts exactly, left staying left")
    func s16Interleaved() throws {
        let resampler = try Resampler(sampleRate: 48000, channelCount: 2)
        let count = 960
        let left = Self.sine(1000, rate: 48000, count: count), right = Self.sine(3000, rate: 48000, count: count)
        var bytes: [UInt8] = []
        for index in 0..<count {
            for value in [left[index], right[index]] {
                let sample = Int16(value * 32767)
                bytes += [UInt8(truncatingIfNeeded: sample), UInt8(truncatingIfNeeded: sample >> 8)]
            }
        }
        let format = Resampler.InputFormat(sampleRate: 48000, channelCount: 2, sampleFormat: .s16)
        let frame = try #require(try resampler.convert(planes: [bytes], format: format, sampleCount: count, pts: .zero))
        #expect(frame.sampleCount == count)
        let outLeft = Array(frame.channel(0)), outRight = Array(frame.channel(1))
        for index in stride(from: 0, to: count, by: 37) {
            #expect(abs(outLeft[index] - left[index]) < 1e-3)
            #expect(abs(outRight[index] - right[index]) < 1e-3)
        }
        #expect(ToneDetector(frequency: 3000, sampleRate: 48000).share(in: frame.channel(1)) > 0.95)
        #expect(ToneDetector(frequency: 3000, sampleRate: 48000).share(in: frame.channel(0)) < 0.01)
    }

    @Test("5.1 planar float downmixes to stereo: a front-left tone stays on the left")
    func surroundToStereo() throws {
        let resampler = try Resampler(sampleRate: 48000, channelCount: 2)
        let count = 4800
        let tone = Self.sine(1000, rate: 48000, count: count)
        let planes = (0..<6).map { channel -> [UInt8] in
            let samples = channel == 0 ? tone : [Float](repeating: 0, count: count)
            return samples.withUnsafeBytes { [UInt8]($0) }
        }
        let format = Resampler.InputFormat(sampleRate: 48000, channelCount: 6, sampleFormat: .floatPlanar)
        let frame = try #require(try resampler.convert(planes: planes, format: format, sampleCount: count, pts: nil))
        #expect(ToneDetector(frequency: 1000, sampleRate: 48000).share(in: frame.channel(0)) > 0.95)
        #expect(frame.channel(1).allSatisfy { abs($0) < 1e-6 })
    }

    @Test("the one-shot conversion: 48 kHz stereo → 44.1 kHz mono averages the sides and keeps the length")
    func oneShot() throws {
        let tone = Self.sine(1000, rate: 48000, count: 48000)
        let frame = AudioFrame(sampleRate: 48000, channelCount: 2, samples: tone + tone, pts: MediaTime(micros: 40_000))
        let mono = try Resampler.converting(frame, toSampleRate: 44100, channelCount: 1)
        #expect(mono.sampleRate == 44100 && mono.channelCount == 1)
        #expect(abs(mono.sampleCount - 44100) <= 4)
        #expect(mono.pts == MediaTime(micros: 40_000))
        let peak = mono.samples[441..<43659].map { abs($0) }.max() ?? 0
        #expect(abs(peak - 0.5) < 0.02)
        #expect(ToneDetector(frequency: 1000, sampleRate: 44100).share(in: mono.samples[441..<43659]) > 0.9)
        #expect(try Resampler.converting(frame, toSampleRate: 48000, channelCount: 2) == frame)
    }

    @Test("a format change mid-stream reconfigures: mono then stereo input both come out")
    func formatChange() throws {
        let resampler = try Resampler(sampleRate: 48000, channelCount: 2)
        let mono = AudioFrame(sampleRate: 48000, channelCount: 1, samples: Self.sine(1000, rate: 48000, count: 960))
        let stereoSamples = Self.sine(1000, rate: 48000, count: 960) + [Float](repeating: 0, count: 960)
        let stereo = AudioFrame(sampleRate: 48000, channelCount: 2, samples: stereoSamples)
        let first = try #require(try resampler.convert(mono))
        #expect(first.channel(0) == first.channel(1))
        let second = try #require(try resampler.convert(stereo))
        #expect(second.channel(1).allSatisfy { $0 == 0 })
        #expect(second.channel(0).contains { $0 != 0 })
    }

    @Test("an empty frame gives nothing and leaves the stream as it was")
    func emptyFrame() throws {
        let resampler = try Resampler(sampleRate: 48000, channelCount: 2)
        #expect(try resampler.convert(AudioFrame(sampleRate: 44100, channelCount: 1, sampleCount: 0)) == nil)
        let frame = AudioFrame(sampleRate: 44100, channelCount: 1, samples: Self.sine(1000, rate: 44100, count: 4410))
        let out = try #require(try resampler.convert(frame))
        #expect(out.pts == .zero && out.sampleCount > 4000)
    }

    @Test("impossible outputs and malformed inputs are refused with a message")
    func refusals() throws {
        #expect(throws: Resampler.ResamplerError.unsupportedOutput(sampleRate: 48000, channelCount: 3)) {
            try Resampler(sampleRate: 48000, channelCount: 3)
        }
        let resampler = try Resampler(sampleRate: 48000, channelCount: 2)
        let format = Resampler.InputFormat(sampleRate: 48000, channelCount: 2, sampleFormat: .s16)
        #expect {
            try resampler.convert(planes: [[0, 0, 0]], format: format, sampleCount: 10, pts: nil)
        } throws: { error in
            "\(error)".contains("cannot resample")
        }
    }
}
