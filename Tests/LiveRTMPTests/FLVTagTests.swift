import LiveCodec
import Testing
@testable import LiveRTMP

@Suite("FLV video and audio tag bodies (FLV spec v10.1 §E.4)")
struct FLVTagTests {
    static let sps: [UInt8] = [0x67, 0x42, 0xC0, 0x1E, 0xDA, 0x01, 0x40, 0x16, 0xE8]
    static let pps: [UInt8] = [0x68, 0xCE, 0x0F, 0xC8]
    static let idr: [UInt8] = [0x65, 0x88, 0x84, 0x00, 0x33]
    static let extradata = [0, 0, 0, 1] + sps + [0, 0, 0, 1] + pps

    @Test("the sequence header carries the AVCDecoderConfigurationRecord and parses back")
    func sequenceHeader() throws {
        let payload = try FLVVideoTag.sequenceHeaderPayload(fromAnnexB: Self.extradata)
        #expect(Array(payload.prefix(5)) == [0x17, 0x00, 0, 0, 0])
        #expect(Array(payload[5..<11]) == [0x01, 0x42, 0xC0, 0x1E, 0xFF, 0xE1])
        let tag = try FLVVideoTag(parsing: payload)
        #expect(tag.isSequenceHeader && tag.isKeyframe)
        let configuration = try tag.decoderConfiguration()
        #expect(configuration.sps == [Self.sps])
        #expect(configuration.pps == [Self.pps])
        #expect(configuration.lengthSize == 4)
    }

    @Test("an Annex B access unit becomes AVCC after the 5-byte header and back", arguments: [0, 66, -33, 0x7F_FFFF, -0x80_0000])
    func nalUnits(compositionTime: Int32) throws {
        let accessUnit = [0, 0, 0, 1, 0x09, 0xF0] + [0, 0, 0, 1] + Self.sps + [0, 0, 1] + Self.pps + [0, 0, 0, 1] + Self.idr
        let payload = FLVVideoTag.nalUnitsPayload(fromAnnexB: accessUnit, keyframe: true, compositionTime: compositionTime)
        #expect(payload[0] == 0x17)
        #expect(payload[1] == 0x01)
        #expect(Array(payload[5...]) == [0, 0, 0, 5] + Self.idr)  // AUD and parameter sets left out
        let tag = try FLVVideoTag(parsing: payload)
        #expect(tag.compositionTime == compositionTime)
        #expect(tag.isKeyframe)
        #expect(try tag.annexB(lengthSize: 4) == [0, 0, 0, 1] + Self.idr)
        #expect(tag.payload == payload)
    }

    @Test("composition time is signed 24-bit: FF FF DF is −33")
    func negativeCompositionTime() throws {
        let tag = try FLVVideoTag(parsing: [0x27, 0x01, 0xFF, 0xFF, 0xDF, 0, 0, 0, 1, 0x41])
        #expect(tag.compositionTime == -33)
        #expect(tag.frameType == .interframe)
        #expect(!tag.isKeyframe)
    }

    @Test("end of sequence and other codecs parse; malformed payloads are errors")
    func others() throws {
        #expect(try FLVVideoTag(parsing: FLVVideoTag.endOfSequencePayload).avcPacketType == .endOfSequence)
        let vp6 = try FLVVideoTag(parsing: [0x24, 1, 2])
        #expect(vp6.codecID == 4 && vp6.data == [1, 2] && vp6.avcPacketType == nil)
        #expect(throws: FLVVideoTag.Error.empty) { try FLVVideoTag(parsing: []) }
        #expect(throws: FLVVideoTag.Error.truncatedAVCHeader(length: 3)) { try FLVVideoTag(parsing: [0x17, 1, 0]) }
        #expect(throws: FLVVideoTag.Error.invalidFrameType(0)) { try FLVVideoTag(parsing: [0x07, 1, 0, 0, 0]) }
        #expect(throws: FLVVideoTag.Error.invalidAVCPacketType(3)) { try FLVVideoTag(parsing: [0x17, 3, 0, 0, 0]) }
        let truncatedNAL = try FLVVideoTag(parsing: [0x27, 1, 0, 0, 0, 0, 0, 0, 9, 0x41])
        #expect(throws: H264Bitstream.Error.truncatedLengthPrefixed(offset: 0)) { try truncatedNAL.annexB(lengthSize: 4) }
        #expect(throws: FLVVideoTag.Error.wrongPacketType(expected: .sequenceHeader, actual: .nalUnits)) {
            try truncatedNAL.decoderConfiguration()
        }
    }

    @Test("AAC audio tags as ffmpeg sends them: AF 00 + AudioSpecificConfig, AF 01 + raw frame")
    func aac() throws {
        let header = try FLVAudioTag(parsing: [0xAF, 0x00, 0x12, 0x10])
        #expect(header.isSequenceHeader && header.stereo && header.soundRate == 3)
        let config = try AACAudioSpecificConfig(parsing: header.data)
        #expect(config == AACAudioSpecificConfig(audioObjectType: 2, sampleRate: 44100, channelConfiguration: 2))
        let frame = try FLVAudioTag(parsing: [0xAF, 0x01, 0x21, 0x10])
        #expect(frame.aacPacketType == .raw && frame.data == [0x21, 0x10])
        #expect(frame.payload == [0xAF, 0x01, 0x21, 0x10])
        #expect(throws: FLVAudioTag.Error.truncatedAACHeader) { try FLVAudioTag(parsing: [0xAF]) }
        #expect(throws: AACAudioSpecificConfig.Error.truncated) { try AACAudioSpecificConfig(parsing: [0x12]) }
        let mp3 = try FLVAudioTag(parsing: [0x2E, 9])
        #expect(mp3.soundFormat == 2 && mp3.aacPacketType == nil && !mp3.stereo)
    }
}
