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
        init(loop: EventLoop) { self.loop = loop }
        func deliver(_ message: RelayMessage, from stream: RelayStream) { timestamps.withLock { $0.append(message.raw.timestamp) } }
        func streamUnpublished(_ stream: RelayStream) {}
        var received: [UInt32] { timestamps.withLock { $0 } }
    }

    final class Source: RelayPublisher, @unchecked Sendable {
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
}
