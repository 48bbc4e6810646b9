import Testing
@testable import LiveRTMP

@Suite("FLV tag writer")
struct FLVTagWriterTests {
    @Test("the header names FLV version 1 with the tracks it carries, then PreviousTagSize0")
    func header() {
        #expect(FLVTagWriter.header(hasAudio: true, hasVideo: true) == [0x46, 0x4C, 0x56, 1, 5, 0, 0, 0, 9, 0, 0, 0, 0])
        #expect(FLVTagWriter.header(hasAudio: true, hasVideo: false)[4] == 4)
        #expect(FLVTagWriter.header(hasAudio: false, hasVideo: true)[4] == 1)
    }

    @Test("a tag: type, 24-bit size, timestamp with its extended byte, stream id 0, payload, then its whole size")
    func tag() throws {
        let bytes = try #require(FLVTagWriter.tag(type: FLVTagWriter.TagType.video, timestamp: 0x0123_4567, payload: [0xAA, 0xBB, 0xCC]))
        #expect(bytes == [9, 0, 0, 3, 0x23, 0x45, 0x67, 0x01, 0, 0, 0, 0xAA, 0xBB, 0xCC, 0, 0, 0, 14])
    }

    @Test("a payload past 16 MiB − 1 is refused and nothing is written")
    func tooLarge() {
        var bytes: [UInt8] = [1, 2]
        let big = [UInt8](repeating: 0, count: FLVTagWriter.maxPayloadSize + 1)
        #expect(!FLVTagWriter.appendTag(type: FLVTagWriter.TagType.audio, timestamp: 0, payload: big, to: &bytes))
        #expect(bytes == [1, 2])
        #expect(FLVTagWriter.tag(type: 8, timestamp: 0, payload: big) == nil)
    }
}
