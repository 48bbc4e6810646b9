import Testing
@testable import LiveRTMP

@Suite("RTMPChunkDecoder byte fixtures (RTMP 1.0 §5.3), each fed whole, split at every offset and byte by byte")
struct RTMPChunkDecoderTests {
    func expectEverySplit(_ bytes: [UInt8], gives expected: [RTMPRawMessage]) throws {
        let results = try decodeAtEverySplit(bytes)
        #expect(results.count == bytes.count + 3)
        for (index, messages) in results.enumerated() {
            #expect(messages == expected, "feeding variant \(index)")
        }
    }

    @Test("formats 0, 1, 2 and 3 on one chunk stream, and a two-chunk message")
    func allFormats() throws {
        var bytes: [UInt8] = []
        bytes += [0x03, 0x00, 0x03, 0xE8, 0x00, 0x00, 0x0A, 0x14, 0x00, 0x00, 0x00, 0x00] + ramp(10)  // fmt 0, ts 1000
        bytes += [0x43, 0x00, 0x00, 0x14, 0x00, 0x00, 0x05, 0x12] + ramp(5, from: 20)  // fmt 1, delta 20
        bytes += [0x83, 0x00, 0x00, 0x1E] + ramp(5, from: 30)  // fmt 2, delta 30
        bytes += [0xC3] + ramp(5, from: 40)  // fmt 3: a new message, same delta
        bytes += [0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0xC8, 0x09, 0x01, 0x00, 0x00, 0x00] + ramp(128)  // 200 bytes on csid 4
        bytes += [0xC4] + ramp(72, from: 128)
        try expectEverySplit(bytes, gives: [
            RTMPRawMessage(chunkStreamID: 3, typeID: 20, messageStreamID: 0, timestamp: 1000, payload: ramp(10)),
            RTMPRawMessage(chunkStreamID: 3, typeID: 18, messageStreamID: 0, timestamp: 1020, payload: ramp(5, from: 20)),
            RTMPRawMessage(chunkStreamID: 3, typeID: 18, messageStreamID: 0, timestamp: 1050, payload: ramp(5, from: 30)),
            RTMPRawMessage(chunkStreamID: 3, typeID: 18, messageStreamID: 0, timestamp: 1080, payload: ramp(5, from: 40)),
            RTMPRawMessage(chunkStreamID: 4, typeID: 9, messageStreamID: 1, timestamp: 0, payload: ramp(200)),
        ])
    }

    @Test("2- and 3-byte basic headers (chunk stream ids 64…319 and 320…65599)")
    func longChunkStreamIDs() throws {
        var bytes: [UInt8] = []
        bytes += [0x00, 36, 0, 0, 5, 0, 0, 2, 8, 1, 0, 0, 0, 0xAA, 0xBB]  // csid 100
        bytes += [0x01, 0x50, 0x01, 0, 0, 6, 0, 0, 1, 9, 1, 0, 0, 0, 0xCC]  // csid 400
        bytes += [0x3F, 0, 0, 7, 0, 0, 1, 9, 1, 0, 0, 0, 0xDD]  // csid 63, the largest 1-byte form
        bytes += [0x01, 0xFF, 0xFF, 0, 0, 8, 0, 0, 1, 9, 1, 0, 0, 0, 0xEE]  // csid 65599
        try expectEverySplit(bytes, gives: [
            RTMPRawMessage(chunkStreamID: 100, typeID: 8, messageStreamID: 1, timestamp: 5, payload: [0xAA, 0xBB]),
            RTMPRawMessage(chunkStreamID: 400, typeID: 9, messageStreamID: 1, timestamp: 6, payload: [0xCC]),
            RTMPRawMessage(chunkStreamID: 63, typeID: 9, messageStreamID: 1, timestamp: 7, payload: [0xDD]),
            RTMPRawMessage(chunkStreamID: 65599, typeID: 9, messageStreamID: 1, timestamp: 8, payload: [0xEE]),
        ])
    }

    @Test("interleaved chunk streams: audio between the chunks of a video message")
    func interleaved() throws {
        var bytes: [UInt8] = []
        bytes += [0x07, 0x00, 0x00, 0x21, 0x00, 0x01, 0x2C, 0x09, 0x01, 0x00, 0x00, 0x00] + ramp(128)  // video 300 bytes
        bytes += [0x06, 0x00, 0x00, 0x17, 0x00, 0x00, 0x04, 0x08, 0x01, 0x00, 0x00, 0x00] + [0xAF, 0x01, 0x21, 0x00]  // audio
        bytes += [0xC7] + ramp(128, from: 128)
        bytes += [0x46, 0x00, 0x00, 0x17, 0x00, 0x00, 0x03, 0x08] + [0xAF, 0x01, 0x22]  // audio fmt 1
        bytes += [0xC7] + ramp(44, from: 256)
        try expectEverySplit(bytes, gives: [
            RTMPRawMessage(chunkStreamID: 6, typeID: 8, messageStreamID: 1, timestamp: 23, payload: [0xAF, 0x01, 0x21, 0x00]),
            RTMPRawMessage(chunkStreamID: 6, typeID: 8, messageStreamID: 1, timestamp: 46, payload: [0xAF, 0x01, 0x22]),
            RTMPRawMessage(chunkStreamID: 7, typeID: 9, messageStreamID: 1, timestamp: 33, payload: ramp(300)),
        ])
    }

    @Test("extended timestamps: fmt 0 with the 4-byte field repeated on its fmt-3 continuation (ffmpeg, nginx-rtmp)")
    func extendedTimestampRepeated() throws {
        let ts: UInt32 = 0x0100_0000
        var bytes: [UInt8] = []
        bytes += [0x05, 0xFF, 0xFF, 0xFF, 0x00, 0x00, 0xC8, 0x09, 0x01, 0x00, 0x00, 0x00] + be32(ts) + ramp(128)
        bytes += [0xC5] + be32(ts) + ramp(72, from: 128)
        // fmt 2 with an extended delta, then fmt 3 starting a new message with that delta.
        bytes += [0x85, 0xFF, 0xFF, 0xFF] + be32(0x0100_0000) + ramp(128)
        bytes += [0xC5] + be32(0x0100_0000) + ramp(72, from: 128)
        bytes += [0xC5] + be32(0x0100_0000) + ramp(128, from: 1)
        bytes += [0xC5] + be32(0x0100_0000) + ramp(72, from: 129)
        try expectEverySplit(bytes, gives: [
            RTMPRawMessage(chunkStreamID: 5, typeID: 9, messageStreamID: 1, timestamp: ts, payload: ramp(200)),
            RTMPRawMessage(chunkStreamID: 5, typeID: 9, messageStreamID: 1, timestamp: 0x0200_0000, payload: ramp(200)),
            RTMPRawMessage(chunkStreamID: 5, typeID: 9, messageStreamID: 1, timestamp: 0x0300_0000, payload: ramp(200, from: 1)),
        ])
    }

    @Test("extended timestamp not repeated on the fmt-3 continuation (some encoders) reads as payload")
    func extendedTimestampOmitted() throws {
        let ts: UInt32 = 0xFFFF_FFF0
        var bytes: [UInt8] = []
        bytes += [0x05, 0xFF, 0xFF, 0xFF, 0x00, 0x00, 0xC8, 0x09, 0x01, 0x00, 0x00, 0x00] + be32(ts) + ramp(128)
        bytes += [0xC5] + ramp(72, from: 128)
        try expectEverySplit(bytes, gives: [
            RTMPRawMessage(chunkStreamID: 5, typeID: 9, messageStreamID: 1, timestamp: ts, payload: ramp(200)),
        ])
    }

    @Test("timestamp 0xFFFFFF exactly uses the extended field")
    func extendedBoundary() throws {
        let bytes: [UInt8] = [0x04, 0xFF, 0xFF, 0xFF, 0x00, 0x00, 0x01, 0x08, 0x01, 0x00, 0x00, 0x00] + be32(0xFF_FFFF) + [0x42]
        try expectEverySplit(bytes, gives: [
            RTMPRawMessage(chunkStreamID: 4, typeID: 8, messageStreamID: 1, timestamp: 0xFF_FFFF, payload: [0x42]),
        ])
    }

    @Test("Set Chunk Size applies from the next chunk")
    func setChunkSizeMidStream() throws {
        var bytes: [UInt8] = []
        bytes += [0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0xC8, 0x09, 0x01, 0x00, 0x00, 0x00] + ramp(128)  // 200 bytes at 128
        bytes += [0xC4] + ramp(72, from: 128)
        bytes += [0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x01, 0x00, 0x00, 0x00, 0x00] + be32(256)
        bytes += [0x44, 0x00, 0x00, 0x21, 0x00, 0x01, 0x2C, 0x09] + ramp(256)  // 300 bytes at 256
        bytes += [0xC4] + ramp(44, from: 256)
        try expectEverySplit(bytes, gives: [
            RTMPRawMessage(chunkStreamID: 4, typeID: 9, messageStreamID: 1, timestamp: 0, payload: ramp(200)),
            RTMPRawMessage(chunkStreamID: 2, typeID: 1, messageStreamID: 0, timestamp: 0, payload: be32(256)),
            RTMPRawMessage(chunkStreamID: 4, typeID: 9, messageStreamID: 1, timestamp: 33, payload: ramp(300)),
        ])
    }

    @Test("Abort drops the partial message on its chunk stream")
    func abort() throws {
        var bytes: [UInt8] = []
        bytes += [0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0xC8, 0x09, 0x01, 0x00, 0x00, 0x00] + ramp(128)  // half of 200
        bytes += [0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x02, 0x00, 0x00, 0x00, 0x00] + be32(4)
        bytes += [0xC4] + ramp(128, from: 7)  // fmt 3 now starts a new 200-byte message
        bytes += [0xC4] + ramp(72, from: 135)
        try expectEverySplit(bytes, gives: [
            RTMPRawMessage(chunkStreamID: 2, typeID: 2, messageStreamID: 0, timestamp: 0, payload: be32(4)),
            RTMPRawMessage(chunkStreamID: 4, typeID: 9, messageStreamID: 1, timestamp: 0, payload: ramp(200, from: 7)),
        ])
    }

    @Test("acknowledgement falls due when the peer's window of bytes has arrived")
    func acknowledgement() throws {
        var decoder = RTMPChunkDecoder()
        #expect(decoder.acknowledgementDue == nil)
        decoder.feed([0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x05, 0x00, 0x00, 0x00, 0x00] + be32(100))
        let window = try #require(try decoder.nextMessage())
        #expect(window.typeID == 5)
        #expect(decoder.windowAcknowledgementSize == 100)
        #expect(decoder.acknowledgementDue == nil)  // 16 bytes so far
        decoder.feed([0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x64, 0x08, 0x01, 0x00, 0x00, 0x00] + ramp(100))
        #expect(decoder.bytesReceived == 128)
        #expect(decoder.acknowledgementDue == 128)
        decoder.acknowledgementSent()
        #expect(decoder.acknowledgementDue == nil)
    }

    @Test("malformed streams throw named errors")
    func errors() throws {
        #expect(throws: RTMPChunkDecoder.Error.missingPreviousHeader(chunkStreamID: 3, format: 1)) {
            try decodeMessages([[0x43, 0, 0, 0, 0, 0, 1, 20, 0][...]])
        }
        #expect(throws: RTMPChunkDecoder.Error.invalidChunkSize(0)) {
            try decodeMessages([([0x02, 0, 0, 0, 0, 0, 4, 1, 0, 0, 0, 0] + be32(0))[...]])
        }
        #expect(throws: RTMPChunkDecoder.Error.malformedControlMessage(typeID: 1, length: 2)) {
            try decodeMessages([[0x02, 0, 0, 0, 0, 0, 2, 1, 0, 0, 0, 0, 0, 1][...]])
        }
        var limited = RTMPChunkDecoder(maxMessageLength: 1000)
        limited.feed([0x04, 0, 0, 0, 0x00, 0x10, 0x00, 9, 1, 0, 0, 0])
        #expect(throws: RTMPChunkDecoder.Error.messageTooLong(length: 4096, limit: 1000)) { try limited.nextMessage() }
    }

    @Test("chunk sizes above 16 MiB act as the largest message; the reserved top bit is ignored")
    func hugeChunkSize() throws {
        var decoder = RTMPChunkDecoder()
        try decoder.setChunkSize(0xFFFF_FFFF)
        #expect(decoder.chunkSize == RTMPChunkDecoder.maxChunkSize)
        try decoder.setChunkSize(65536)
        #expect(decoder.chunkSize == 65536)
    }
}
