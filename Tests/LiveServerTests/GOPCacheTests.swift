import Testing
@testable import LiveRTMP
@testable import LiveServer

@Suite("GOPCache: headers and the messages since the last keyframe, capped")
struct GOPCacheTests {
    func message(_ kind: RelayMessage.Kind, at timestamp: UInt32, size: Int = 100) throws -> RelayMessage {
        let typeID: UInt8 = kind == .audio || kind == .audioHeader ? 8 : kind == .metadata ? 18 : 9
        var scratch: [UInt8] = []
        return try RelayMessage(kind: kind, raw: RTMPRawMessage(chunkStreamID: typeID == 8 ? 6 : 7, typeID: typeID, messageStreamID: 1,
                                                                  timestamp: timestamp, payload: [UInt8](repeating: 1, count: size)),
                                chunkSize: 4096, scratch: &scratch)
    }

    @Test("replay is metadata, video header, audio header, then the GOP from its keyframe")
    func replayOrder() throws {
        var cache = GOPCache()
        cache.add(try message(.audio, at: 0))  // before any keyframe: not cached
        cache.add(try message(.interframe, at: 0))
        cache.add(try message(.audioHeader, at: 0))
        cache.add(try message(.videoHeader, at: 0))
        cache.add(try message(.metadata, at: 0))
        #expect(!cache.hasKeyframe)
        #expect(cache.replay.map(\.kind) == [.metadata, .videoHeader, .audioHeader])
        cache.add(try message(.keyframe, at: 33))
        cache.add(try message(.audio, at: 40))
        cache.add(try message(.interframe, at: 66))
        #expect(cache.hasKeyframe)
        #expect(cache.replay.map(\.kind) == [.metadata, .videoHeader, .audioHeader, .keyframe, .audio, .interframe])
        // A new keyframe starts a new GOP.
        cache.add(try message(.keyframe, at: 1000))
        #expect(cache.messages.map(\.raw.timestamp) == [1000])
        #expect(cache.byteCount == 100)
        cache.reset()
        #expect(cache.replay.isEmpty)
    }

    @Test("a GOP over the byte, count or duration cap is dropped until the next keyframe; headers stay")
    func caps() throws {
        var bytes = GOPCache(limits: .init(maxBytes: 350, maxMessages: 100, maxDurationMilliseconds: 10_000))
        bytes.add(try message(.videoHeader, at: 0))
        for index in 0..<4 { bytes.add(try message(index == 0 ? .keyframe : .interframe, at: UInt32(index * 33))) }
        #expect(bytes.messages.isEmpty)
        #expect(bytes.overflowCount == 1)
        #expect(bytes.replay.map(\.kind) == [.videoHeader])
        bytes.add(try message(.interframe, at: 200))  // still waiting for a keyframe
        #expect(bytes.messages.isEmpty)
        bytes.add(try message(.keyframe, at: 233))
        #expect(bytes.messages.count == 1)

        var count = GOPCache(limits: .init(maxBytes: 1 << 20, maxMessages: 3, maxDurationMilliseconds: 10_000))
        for index in 0..<3 { count.add(try message(index == 0 ? .keyframe : .interframe, at: UInt32(index))) }
        #expect(count.messages.count == 3)
        count.add(try message(.interframe, at: 4))
        #expect(count.messages.isEmpty)

        var duration = GOPCache(limits: .init(maxBytes: 1 << 20, maxMessages: 100, maxDurationMilliseconds: 100))
        duration.add(try message(.keyframe, at: 1000))
        duration.add(try message(.interframe, at: 1100))
        #expect(duration.messages.count == 2)
        duration.add(try message(.interframe, at: 1101))
        #expect(duration.messages.isEmpty)

        var headersOnly = GOPCache(limits: .init(maxDurationMilliseconds: 0))
        headersOnly.add(try message(.videoHeader, at: 0))
        headersOnly.add(try message(.keyframe, at: 0))
        #expect(headersOnly.replay.map(\.kind) == [.videoHeader])
    }
}

@Suite("RelayMessage: kinds from the FLV header bytes, one self-contained encoding")
struct RelayMessageTests {
    @Test("video and audio payloads are classified by their first two bytes")
    func classify() {
        #expect(RelayMessage.Kind.classify(typeID: 9, payload: [0x17, 0x00, 0, 0, 0]) == .videoHeader)
        #expect(RelayMessage.Kind.classify(typeID: 9, payload: [0x17, 0x01, 0, 0, 0]) == .keyframe)
        #expect(RelayMessage.Kind.classify(typeID: 9, payload: [0x27, 0x01, 0, 0, 0]) == .interframe)
        #expect(RelayMessage.Kind.classify(typeID: 9, payload: [0x17, 0x02, 0, 0, 0]) == .keyframe)  // end of sequence
        #expect(RelayMessage.Kind.classify(typeID: 9, payload: []) == .interframe)
        #expect(RelayMessage.Kind.classify(typeID: 8, payload: [0xAF, 0x00, 0x12, 0x10]) == .audioHeader)
        #expect(RelayMessage.Kind.classify(typeID: 8, payload: [0xAF, 0x01, 0x21]) == .audio)
        #expect(RelayMessage.Kind.classify(typeID: 8, payload: [0x2F, 0x00]) == .audio)  // MP3 has no header
    }

    @Test("the shared encoding decodes back to the message on stream 1, at any split")
    func encoding() throws {
        var scratch: [UInt8] = []
        let payload = (0..<1000).map { UInt8($0 & 0xFF) }
        let raw = RTMPRawMessage(chunkStreamID: 7, typeID: 9, messageStreamID: 5, timestamp: 0x0100_0000, payload: payload)
        let message = try RelayMessage(kind: .keyframe, raw: raw, chunkSize: 128, scratch: &scratch)
        #expect(message.raw.messageStreamID == 1)
        var decoder = RTMPChunkDecoder()
        let bytes = message.encoded.bytes
        decoder.feed(bytes[..<500])
        #expect(try decoder.nextMessage() == nil)
        decoder.feed(bytes[500...])
        let decoded = try #require(try decoder.nextMessage())
        #expect(decoded.payload == payload)
        #expect(decoded.timestamp == 0x0100_0000)
        #expect(decoded.messageStreamID == 1)
    }
}

@Suite("StreamRegistry takeover rule")
struct TakeoverRuleTests {
    @Test("an authorised publisher or a silent live publisher allows a takeover; anything else is refused")
    func rule() {
        let quiet: UInt64 = 2_000_000
        // Auth on, the new publisher's token grants the name: at once, even while the old one sends.
        #expect(RelayStream.allowsTakeover(authorized: true, liveLastActivityMicros: 10_000_000,
                                           nowMicros: 10_000_001, quietMicros: quiet))
        // Not authorised while the live one is active: refused, whatever the queries were.
        #expect(!RelayStream.allowsTakeover(authorized: false, liveLastActivityMicros: 10_000_000,
                                            nowMicros: 11_999_999, quietMicros: quiet))
        // A dead but unnoticed connection: silent for longer than the quiet interval.
        #expect(RelayStream.allowsTakeover(authorized: false, liveLastActivityMicros: 10_000_000,
                                           nowMicros: 12_000_001, quietMicros: quiet))
        // A clock that went backwards is not silence.
        #expect(!RelayStream.allowsTakeover(authorized: false, liveLastActivityMicros: 10_000_000,
                                            nowMicros: 1, quietMicros: quiet))
    }
}
