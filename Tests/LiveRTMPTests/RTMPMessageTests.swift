import Testing
@testable import LiveRTMP

@Suite("RTMPMessage: typed bodies to and from raw messages")
struct RTMPMessageTests {
    static let bodies: [RTMPMessage] = [
        .setChunkSize(4096), .abort(chunkStreamID: 4), .acknowledgement(sequenceNumber: 0xDEAD_BEEF),
        .userControl(.streamBegin(streamID: 1)), .userControl(.streamEOF(streamID: 1)), .userControl(.streamDry(streamID: 2)),
        .userControl(.setBufferLength(streamID: 1, milliseconds: 3000)), .userControl(.streamIsRecorded(streamID: 1)),
        .userControl(.pingRequest(timestamp: 123)), .userControl(.pingResponse(timestamp: 123)),
        .userControl(.other(eventType: 0x1A, data: [1])),
        .windowAcknowledgementSize(2_500_000), .setPeerBandwidth(size: 2_500_000, limit: .dynamic),
        .audio([0xAF, 0x01, 0x21]), .video([0x17, 0x01, 0, 0, 0, 0, 0, 0, 1, 0x65]),
        .data(.setDataFrame(handler: "onMetaData", metadata: RTMPStreamMetadata(width: 1280, height: 720, framerate: 30,
                                                                                videoDataRateKbps: 2500))),
        .data(.onMetaData(RTMPStreamMetadata(["width": 640]))),
        .command(.createStream(transactionID: 4)),
        .other(typeID: 19, payload: [1, 2, 3]),
    ]

    @Test("every body round-trips through a raw message", arguments: 0..<bodies.count)
    func roundTrip(index: Int) throws {
        let body = Self.bodies[index]
        let raw = try body.raw(timestamp: 40, messageStreamID: 1)
        #expect(raw.typeID == body.typeID)
        #expect(try RTMPMessage(decoding: raw) == body)
    }

    @Test("protocol control bodies have their spec bytes")
    func controlBytes() throws {
        #expect(try RTMPMessage.setChunkSize(4096).payload() == [0, 0, 0x10, 0])
        #expect(try RTMPMessage.setPeerBandwidth(size: 5_000_000, limit: .dynamic).payload() == [0x00, 0x4C, 0x4B, 0x40, 2])
        #expect(try RTMPMessage.userControl(.setBufferLength(streamID: 1, milliseconds: 3000)).payload()
            == [0, 3, 0, 0, 0, 1, 0, 0, 0x0B, 0xB8])
        #expect(try RTMPMessage.userControl(.pingRequest(timestamp: 5)).payload() == [0, 6, 0, 0, 0, 5])
        #expect(RTMPMessage.setChunkSize(1).defaultChunkStreamID == 2)
    }

    @Test("short control payloads are errors")
    func truncated() throws {
        let raw = RTMPRawMessage(chunkStreamID: 2, typeID: 3, messageStreamID: 0, timestamp: 0, payload: [0, 1])
        #expect(throws: RTMPMessage.Error.truncated(typeID: 3, length: 2)) { try RTMPMessage(decoding: raw) }
        let ping = RTMPRawMessage(chunkStreamID: 2, typeID: 4, messageStreamID: 0, timestamp: 0, payload: [0, 6, 1])
        #expect(throws: RTMPUserControlEvent.Error.truncated(eventType: 6, length: 3)) { try RTMPMessage(decoding: ping) }
    }

    @Test("an aggregate splits into its FLV-tag sub-messages with rebased timestamps")
    func aggregate() throws {
        func tag(_ type: UInt8, _ ts: UInt32, _ body: [UInt8]) -> [UInt8] {
            let size = body.count
            return [type, UInt8(size >> 16), UInt8((size >> 8) & 0xFF), UInt8(size & 0xFF),
                    UInt8((ts >> 16) & 0xFF), UInt8((ts >> 8) & 0xFF), UInt8(ts & 0xFF), UInt8(ts >> 24), 0, 0, 0]
                + body + be32(UInt32(11 + size))
        }
        let payload = tag(9, 5000, [0x17, 1]) + tag(8, 5020, [0xAF, 1, 7]) + tag(9, 5040, [0x27, 1])
        let raw = RTMPRawMessage(chunkStreamID: 4, typeID: 22, messageStreamID: 1, timestamp: 100, payload: payload)
        let parts = try #require({ if case .aggregate(let p) = try RTMPMessage(decoding: raw) { return p } else { return nil } }())
        #expect(parts == [
            RTMPRawMessage(chunkStreamID: 4, typeID: 9, messageStreamID: 1, timestamp: 100, payload: [0x17, 1]),
            RTMPRawMessage(chunkStreamID: 4, typeID: 8, messageStreamID: 1, timestamp: 120, payload: [0xAF, 1, 7]),
            RTMPRawMessage(chunkStreamID: 4, typeID: 9, messageStreamID: 1, timestamp: 140, payload: [0x27, 1]),
        ])
        let broken = RTMPRawMessage(chunkStreamID: 4, typeID: 22, messageStreamID: 1, timestamp: 0, payload: Array(payload.prefix(12)))
        #expect(throws: RTMPMessage.Error.malformedAggregate(offset: 0)) { try RTMPMessage(decoding: broken) }
        // 4097 empty tags (61 KiB) would be 4097 messages to relay.
        let many = [UInt8]((0..<4097).map { _ in tag(9, 0, []) }.joined())
        let flood = RTMPRawMessage(chunkStreamID: 4, typeID: 22, messageStreamID: 1, timestamp: 0, payload: many)
        #expect(throws: RTMPMessage.Error.aggregateTooLarge(limit: 4096)) { try RTMPMessage(decoding: flood) }
        let fine = RTMPRawMessage(chunkStreamID: 4, typeID: 22, messageStreamID: 1, timestamp: 0, payload: Array(many.dropLast(15)))
        #expect(throws: Never.self) { try RTMPMessage(decoding: fine) }
    }
}
