import Foundation
import LiveNet
import Testing
@testable import LiveServer

@Suite("/metrics beyond the relay")
struct MetricsTests {
    @Test("the HTTP server's per-address refusals, the loops' refused tasks and dropped log lines are on /metrics")
    func surroundingsAreReported() throws {
        var configuration = RelayServer.Configuration()
        configuration.rtmp.host = "127.0.0.1"
        configuration.rtmp.port = 0
        configuration.httpPort = 0
        configuration.loops = 1
        configuration.httpCapacity.perAddress = .init(maxConnections: 1, exemptsLoopback: false)
        let relay = try RelayServer(configuration: configuration)
        defer { relay.shutdown() }
        let held = try TestSocket(port: relay.httpPort)
        // The address has its one connection: the next one is closed at once.
        let refused = try TestSocket(port: relay.httpPort)
        #expect(refused.closesWithin(2))
        held.close()
        // The server must have seen it go, or the request below is refused (and counted) too.
        #expect(eventually(5) { relay.http.listener.connectionCount == 0 })
        var lines: [String] = []
        #expect(eventually(5) {
            guard let page = try? httpGet(port: relay.httpPort, "/metrics"), page.status == 200 else { return false }
            lines = page.body.split(separator: "\n").map(String.init)
            return true
        })
        #expect(lines.contains("liveline_http_connections_refused_per_address_total 1"))
        #expect(lines.contains("liveline_http_connections_refused_total 1"))
        #expect(lines.contains("liveline_rtmp_connections_refused_per_address_total 0"))
        #expect(lines.contains("liveline_http_api_refused_total 0"))
        #expect(lines.contains("liveline_loop_tasks_dropped_total 0"))
        #expect(lines.contains { $0.hasPrefix("liveline_log_lines_dropped_total ") })
    }
}
