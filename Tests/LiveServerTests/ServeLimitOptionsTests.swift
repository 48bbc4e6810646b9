import Foundation
import LiveTestSupport
import Testing

@Suite("liveline serve: connection limit options")
struct ServeLimitOptionsTests {
    /// Reads until the peer closes (or 5 s pass): everything it sent.
    func receiveAll(_ socket: TestSocket) -> String {
        var bytes: [UInt8] = []
        while case .bytes(let more) = socket.receive(timeout: 5) { bytes += more }
        return String(decoding: bytes, as: UTF8.self)
    }

    @Test("--max-api-connections and --max-line-connections cap the HTTP port (a newcomer takes an idle slot, an upgrade beyond gets a 503); bad values are usage errors")
    func limitOptions() throws {
        let serve = try ChildProcess(BuildProducts.liveline, ["serve", "--rtmp", "127.0.0.1:0", "--http", "127.0.0.1:0",
                                                           "--max-api-connections", "1", "--max-line-connections", "0",
                                                           "--max-per-ip", "8"])
        defer {
            serve.signal(SIGTERM)
            _ = serve.wait(timeout: 10)
        }
        let port = try servePorts(serve).http

        // One API connection open and idle; a newcomer takes its place (the cap is 1).
        let held = try TestSocket(port: port)
        held.send(Array("GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n".utf8))
        guard case .bytes(let first) = held.receive(timeout: 5) else {
            Issue.record("no answer on the first API connection")
            return
        }
        #expect(String(decoding: first, as: UTF8.self).hasPrefix("HTTP/1.1 200 OK"))
        let second = try TestSocket(port: port)
        second.send(Array("GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n".utf8))
        guard case .bytes(let answer) = second.receive(timeout: 5) else {
            Issue.record("no answer on the second API connection")
            return
        }
        #expect(String(decoding: answer, as: UTF8.self).hasPrefix("HTTP/1.1 200 OK"))
        #expect(held.closesWithin(5))

        // No room for a line WebSocket at all.
        second.send(Array(("GET /line HTTP/1.1\r\nHost: t\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                           + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n").utf8))
        let refusedUpgrade = receiveAll(second)
        #expect(refusedUpgrade.hasPrefix("HTTP/1.1 503 Service Unavailable"))
        #expect(refusedUpgrade.hasSuffix("too many upgraded connections\n"))

        for (option, value) in [("--max-per-ip", "-1"), ("--max-api-connections", "0"), ("--max-line-connections", "x")] {
            let bad = try ChildProcess(BuildProducts.liveline, ["serve", option, value])
            #expect(bad.wait(timeout: 10) == 2)
            #expect(bad.stderr.contains(option))
        }
    }
}
