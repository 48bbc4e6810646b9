import Foundation
import LiveNet
import LiveRTMP
import Synchronization
import Testing
@testable import LiveServer

/// Fan-out at a scale the relay is built for (DESIGN.md §7): every player of a stream
/// gets every frame, in order, once.
@Suite("Relay fan-out to many players", .serialized)
struct FanOutTests {
    /// What one player saw: the frame indices (written into each synthetic frame's body)
    /// in arrival order.
    /// An NSLock rather than Synchronization's Mutex: the thread sanitizer sees NSLock's
    /// ordering and reported the Mutex-guarded appends as races.
    final class Tally: @unchecked Sendable {
        // @unchecked: `indices` is touched only while holding `lock`.
        let playing = Atomic<Int>(0)
        let failed = Atomic<Int>(0)
        private let lock = NSLock()
        private var indices: [[Int]]

        init(players: Int) { indices = Array(repeating: [], count: players) }

        func record(player: Int, index: Int) {
            lock.lock()
            indices[player].append(index)
            lock.unlock()
        }

        var received: [[Int]] {
            lock.lock()
            defer { lock.unlock() }
            return indices
        }
    }

    @Test("200 players on loopback, started before the publisher, each receive every one of 150 frames in order")
    func twoHundredPlayersGetEveryFrame() throws {
        let relay = try startRelay()
        defer { relay.shutdown() }
        let players = 200, frames = 150
        let group = try EventLoopGroup(count: 2, name: "fanout-players")
        var clients: [RTMPPlayer] = []
        defer {
            // Every player closed (its connection's callbacks done) before the loops
            // stop and the players are released.
            for player in clients { player.close() }
            for player in clients { player.waitUntilClosed(timeout: .seconds(5)) }
            group.shutdown()
            withExtendedLifetime(clients) {}
        }
        let url = try RTMPURL(parsing: "rtmp://127.0.0.1:\(relay.rtmpPort)/live/fanout")
        let tally = Tally(players: players)
        for index in 0..<players {
            let player = RTMPPlayer(url: url, loop: group.next())
            player.onEvent = { event in
                switch event {
                case .playing: tally.playing.add(1, ordering: .relaxed)
                case .failed: tally.failed.add(1, ordering: .relaxed)
                case .video(let packet):
                    // The synthetic frame's index sits after the 4-byte NAL length.
                    if packet.avcc.count >= 6 { tally.record(player: index, index: Int(packet.avcc[4]) << 8 | Int(packet.avcc[5])) }
                default: break
                }
            }
            player.start()
            clients.append(player)
        }
        // Counting from the first frame needs every player in before it is published:
        // nothing is cached yet, so no player starts mid-stream or gets a replay.
        #expect(eventually(20) { tally.playing.load(ordering: .relaxed) == players })
        #expect(tally.failed.load(ordering: .relaxed) == 0)

        let publisher = try TestRTMPClient(port: relay.rtmpPort, path: "live/fanout", mode: .publish)
        guard case .publishing? = try publisher.start() else {
            Issue.record("publish did not start")
            return
        }
        try publisher.sendVideo(SyntheticVideo.sequenceHeader, timestamp: 0)
        for index in 0..<frames {
            try publisher.sendVideo(SyntheticVideo.frame(index: index, keyframe: index % 30 == 0, size: 8000),
                                    timestamp: UInt32(index * 33))
            try publisher.drain()
            usleep(5_000)
        }
        let complete = eventually(20) { tally.received.allSatisfy { $0.count >= frames } }
        let received = tally.received
        let short = received.filter { $0.count != frames }.count
        #expect(complete, "\(short) of \(players) players did not get \(frames) frames")
        #expect(received.allSatisfy { $0 == Array(0..<frames) })
        #expect(try apiStreams(relay).first?.droppedFrames == 0)
    }
}
