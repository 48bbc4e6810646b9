import Testing
@testable import LiveRTMP

@Suite("RTMPChunkEncoder")
struct RTMPChunkEncoderTests {
    func video(_ ts: UInt32, _ length: Int, csid: UInt32 = 7, stream: UInt32 = 1, type: UInt8 = 9) -> RTMPRawMessage {
        RTMPRawMessage(chunkStreamID: csid, typeID: type, messageStreamID: stream, timestamp: ts,
                       payload: ramp(length, from: Int(ts)))
    }

    @Test("headers compress to formats 1, 2 and 3 when fields repeat, with the exact bytes")
    func compression() throws {
        var encoder = RTMPChunkEncoder()
        let first = try encoder.encode(video(0, 10))
        #expect(Array(first.prefix(12)) == [0x07, 0, 0, 0, 0, 0, 10, 9, 1, 0, 0, 0])
        let second = try encoder.encode(video(33, 10))
        #expect(Array(second.prefix(4)) == [0x87, 0, 0, 33])  // fmt 2: after fmt 0 never fmt 3
        let third = try encoder.encode(video(66, 10))
        #expect(third.first == 0xC7)  // fmt 3: same length, type and delta
        #expect(third.count == 11)
        let fourth = try encoder.encode(video(99, 12))
        #expect(Array(fourth.prefix(8)) == [0x47, 0, 0, 33, 0, 0, 12, 9])  // fmt 1: new length
        let backwards = try encoder.encode(video(50, 12))
        #expect(backwards.first == 0x07)  // timestamps going back need fmt 0
        let otherStream = try encoder.encode(video(60, 12, stream: 2))
        #expect(otherStream.first == 0x07)
    }

    @Test("messages split at the chunk size round-trip through the decoder, fed at every offset")
    func roundTrip() throws {
        var encoder = RTMPChunkEncoder(chunkSize: 60)
        let messages = [
            video(0, 150), RTMPRawMessage(chunkStreamID: 6, typeID: 8, messageStreamID: 1, timestamp: 5, payload: ramp(7)),
            video(33, 150), video(66, 150), video(100, 0), video(0x0100_0000, 130), video(0x0100_0021, 130),
            video(0x0100_0042, 130), RTMPRawMessage(chunkStreamID: 300, typeID: 18, messageStreamID: 1, timestamp: 9, payload: ramp(61)),
            RTMPRawMessage(chunkStreamID: 70, typeID: 20, messageStreamID: 0, timestamp: 0, payload: ramp(3)),
        ]
        var bytes = try encoder.encode(.init(chunkStreamID: 2, typeID: 1, messageStreamID: 0, timestamp: 0, payload: be32(60)))
        var expected = [RTMPRawMessage(chunkStreamID: 2, typeID: 1, messageStreamID: 0, timestamp: 0, payload: be32(60))]
        // The decoder starts at 128: the Set Chunk Size goes out at 128, the rest at 60.
        var starting = RTMPChunkEncoder()
        bytes = try starting.encode(expected[0])
        for message in messages { try encoder.append(message, to: &bytes) }
        expected += messages
        for (index, result) in try decodeAtEverySplit(bytes).enumerated() {
            #expect(result == expected, "variant \(index)")
        }
    }

    @Test("extended timestamps repeat on every continuation chunk")
    func extendedContinuation() throws {
        var encoder = RTMPChunkEncoder(chunkSize: 128)
        let bytes = try encoder.encode(video(0x0123_4567, 200, csid: 5))
        let expected: [UInt8] = [0x05, 0xFF, 0xFF, 0xFF, 0, 0, 200, 9, 1, 0, 0, 0, 0x01, 0x23, 0x45, 0x67]
        #expect(Array(bytes.prefix(16)) == expected)
        #expect(Array(bytes[(16 + 128)..<(16 + 128 + 5)]) == [0xC5, 0x01, 0x23, 0x45, 0x67])
        #expect(bytes.count == 16 + 200 + 5)
    }

    @Test("a self-contained encoding is the same bytes as a fresh encoder's and decodes on its own")
    func selfContained() throws {
        let message = video(1234, 300)
        var shared: [UInt8] = []
        try RTMPChunkEncoder.appendSelfContained(message, chunkSize: 128, to: &shared)
        var fresh = RTMPChunkEncoder(chunkSize: 128)
        #expect(shared == (try fresh.encode(message)))
        #expect(try decodeMessages([shared[...]]) == [message])
    }

    @Test("invalid chunk stream ids and chunk sizes are refused")
    func errors() throws {
        var encoder = RTMPChunkEncoder()
        #expect(throws: RTMPChunkEncoder.Error.invalidChunkStreamID(1)) { try encoder.encode(video(0, 1, csid: 1)) }
        #expect(throws: RTMPChunkEncoder.Error.invalidChunkSize(0)) { try encoder.setChunkSize(0) }
    }
}
