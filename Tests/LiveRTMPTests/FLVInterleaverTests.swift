import LiveCore
import Testing
@testable import LiveRTMP

@Suite("FLV interleaving of audio and video, and the audio items a publisher sends")
struct FLVInterleaverTests {
    typealias Released = [(item: String, timestamp: UInt32)]

    static func names(_ released: Released) -> [String] { released.map(\.item) }

    @Test("each track is held until the other reaches its time, then both go out in timestamp order")
    func ordersByTimestamp() {
        var interleaver = FLVInterleaver<String>(tracks: [.audio, .video], windowMicros: 100_000)
        var out: Released = []
        // Video is ahead (audio is late by its encoder's delay), as from the two threads.
        out += interleaver.push("v0", track: .video, dts: 0)
        out += interleaver.push("v33", track: .video, dts: 33_333)
        #expect(out.isEmpty, "video went before audio caught up: \(Self.names(out))")
        out += interleaver.push("a-21", track: .audio, dts: -21_333)
        out += interleaver.push("a0", track: .audio, dts: 0)
        out += interleaver.push("a21", track: .audio, dts: 21_333)
        out += interleaver.push("a42", track: .audio, dts: 42_666)
        out += interleaver.push("v66", track: .video, dts: 66_666)
        #expect(Self.names(out) == ["a-21", "a0", "v0", "a21", "v33", "a42"])
        // One origin: the earliest item of either kind is 0, the rest count from it.
        #expect(out.map(\.timestamp) == [0, 21, 21, 42, 54, 63])
        #expect(interleaver.heldCount == 1)
        let rest = interleaver.flush()
        #expect(Self.names(rest) == ["v66"])
        #expect(rest.first?.timestamp == 87)
    }

    @Test("a stalled track holds the other no longer than the window")
    func windowBoundsTheWait() {
        var interleaver = FLVInterleaver<String>(tracks: [.audio, .video], windowMicros: 100_000)
        var out = interleaver.push("v0", track: .video, dts: 0)
        for index in 1...5 {
            out += interleaver.push("a\(index)", track: .audio, dts: Int64(index) * 21_333)
        }
        // The video stopped after its first frame: audio waits until it is itself a
        // window past its oldest held frame.
        #expect(Self.names(out) == ["v0"])
        out = interleaver.push("a6", track: .audio, dts: 6 * 21_333)
        #expect(Self.names(out) == ["a1"])
        #expect(interleaver.heldCount == 5)
    }

    @Test("an item later than what already went gets the last timestamp: timestamps never go back")
    func lateItemClamped() {
        var interleaver = FLVInterleaver<String>(tracks: [.audio, .video], windowMicros: 40_000)
        var out = interleaver.push("a0", track: .audio, dts: 0)
        out += interleaver.push("a50", track: .audio, dts: 50_000)
        out += interleaver.push("a100", track: .audio, dts: 100_000)
        #expect(Self.names(out) == ["a0", "a50"])
        // The video comes 80 ms behind what was sent.
        out = interleaver.push("v20", track: .video, dts: 20_000)
        #expect(Self.names(out) == ["v20"])
        #expect(out.first?.timestamp == 50)
        let all = interleaver.flush()
        #expect(all.map(\.timestamp) == [100])
    }

    @Test("with one track, items pass at once")
    func singleTrack() {
        var interleaver = FLVInterleaver<String>(tracks: [.audio])
        let out = interleaver.push("a", track: .audio, dts: 5_000) + interleaver.push("b", track: .audio, dts: 26_333)
        #expect(Self.names(out) == ["a", "b"])
        #expect(out.map(\.timestamp) == [0, 21])
    }

    @Test("a dropped frame's time still lets the other track go; discard empties a track")
    func advanceAndDiscard() {
        var interleaver = FLVInterleaver<String>(tracks: [.audio, .video], windowMicros: 1_000_000)
        var out = interleaver.push("a0", track: .audio, dts: 0)
        out += interleaver.push("a21", track: .audio, dts: 21_333)
        #expect(out.isEmpty)
        out = interleaver.advance(.video, to: 33_333)
        #expect(Self.names(out) == ["a0", "a21"])
        _ = interleaver.push("v66", track: .video, dts: 66_666)
        _ = interleaver.push("v100", track: .video, dts: 100_000)
        #expect(interleaver.discard(.video) == ["v66", "v100"])
        #expect(interleaver.heldCount == 0)
    }

    @Test("the AAC sequence header and raw frames: format 10, 44 kHz, 16-bit, stereo, as FLV fixes them for AAC")
    func aacTags() throws {
        let config: [UInt8] = [0x11, 0x90]  // AAC LC, 48000 Hz, 2 channels
        let header = FLVAudioTag(aacPacketType: .sequenceHeader, data: config).payload
        #expect(header == [0xAF, 0x00, 0x11, 0x90])
        let raw = FLVAudioTag(aacPacketType: .raw, data: [1, 2, 3]).payload
        #expect(raw == [0xAF, 0x01, 1, 2, 3])
        let parsed = try FLVAudioTag(parsing: header)
        #expect(parsed.isSequenceHeader)
        let asc = try AACAudioSpecificConfig(parsing: parsed.data)
        #expect(asc == AACAudioSpecificConfig(audioObjectType: 2, sampleRate: 48000, channelConfiguration: 2))
    }

    @Test("onMetaData: the AAC keys beside the video's, and an audio-only stream without any video key")
    func metadata() throws {
        var both = RTMPStreamMetadata(width: 1280, height: 720, framerate: 30, videoDataRateKbps: 2500)
        both.setAudio(sampleRate: 48000, channelCount: 2, dataRateKbps: 96)
        #expect(both.audioCodecID == 10)
        #expect(both.audioSampleRate == 48000)
        #expect(both.object["audiosamplesize"]?.numberValue == 16)
        #expect(both.stereo == true)
        #expect(both.audioDataRate == 96)
        #expect(both.hasAudio == true && both.hasVideo == true)
        #expect(both.videoCodecID == 7)

        let audioOnly = RTMPStreamMetadata(audioSampleRate: 44100, channelCount: 1, audioDataRateKbps: 64)
        #expect(audioOnly.hasVideo == false && audioOnly.hasAudio == true)
        #expect(audioOnly.stereo == false)
        #expect(audioOnly.audioSampleRate == 44100)
        for key in ["videocodecid", "width", "height", "framerate", "videodatarate"] {
            #expect(audioOnly.object[key] == nil, "\(key) in an audio-only stream")
        }
        // Through the wire format and back.
        let message = RTMPMessage.data(.setDataFrame(handler: "onMetaData", metadata: audioOnly))
        let decoded = try RTMPMessage(decoding: try message.raw(timestamp: 0, messageStreamID: 1))
        #expect(decoded == message)
    }
}
