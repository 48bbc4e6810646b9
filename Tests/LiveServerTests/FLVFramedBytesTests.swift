import LiveNet
import Testing
@testable import LiveRTMP
@testable import LiveServer

@Suite("FLVFramedBytes: one buffer per tag, framed for chunked HTTP, HTTP until close and WebSocket")
struct FLVFramedBytesTests {
    /// The bytes of `ranges` of `framed`'s buffer, one after the other.
    func bytes(_ framed: FLVFramedBytes, _ ranges: [Range<Int>]) -> [UInt8] {
        let all = framed.buffer.bytes
        return ranges.flatMap { Array(all[$0]) }
    }

    @Test("the FLV header: a chunk of 0000000D bytes, the body alone, one unmasked binary frame")
    func header() throws {
        let framed = FLVFramedBytes.header(hasAudio: true, hasVideo: false)
        let body = FLVTagWriter.header(hasAudio: true, hasVideo: false)
        #expect(bytes(framed, [framed.body]) == body)
        #expect(bytes(framed, framed.chunkRanges) == Array("0000000D\r\n".utf8) + body + [0x0D, 0x0A])
        var decoder = WebSocketFrameDecoder(requireMask: false)
        decoder.append(bytes(framed, [framed.webSocketFrame]))
        #expect(try decoder.next() == WebSocketFrame(opcode: .binary, payload: body))
        #expect(try decoder.next() == nil)
    }

    @Test("a tag of every WebSocket length form decodes to exactly the tag FLVTagWriter makes", arguments: [100, 200, 70_000])
    func tags(payloadSize: Int) throws {
        let payload = (0..<payloadSize).map { UInt8($0 % 253) }
        let raw = RTMPRawMessage(chunkStreamID: 6, typeID: FLVTagWriter.TagType.video, messageStreamID: 1, timestamp: 0x0123_4567, payload: payload)
        let framed = try #require(FLVFramedBytes.tag(raw))
        let tag = try #require(FLVTagWriter.tag(type: 9, timestamp: 0x0123_4567, payload: payload))
        #expect(bytes(framed, [framed.body]) == tag)
        var decoder = WebSocketFrameDecoder(requireMask: false, maxPayload: 1 << 20)
        decoder.append(bytes(framed, [framed.webSocketFrame]))
        #expect(try decoder.next() == WebSocketFrame(opcode: .binary, payload: tag))
        let chunked = bytes(framed, framed.chunkRanges)
        #expect(chunked.prefix(10) == ArraySlice(Array((FLVFramedBytes.hex8(tag.count) + "\r\n").utf8)))
        #expect(Int(String(decoding: chunked.prefix(8), as: UTF8.self), radix: 16) == tag.count)
        #expect(Array(chunked.dropFirst(10)) == tag + [0x0D, 0x0A])
    }

    @Test("only audio, video and AMF0 data become tags")
    func otherTypes() {
        for typeID: UInt8 in [1, 4, 15, 17, 20] {
            #expect(FLVFramedBytes.tag(RTMPRawMessage(chunkStreamID: 3, typeID: typeID, messageStreamID: 1, timestamp: 0, payload: [1, 2])) == nil)
        }
    }

    @Test("a message framed once is shared while a queue holds it, and framed again once nobody does")
    func sharedWhileHeld() throws {
        var scratch: [UInt8] = []
        let raw = RTMPRawMessage(chunkStreamID: 6, typeID: 8, messageStreamID: 1, timestamp: 40, payload: [0xAF, 1, 2, 3])
        let message = try RelayMessage(kind: .audio, raw: raw, chunkSize: 4096, scratch: &scratch)
        var held = message.flvFramed
        #expect(held != nil)
        #expect(message.flvFramed?.buffer === held?.buffer)
        held = nil
        #expect(message.flvCache.withLock { $0.buffer } == nil)
        #expect(message.flvFramed.map { bytes($0, [$0.body]) } == FLVTagWriter.tag(type: 8, timestamp: 40, payload: [0xAF, 1, 2, 3]))
    }

    @Test("the header announces the tracks the replay holds, both before any media")
    func tracks() throws {
        var scratch: [UInt8] = []
        func message(_ kind: RelayMessage.Kind, _ typeID: UInt8) throws -> RelayMessage {
            try RelayMessage(kind: kind, raw: RTMPRawMessage(chunkStreamID: 6, typeID: typeID, messageStreamID: 1, timestamp: 0,
                                                             payload: [0]), chunkSize: 4096, scratch: &scratch)
        }
        #expect(FLVRelayPlayer.tracks(in: []) == (true, true))
        #expect(FLVRelayPlayer.tracks(in: [try message(.metadata, 18)]) == (true, true))
        #expect(FLVRelayPlayer.tracks(in: [try message(.audioHeader, 8), try message(.audio, 8)]) == (true, false))
        #expect(FLVRelayPlayer.tracks(in: [try message(.videoHeader, 9), try message(.keyframe, 9)]) == (false, true))
    }

    @Test("the FLV viewers' paths check their own play token; others keep the API's")
    func ownTokenPaths() {
        #expect(FLVHTTPAPI.checksOwnToken("/live/cam.flv"))
        #expect(FLVHTTPAPI.checksOwnToken("/ws/live/cam"))
        #expect(!FLVHTTPAPI.checksOwnToken("/api/streams"))
        #expect(!FLVHTTPAPI.checksOwnToken("/live/.flv"))
        #expect(!FLVHTTPAPI.checksOwnToken("/a/b/c.flv"))
        #expect(!FLVHTTPAPI.checksOwnToken("/ws/live"))
        #expect(!FLVHTTPAPI.checksOwnToken("/api/live/room/members"))
    }
}
