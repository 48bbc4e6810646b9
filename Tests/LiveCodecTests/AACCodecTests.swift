import Foundation
import LiveCore
import Testing
@testable import LiveCodec

@Suite("AAC encoder and decoder")
struct AACCodecTests {
    func tone(_ frequency: Double, seconds: Double, channels: Int = 2, rate: Int = 48000) -> AudioFrame {
        let count = Int(seconds * Double(rate))
        let mono = (0..<count).map { 0.3 * Float(sin(2 * Double.pi * frequency * Double($0) / Double(rate))) }
        return AudioFrame(sampleRate: rate, channelCount: channels,
                          samples: Array([[Float]](repeating: mono, count: channels).joined()), pts: MediaTime(milliseconds: 5000))
    }

    @Test("48 kHz stereo AAC-LC: AudioSpecificConfig starts 0x11 0x90, 1024-sample frames 21.333 ms apart on the input's clock")
    func headerAndTiming() throws {
        let encoder = try AACEncoder(sampleRate: 48000, channelCount: 2, bitrateKbps: 96)
        // Object type 2 (LC), frequency index 3 (48 kHz), 2 channels; FFmpeg appends the
        // backward-compatible "no SBR" extension (sync 0x2B7) after those two bytes.
        #expect(encoder.streamInfo.audioSpecificConfig.prefix(2) == [0x11, 0x90])
        #expect(encoder.frameSize == 1024)
        // Blocks of 480 (10 ms), as capture delivers them.
        let whole = tone(1000, seconds: 1)
        var packets: [EncodedAudioPacket] = []
        for start in stride(from: 0, to: whole.sampleCount, by: 480) {
            let slice = (0..<2).flatMap { Array(whole.channel($0)[(($0 * whole.sampleCount) + start)..<(($0 * whole.sampleCount) + start + 480)]) }
            packets += try encoder.encode(AudioFrame(sampleRate: 48000, channelCount: 2, samples: slice,
                                                     pts: MediaTime(micros: 5_000_000 + Int64(start) * 1_000_000 / 48000)))
        }
        packets += try encoder.flush()
        // 48000 samples are 46.9 frames: 47 frames plus the encoder's priming frame.
        #expect(packets.count == 48)
        let steps = zip(packets, packets.dropFirst()).map { $1.pts.micros - $0.pts.micros }
        #expect(steps.allSatisfy { $0 == 21333 || $0 == 21334 })
        #expect(packets.allSatisfy { !$0.data.isEmpty && $0.duration == MediaTime(micros: 21333) })
        // The priming frame comes first, one frame before the first sample.
        #expect(packets[0].pts.micros == 5_000_000 - 21333)
    }

    @Test("a 1000 Hz tone survives AAC at 96 kbit/s: the decoded audio is the same frequency, stereo, 48 kHz")
    func roundTripKeepsTheTone() throws {
        let encoder = try AACEncoder()
        var packets = try encoder.encode(tone(1000, seconds: 1))
        packets += try encoder.flush()
        let decoder = try AACDecoder(audioSpecificConfig: encoder.streamInfo.audioSpecificConfig)
        var decoded: [Float] = []
        for packet in packets {
            for frame in try decoder.decode(packet.data, pts: packet.pts) {
                #expect(frame.sampleRate == 48000 && frame.channelCount == 2)
                decoded += frame.channel(1)
            }
        }
        #expect(decoded.count >= 47 * 1024)
        let middle = decoded[10_000..<40_000]
        #expect(ToneDetector(frequency: 1000, sampleRate: 48000).share(in: middle) > 0.9)
        #expect(ToneDetector(frequency: 1500, sampleRate: 48000).share(in: middle) < 0.01)
        let level = AudioLevel.of(middle)
        #expect(level >= 76 && level <= 79, "level \(level) of a 0.3-amplitude sine (RMS −13.5 dBFS: 78)")
    }

    @Test("bad shapes are refused with words: sample rate, channels, bitrate, a frame of another shape, an empty config")
    func refusals() throws {
        #expect(throws: AACEncoder.EncoderError.invalidConfig("sample rate 22050 is not 44100 or 48000")) {
            try AACEncoder(sampleRate: 22050)
        }
        #expect(throws: AACEncoder.EncoderError.self) { try AACEncoder(channelCount: 6) }
        #expect(throws: AACEncoder.EncoderError.self) { try AACEncoder(bitrateKbps: 4) }
        let encoder = try AACEncoder(sampleRate: 48000, channelCount: 2)
        #expect(throws: AACEncoder.EncoderError.frameShape(sampleRate: 44100, channelCount: 2)) {
            try encoder.encode(tone(440, seconds: 0.1, rate: 44100))
        }
        #expect(throws: FFmpegError.self) { try AACDecoder(audioSpecificConfig: []) }
    }
}
