import Testing
@testable import LiveRTMP

@Suite("RTMPChunkDecoder budgets: what a hostile peer can make one connection hold")
struct RTMPChunkDecoderBudgetTests {
    /// A format-0 chunk header on `csid` (2…63) for a message of `length` bytes.
    func header(csid: UInt8, length: Int, typeID: UInt8 = 9) -> [UInt8] {
        [csid, 0, 0, 0, UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF), typeID, 1, 0, 0, 0]
    }

    /// Set Chunk Size to `size`.
    func setChunkSize(_ size: UInt32) -> [UInt8] {
        [0x02, 0, 0, 0, 0, 0, 4, 1, 0, 0, 0, 0] + be32(size)
    }

    @Test("the attack of 1 MB parked on each of many chunk streams ends at the unfinished-bytes budget")
    func parkedPartialsHitTheBudget() throws {
        var decoder = RTMPChunkDecoder(maxUnfinishedBytes: 1 << 20)
        decoder.feed(setChunkSize(65536))
        _ = try decoder.nextMessage()
        // The first 64 KiB chunk of a 1 MB video message on each of 60 chunk streams;
        // the rest never comes. 15 fit the budget, the 16th does not.
        for csid in UInt8(3)..<UInt8(18) {
            decoder.feed(header(csid: csid, length: 1 << 20) + [UInt8](repeating: 0x17, count: 65536))
            #expect(try decoder.nextMessage() == nil)
            #expect(decoder.unfinishedByteCount <= 1 << 20)
        }
        for csid in UInt8(18)..<UInt8(63) {
            decoder.feed(header(csid: csid, length: 1 << 20) + [UInt8](repeating: 0x17, count: 65536))
        }
        #expect(throws: RTMPChunkDecoder.Error.unfinishedBytesExceeded(limit: 1 << 20)) { try decoder.nextMessage() }
    }

    @Test("a partial payload holds the bytes that arrived, not the length its header claims")
    func partialGrowsWithBytes() throws {
        var decoder = RTMPChunkDecoder()
        decoder.feed(header(csid: 4, length: 0xFF_FFFF) + ramp(128))
        #expect(try decoder.nextMessage() == nil)
        #expect(decoder.unfinishedPayloadBytes == 128)
        decoder.feed([0xC4] + ramp(128))
        #expect(try decoder.nextMessage() == nil)
        #expect(decoder.unfinishedPayloadBytes == 256)
    }

    @Test("reservations are given back when a message completes, is aborted or replaced by a new header")
    func reservationsReturn() throws {
        var decoder = RTMPChunkDecoder()
        decoder.feed(header(csid: 4, length: 200) + ramp(128) + [0xC4] + ramp(72, from: 128))
        #expect(try decoder.nextMessage()?.payload == ramp(200))
        #expect(decoder.unfinishedPayloadBytes == 0)
        // Abort.
        decoder.feed(header(csid: 4, length: 200) + ramp(128))
        #expect(try decoder.nextMessage() == nil)
        #expect(decoder.unfinishedPayloadBytes == 128)
        decoder.feed([0x02, 0, 0, 0, 0, 0, 4, 2, 0, 0, 0, 0] + be32(4))
        #expect(try decoder.nextMessage()?.typeID == RTMPMessage.TypeID.abort)
        #expect(decoder.unfinishedPayloadBytes == 0)
        // A new format-0 header drops the partial message; only the new one's bytes stay.
        decoder.feed(header(csid: 4, length: 300) + ramp(128))
        #expect(try decoder.nextMessage() == nil)
        decoder.feed(header(csid: 4, length: 400) + ramp(100))
        #expect(try decoder.nextMessage() == nil)
        #expect(decoder.unfinishedPayloadBytes == 128)  // the new chunk is not complete: nothing changed yet
        decoder.feed(ramp(28))
        #expect(try decoder.nextMessage() == nil)
        #expect(decoder.unfinishedPayloadBytes == 128)
    }

    @Test("undecoded bytes count too: one huge chunk cannot wait in the input buffer past the budget")
    func undecodedBytesCount() throws {
        var decoder = RTMPChunkDecoder(maxUnfinishedBytes: 1 << 20)
        decoder.feed(setChunkSize(0x7FFF_FFFF))
        _ = try decoder.nextMessage()
        decoder.feed(header(csid: 4, length: 8 << 20) + [UInt8](repeating: 0, count: (1 << 20) + 1))
        #expect(throws: RTMPChunkDecoder.Error.unfinishedBytesExceeded(limit: 1 << 20)) { try decoder.nextMessage() }
    }

    @Test("more than 64 chunk streams by default is an error")
    func chunkStreamLimit() throws {
        var decoder = RTMPChunkDecoder()
        var bytes: [UInt8] = []
        for csid in 0..<65 {
            // 2-byte basic headers: chunk stream ids 64…128, each a 1-byte message.
            bytes += [0x00, UInt8(csid), 0, 0, 0, 0, 0, 1, 8, 1, 0, 0, 0, 0xAF]
        }
        decoder.feed(bytes)
        #expect(throws: RTMPChunkDecoder.Error.tooManyChunkStreams(limit: 64)) {
            while try decoder.nextMessage() != nil {}
        }
    }

    @Test("command, data and control messages over 64 KiB are refused on their header, before any payload",
          arguments: [UInt8(20), 18, 17, 15, 1, 4, 19])
    func nonMediaLimit(typeID: UInt8) throws {
        var decoder = RTMPChunkDecoder()
        decoder.feed(header(csid: 3, length: (64 << 10) + 1, typeID: typeID))
        #expect(throws: RTMPChunkDecoder.Error.nonMediaMessageTooLong(typeID: typeID, length: (64 << 10) + 1, limit: 64 << 10)) {
            try decoder.nextMessage()
        }
        // Media of that length is fine.
        var media = RTMPChunkDecoder()
        media.feed(header(csid: 3, length: (64 << 10) + 1, typeID: 9))
        #expect(try media.nextMessage() == nil)
    }
}

@Suite("RTMPChunkDecoder input buffer")
struct RTMPChunkDecoderInputTests {
    @Test("a huge chunk's input memory is given back once it is decoded, not kept for the connection's life")
    func burstCapacityReturns() throws {
        var decoder = RTMPChunkDecoder()
        decoder.feed([0x02, 0, 0, 0, 0, 0, 4, 1, 0, 0, 0, 0] + be32(4 << 20))
        _ = try decoder.nextMessage()
        decoder.feed([0x04, 0, 0, 0, 0x40, 0, 0, 9, 1, 0, 0, 0] + [UInt8](repeating: 0x27, count: 4 << 20))
        #expect(try decoder.nextMessage()?.payload.count == 4 << 20)
        #expect(decoder.inputCapacity >= 4 << 20)
        decoder.feed([0x02, 0, 0, 0, 0, 0, 4, 5, 0, 0, 0, 0] + be32(2_500_000))
        #expect(try decoder.nextMessage()?.typeID == RTMPMessage.TypeID.windowAcknowledgementSize)
        #expect(decoder.inputCapacity <= RTMPChunkDecoder.retainedBufferCapacity)
    }
}
