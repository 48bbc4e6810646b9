import LiveNet
import Testing
@testable import LiveRTMP
@testable import LiveServer

@Suite("What the relay holds: GOP caches counted as they are, budgets shared by the whole server")
struct RelayBudgetTests {
    final class Source: RelayPublisher, @unchecked Sendable {
        // @unchecked: immutable.
        let loop: EventLoop
        init(loop: EventLoop) { self.loop = loop }
        func replaced() {}
    }

    func message(_ kind: RelayMessage.Kind, at timestamp: UInt32, size: Int) throws -> RelayMessage {
        var scratch: [UInt8] = []
        let typeID: UInt8 = kind == .metadata ? 18 : 9
        return try RelayMessage(kind: kind, raw: RTMPRawMessage(chunkStreamID: 7, typeID: typeID, messageStreamID: 1,
                                                                  timestamp: timestamp, payload: [UInt8](repeating: 1, count: size)),
                                chunkSize: 4096, scratch: &scratch)
    }

    func video(keyframe: Bool, at timestamp: UInt32, size: Int) -> RTMPRawMessage {
        RTMPRawMessage(chunkStreamID: 7, typeID: 9, messageStreamID: 1, timestamp: timestamp,
                       payload: [keyframe ? 0x17 : 0x27, 1] + [UInt8](repeating: 0, count: size - 2))
    }

    @Test("the GOP cache counts each message's payload and its shared encoding, so its cap is what it holds")
    func heldBytes() throws {
        let frame = try message(.keyframe, at: 0, size: 10_000)
        // 10,000 bytes of payload, and the same again chunked at 4096 with a 12-byte
        // header and two 1-byte continuation headers.
        #expect(frame.heldBytes == 10_000 + 10_014)
        var cache = GOPCache(limits: .init(maxBytes: 50_000))
        cache.add(frame)
        cache.add(try message(.interframe, at: 33, size: 10_000))
        #expect(cache.byteCount == 2 * 20_014)
        // A third frame would make 60,042 bytes really held: over the cap.
        cache.add(try message(.interframe, at: 66, size: 10_000))
        #expect(cache.messages.isEmpty)
        #expect(cache.overflowCount == 1)
    }

    @Test("one huge message does not leave its size in the stream's scratch buffer")
    func scratchCapacity() throws {
        var scratch: [UInt8] = []
        let raw = RTMPRawMessage(chunkStreamID: 7, typeID: 9, messageStreamID: 1, timestamp: 0,
                                 payload: [UInt8](repeating: 0x17, count: 4 << 20))
        _ = try RelayMessage(kind: .keyframe, raw: raw, chunkSize: 4096, scratch: &scratch)
        #expect(scratch.capacity <= RelayMessage.retainedScratchCapacity)
        var small = raw
        small.payload = [UInt8](repeating: 0x27, count: 100_000)
        _ = try RelayMessage(kind: .interframe, raw: small, chunkSize: 4096, scratch: &scratch)
        #expect(scratch.capacity >= 100_000)  // ordinary messages reuse it
    }

    @Test("headers over 64 KiB are not cached; dropToHeaders keeps the headers and counts")
    func headersAndDrops() throws {
        var cache = GOPCache()
        cache.add(try message(.videoHeader, at: 0, size: 40))
        cache.add(try message(.metadata, at: 0, size: 40 << 10))
        #expect(cache.headers.count == 1)
        #expect(cache.oversizeHeaderCount == 1)
        cache.add(try message(.keyframe, at: 0, size: 100))
        cache.dropToHeaders()
        #expect(cache.messages.isEmpty)
        #expect(cache.byteCount == 0)
        #expect(cache.droppedCount == 1)
        #expect(cache.replay.map(\.kind) == [.videoHeader])
    }

    @Test("ByteBudget refuses a charge past its limit, takes nothing for it and counts it")
    func byteBudget() {
        let budget = ByteBudget(limit: 100)
        #expect(budget.charge(60))
        #expect(!budget.charge(41))
        #expect(budget.usedBytes == 60)
        #expect(budget.refusedCount == 1)
        #expect(budget.charge(40))
        budget.refund(100)
        #expect(budget.usedBytes == 0)
    }

    @Test("streams charge their GOP caches to the shared budget; the stream that passes it drops to headers; all is given back")
    func sharedGOPBudget() throws {
        let group = try EventLoopGroup(count: 1, name: "gop-budget-test")
        defer { group.shutdown() }
        let budget = ByteBudget(limit: 100_000)
        let limits = GOPCache.Limits(maxBytes: 1 << 20, sharedBudget: budget)
        var a: RelayStream? = RelayStream(key: StreamKey(app: "live", name: "a"), chunkSize: 4096, gopLimits: limits)
        let b = RelayStream(key: StreamKey(app: "live", name: "b"), chunkSize: 4096, gopLimits: limits)
        let sourceA = Source(loop: group.loops[0]), sourceB = Source(loop: group.loops[0])
        _ = a?.claim(sourceA, address: "a", authorized: false, nowMicros: 0, quietMicros: 1)
        _ = b.claim(sourceB, address: "b", authorized: false, nowMicros: 0, quietMicros: 1)
        // a: a keyframe and three frames of 10 kB, about 80 kB held.
        for index in 0..<4 {
            try a?.relay(video(keyframe: index == 0, at: UInt32(index * 33), size: 10_000), kind: index == 0 ? .keyframe : .interframe,
                         from: sourceA, nowMicros: 1)
        }
        #expect(budget.usedBytes == a?.stats(nowMicros: 1).cachedBytes)
        #expect(budget.usedBytes > 80_000)
        // b's keyframe of 20 kB does not fit what is left: b keeps only its headers.
        try b.relay(video(keyframe: true, at: 0, size: 20_000), kind: .keyframe, from: sourceB, nowMicros: 1)
        #expect(b.stats(nowMicros: 1).cachedBytes == 0)
        #expect(budget.refusedCount == 1)
        // a's publisher leaves: its cache is given back; then b fits.
        a?.endPublishing(sourceA, notifyPlayers: false)
        #expect(budget.usedBytes == 0)
        try b.relay(video(keyframe: true, at: 33, size: 20_000), kind: .keyframe, from: sourceB, nowMicros: 1)
        #expect(budget.usedBytes == b.stats(nowMicros: 1).cachedBytes)
        #expect(budget.usedBytes > 20_000)
        a = nil
        #expect(budget.usedBytes > 20_000)
    }

    @Test("a stream forgotten by the registry gives its GOP bytes back")
    func deinitRefunds() throws {
        let group = try EventLoopGroup(count: 1, name: "gop-budget-deinit")
        defer { group.shutdown() }
        let budget = ByteBudget(limit: 1 << 20)
        var stream: RelayStream? = RelayStream(key: StreamKey(app: "live", name: "gone"), chunkSize: 4096,
                                               gopLimits: GOPCache.Limits(sharedBudget: budget))
        let source = Source(loop: group.loops[0])
        _ = stream?.claim(source, address: "s", authorized: false, nowMicros: 0, quietMicros: 1)
        try stream?.relay(video(keyframe: true, at: 0, size: 5000), kind: .keyframe, from: source, nowMicros: 1)
        #expect(budget.usedBytes > 5000)
        stream = nil
        #expect(budget.usedBytes == 0)
    }
}
