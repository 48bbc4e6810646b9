import Foundation
import LiveNet
import Synchronization
import Testing
@testable import LiveRTMP
@testable import LiveServer

/// Merged writes in `RelayStream`: on a loop with many players, messages wait and leave
/// in batches; order and exactly-once delivery must hold across joins.
@Suite("RelayStream merged writes")
struct RelayStreamMergeTests {
    /// A player that records the timestamps it is handed.
    final class RecordingPlayer: RelayPlayer, @unchecked Sendable {
        // @unchecked: `timestamps` is guarded by its Mutex; `loop` is immutable.
        let loop: EventLoop
        let timestamps = Mutex<[UInt32]>([])
        let losses = Mutex<[Int]>([])
        init(loop: EventLoop) { self.loop = loop }
        func deliver(_ messages: ArraySlice<RelayMessage>, from stream: RelayStream) {
            timestamps.withLock { $0 += messages.map(\.raw.timestamp) }
        }
        func lostMessages(of stream: RelayStream) {
            let count = received.count
            losses.withLock { $0.append(count) }
        }
        func streamUnpublished(_ stream: RelayStream) {}
        var received: [UInt32] { timestamps.withLock { $0 } }
        /// How many messages it had received each time it was told of a loss.
        var lostAt: [Int] { losses.withLock { $0 } }
    }

    final class Source: RelayPublisher, Sendable {
        let loop: EventLoop
        init(loop: EventLoop) { self.loop = loop }
        func replaced() {}
    }

    func video(_ kind: RelayMessage.Kind, at timestamp: UInt32) -> RTMPRawMessage {
        RTMPRawMessage(chunkStreamID: 7, typeID: 9, messageStreamID: 1, timestamp: timestamp,
                       payload: [kind == .keyframe ? 0x17 : 0x27, 1, 0, 0, 0, 0, 0, 0, 1, 0xAA])
    }

    @Test("40 players on one loop (a 4 ms merge) and a player joining mid-batch each get every message once, in order")
    func mergedBatchesKeepOrderAcrossJoins() throws {
        let group = try EventLoopGroup(count: 1, name: "merge-test")
        defer { group.shutdown() }
        let loop = group.loops[0]
        let stream = RelayStream(key: StreamKey(app: "live", name: "merge"), chunkSize: 4096, gopLimits: .init())
        let source = Source(loop: loop)
        guard case .accepted = stream.claim(source, address: "publisher", authorized: false, nowMicros: 0, quietMicros: 1_000_000) else {
            Issue.record("claim refused")
            return
        }
        let early = (0..<40).map { _ in RecordingPlayer(loop: loop) }
        for player in early { _ = stream.addPlayer(player, address: "early", counters: PlayerCounters()) }
        let late = RecordingPlayer(loop: loop)
        let lateReplay = Mutex<[UInt32]>([])
        let done = DispatchSemaphore(value: 0)
        // Relay on the loop thread, as a publisher's session does; the late player joins
        // between messages of one batch, on the same thread.
        _ = loop.execute {
            for index in 0..<60 {
                let kind: RelayMessage.Kind = index % 20 == 0 ? .keyframe : .interframe
                try? stream.relay(self.video(kind, at: UInt32(index * 33)), kind: kind, from: source, nowMicros: UInt64(index))
                if index == 45 {
                    let joined = stream.addPlayer(late, address: "late", counters: PlayerCounters())
                    lateReplay.withLock { $0 = joined.replay.map(\.raw.timestamp) }
                }
            }
            done.signal()
        }
        done.wait()
        let all = (0..<60).map { UInt32($0 * 33) }
        #expect(eventually(5) { early.allSatisfy { $0.received.count == 60 } && late.received.count >= 14 })
        usleep(20_000)
        for player in early { #expect(player.received == all) }
        // The replay holds the GOP from the keyframe at 40 through 45; the batch then
        // brings 46 onwards, nothing twice.
        let replay = lateReplay.withLock { $0 }
        #expect(replay == (40...45).map { UInt32($0 * 33) })
        #expect(late.received == (46..<60).map { UInt32($0 * 33) })
    }

    /// A publisher on one loop and a player on another whose task queue is full and
    /// whose thread is busy; `body` relays while it is stuck, then the player's loop
    /// runs again.
    func relayToAStuckLoop(messages: Int, _ check: (RecordingPlayer) -> Void) throws {
        let publisherGroup = try EventLoopGroup(count: 1, name: "stuck-publisher")
        defer { publisherGroup.shutdown() }
        let playerLoop = try EventLoop(name: "stuck-player", maxPendingTasks: 4)
        let playerGroup = EventLoopGroup(loops: [playerLoop])
        defer { playerGroup.shutdown() }
        let stream = RelayStream(key: StreamKey(app: "live", name: "stuck"), chunkSize: 4096, gopLimits: .init())
        let source = Source(loop: publisherGroup.loops[0])
        guard case .accepted = stream.claim(source, address: "publisher", authorized: false, nowMicros: 0, quietMicros: 1_000_000) else {
            Issue.record("claim refused")
            return
        }
        let player = RecordingPlayer(loop: playerLoop)
        _ = stream.addPlayer(player, address: "player", counters: PlayerCounters())
        // The player's loop is not started: its queue fills and nothing drains it.
        while playerLoop.execute({}) {}
        let done = DispatchSemaphore(value: 0)
        _ = publisherGroup.loops[0].execute {
            for index in 0..<messages {
                let kind: RelayMessage.Kind = index % 30 == 0 ? .keyframe : .interframe
                try? stream.relay(self.video(kind, at: UInt32(index)), kind: kind, from: source, nowMicros: UInt64(index))
            }
            done.signal()
        }
        done.wait()
        playerLoop.start()
        check(player)
    }

    @Test("a player on a loop whose task queue is full still gets every message, in order, once it runs")
    func fullQueueLosesNothing() throws {
        try relayToAStuckLoop(messages: 100) { player in
            #expect(eventually(5) { player.received.count == 100 })
            usleep(20_000)
            #expect(player.received == (0..<100).map { UInt32($0) })
            #expect(player.lostAt.isEmpty)
        }
    }

    @Test("a loop that falls more than maxPendingMessages behind: its players are told of the loss before the newer messages")
    func tooFarBehindIsToldOfTheLoss() throws {
        let limit = RelayStream.maxPendingMessages
        try relayToAStuckLoop(messages: limit + 10) { player in
            #expect(eventually(5) { player.received.count == 10 })
            usleep(20_000)
            // The first `limit` were dropped when one more came; the player hears of it
            // before it gets the rest.
            #expect(player.lostAt == [0])
            #expect(player.received == (limit..<limit + 10).map { UInt32($0) })
        }
    }
}
