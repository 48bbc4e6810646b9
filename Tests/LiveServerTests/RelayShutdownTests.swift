import Foundation
import LiveNet
import LiveSignal
import LiveTestSupport
import Testing
@testable import LiveServer

@Suite("Relay shutdown")
struct RelayShutdownTests {
    @Test("a line participant of a relay shutting down hears a close frame, 1001, not a dropped connection (1006)")
    func lineSocketsHearGoingAway() throws {
        let relay = try startRelay()
        let group = try EventLoopGroup(count: 1, name: "shutdown-client")
        defer { group.shutdown() }
        let client = LineClient(url: "ws://127.0.0.1:\(relay.httpPort)/line", loop: group.loops[0])
        let closed = Locked<(UInt16, String)?>(nil)
        client.onClose = { code, reason in closed.update { $0 = (code, reason) } }
        let opened = Locked<Bool?>(nil)
        client.connect { result in opened.update { $0 = (try? result.get()) != nil } }
        #expect(eventually(5) { opened.value != nil })
        #expect(opened.value == true)
        #expect(eventually(5) { relay.line.connectionCount == 1 })
        relay.shutdown()
        #expect(eventually(5) { closed.value != nil })
        #expect(closed.value?.0 == 1001, "\(String(describing: closed.value))")
    }
}
