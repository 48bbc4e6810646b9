import Foundation
import Testing
@testable import LiveRTMP
@testable import LiveServer

/// Idle on the relay is measured on what a client sends: the server's own pings do not
/// keep a silent connection, while a player that answers them stays.
@Suite("RTMPServer idle connections", .serialized)
struct RTMPIdleTests {
    @Test("a silent player of a missing stream is closed after the idle timeout; a player answering pings stays")
    func silentPlayerIsClosed() throws {
        let relay = try startRelay {
            $0.idleTimeout = .milliseconds(600)
            $0.pingInterval = .milliseconds(100)
        }
        defer { relay.shutdown() }
        let silent = try TestRTMPClient(port: relay.rtmpPort, path: "live/missing", mode: .play)
        let answering = try TestRTMPClient(port: relay.rtmpPort, path: "live/missing", mode: .play)
        guard case .playing = try silent.start(), case .playing = try answering.start() else {
            Issue.record("the players did not start")
            return
        }
        // The answering player reads (and so answers every ping) for 2 s: three idle
        // timeouts. The silent one reads nothing and answers nothing meanwhile.
        try answering.pump(timeout: 2) { _ in false }
        #expect(!answering.closedByServer)
        #expect(silent.socket.closesWithin(1), "the server's pings kept a silent player alive")
        #expect(eventually(2) { relay.rtmp.connectionCount == 1 })
        #expect(relay.rtmp.counters.timeouts.load(ordering: .relaxed) >= 1)
    }
}
