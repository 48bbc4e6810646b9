import Foundation
import Glibc
import LiveTestSupport
import Testing
@testable import LiveNet

/// What hostile HTTP clients get: slow requests, too many connections, bodies nobody asked for.
@Suite("HTTPServer limits")
struct HTTPServerLimitTests {
    static func startServer(_ capacity: HTTPServer.Capacity, loops: Int = 1, name: String,
                            router: HTTPRouter = HTTPServerTests.makeRouter()) throws -> (EventLoopGroup, HTTPServer) {
        let group = try EventLoopGroup(count: loops, name: name)
        do {
            let server = try HTTPServer(host: "127.0.0.1", port: 0, group: group,
                                        router: router, capacity: capacity)
            return (group, server)
        } catch {
            group.shutdown()
            throw error
        }
    }

    @Test("a request head trickled in byte by byte (slowloris) is answered 408 at the deadline though bytes keep coming")
    func slowHeadTimesOut() throws {
        let (group, server) = try Self.startServer(.init(requestTimeout: .milliseconds(500)), name: "slowloris")
        defer { group.shutdown() }
        let client = try RawSocketClient(port: server.localPort, readTimeout: 0.02)
        let start = Date()
        try client.send("GET /healthz HTTP/1.1\r\nHost: t\r\n")
        // A header byte every 50 ms, never the blank line: the idle timeout (30 s) never
        // fires, only the request deadline can end it.
        var answer: [UInt8] = []
        while Date().timeIntervalSince(start) < 3 {
            if (try? client.send("X")) == nil { break }
            if let chunk = try client.receive(), !chunk.isEmpty { answer += chunk }
            if answer.count > 12 { break }
            usleep(50_000)
        }
        let elapsed = Date().timeIntervalSince(start)
        #expect(String(decoding: answer, as: UTF8.self).hasPrefix("HTTP/1.1 408 Request Timeout"))
        #expect(elapsed >= 0.45 && elapsed < 2.5, "answered after \(elapsed) s")
        #expect(eventually { server.apiConnectionCount == 0 })
    }

    @Test("a client sending only empty lines between requests is answered 408 too")
    func emptyLinesDoNotHoldTheConnection() throws {
        let (group, server) = try Self.startServer(.init(requestTimeout: .milliseconds(500)), name: "crlf-loris")
        defer { group.shutdown() }
        let client = try RawSocketClient(port: server.localPort, readTimeout: 0.02)
        try client.send("GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n")
        let start = Date()
        var answer: [UInt8] = []
        while Date().timeIntervalSince(start) < 3 {
            if (try? client.send("\r\n")) == nil { break }
            if let chunk = try client.receive(), !chunk.isEmpty { answer += chunk }
            if String(decoding: answer, as: UTF8.self).contains("408") { break }
            usleep(50_000)
        }
        let text = String(decoding: answer, as: UTF8.self)
        #expect(text.hasPrefix("HTTP/1.1 200 OK"))
        #expect(text.contains("HTTP/1.1 408 Request Timeout"))
        #expect(Date().timeIntervalSince(start) < 2.5)
    }

    @Test("a keep-alive connection's clock starts again with each request, so a patient client is not cut off")
    func deadlinePerRequest() throws {
        let (group, server) = try Self.startServer(.init(requestTimeout: .milliseconds(400)), name: "deadline-each")
        defer { group.shutdown() }
        let client = try RawSocketClient(port: server.localPort)
        for _ in 0..<3 {
            try client.send("GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n")
            #expect(try client.receiveResponse().status == 200)
            usleep(300_000)  // 3 × 300 ms between requests: longer than one deadline in all
        }
        try client.send("GET /healthz HTTP/1.1\r\n")
        usleep(200_000)
        try client.send("Host: t\r\n\r\n")
        #expect(try client.receiveResponse().status == 200)
    }

    @Test("a deferred reply slower than the request deadline is the server's turn: no 408, and the request behind it is served")
    func slowDeferredReplyIsNotTheClientsFault() throws {
        var router = HTTPServerTests.makeRouter()
        router.get("/slow") { _ in
            .deferred { respond in
                Thread {
                    usleep(800_000)
                    respond(.text("slow"))
                }.start()
            }
        }
        let (group, server) = try Self.startServer(.init(requestTimeout: .milliseconds(300)), name: "slow-reply", router: router)
        defer { group.shutdown() }
        let client = try RawSocketClient(port: server.localPort)
        try client.send("GET /slow HTTP/1.1\r\nHost: t\r\n\r\nGET /healthz HTTP/1.1\r\nHost: t\r\n\r\n")
        let slow = try client.receiveResponse()
        #expect(slow.status == 200)
        #expect(slow.text == "slow")
        let next = try client.receiveResponse()
        #expect(next.status == 200)
        #expect(next.text == "ok\n")
    }

    @Test("upgraded connections count against their own cap, not the API's; beyond it an upgrade gets a 503")
    func separateCaps() throws {
        let capacity = HTTPServer.Capacity(maxAPIConnections: 2, maxUpgradedConnections: 2, perAddress: .unlimited)
        let (group, server) = try Self.startServer(capacity, loops: 2, name: "caps")
        defer { group.shutdown() }
        let upgrade = "GET /ws HTTP/1.1\r\nHost: t\r\nUpgrade: echo\r\nConnection: Upgrade\r\n\r\n"
        let socket = try RawSocketClient(port: server.localPort)
        try socket.send(upgrade)
        #expect(try socket.receiveResponse().status == 101)
        #expect(eventually { server.upgradedConnectionCount == 1 && server.apiConnectionCount == 0 })

        // The WebSocket does not take an API slot: two API clients still fit.
        let first = try RawSocketClient(port: server.localPort)
        let second = try RawSocketClient(port: server.localPort)
        for client in [first, second] {
            try client.send("GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n")
            #expect(try client.receiveResponse().status == 200)
        }
        #expect(server.apiConnectionCount == 2)

        // An API connection that upgrades moves to the other cap and frees its API slot.
        try first.send(upgrade)
        #expect(try first.receiveResponse().status == 101)
        #expect(eventually { server.upgradedConnectionCount == 2 && server.apiConnectionCount == 1 })
        let third = try RawSocketClient(port: server.localPort)
        try third.send("GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(try third.receiveResponse().status == 200)
        #expect(server.evictedConnectionCount == 0)

        // A third upgrade does not fit its cap; the connection is answered and closed.
        try second.send(upgrade)
        let noRoom = try second.receiveResponse()
        #expect(noRoom.status == 503)
        #expect(noRoom.text == "too many upgraded connections\n")
        #expect(try second.readsEndOfStream())
        #expect(server.refusedUpgradeCount == 1)

        // Closing a WebSocket frees its slot.
        Glibc.shutdown(socket.fd, Int32(SHUT_RDWR))
        #expect(eventually { server.upgradedConnectionCount == 1 })
        try third.send(upgrade)
        #expect(try third.receiveResponse().status == 101)
        #expect(eventually { server.upgradedConnectionCount == 2 && server.apiConnectionCount == 0 })
    }

    @Test("at the API cap a newcomer takes the place of the connection waiting longest for its client; 503 only when all are being answered")
    func newcomerEvictsTheLongestWaiting() throws {
        var router = HTTPServerTests.makeRouter()
        router.get("/hold") { _ in .deferred { _ in } }  // answered never: the connection stays busy
        let capacity = HTTPServer.Capacity(maxAPIConnections: 2, perAddress: .unlimited)
        let (group, server) = try Self.startServer(capacity, loops: 2, name: "evict", router: router)
        defer { group.shutdown() }
        let get = "GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n"

        // A slowloris (inside its first request since the accept), then an idle keep-alive.
        let slow = try RawSocketClient(port: server.localPort)
        try slow.send("GET /healthz HTTP/1.1\r\n")
        usleep(50_000)
        let idle = try RawSocketClient(port: server.localPort)
        try idle.send(get)
        #expect(try idle.receiveResponse().status == 200)
        #expect(eventually { server.apiConnectionCount == 2 })

        // A newcomer is served; the slowloris, waiting longest, was told and closed.
        let newcomer = try RawSocketClient(port: server.localPort)
        try newcomer.send(get)
        #expect(try newcomer.receiveResponse().status == 200)
        let told = try slow.receiveResponse()
        #expect(told.status == 408)
        #expect(told.text == "no whole request before the server needed this connection\n")
        #expect(try slow.readsEndOfStream())

        // The next one takes the idle keep-alive's place, which just closes.
        let next = try RawSocketClient(port: server.localPort)
        try next.send(get)
        #expect(try next.receiveResponse().status == 200)
        #expect(try idle.receive() == [])
        #expect(server.evictedConnectionCount == 2)

        // Both slots now busy answering: no one to evict, the newcomer gets a 503.
        try newcomer.send("GET /hold HTTP/1.1\r\nHost: t\r\n\r\n")
        try next.send("GET /hold HTTP/1.1\r\nHost: t\r\n\r\n")
        usleep(100_000)
        let refused = try RawSocketClient(port: server.localPort)
        let answer = try refused.receiveResponse()
        #expect(answer.status == 503)
        #expect(answer.text == "too many connections\n")
        #expect(server.refusedAPIConnectionCount == 1)
        #expect(eventually { server.apiConnectionCount == 2 })
    }

    @Test("a client over the per-address limit is told so with a 503 before the close")
    func perAddressRefusal() throws {
        let capacity = HTTPServer.Capacity(perAddress: .init(maxConnections: 2, exemptsLoopback: false))
        let (group, server) = try Self.startServer(capacity, name: "per-ip-http")
        defer { group.shutdown() }
        let held = try (0..<2).map { _ in try RawSocketClient(port: server.localPort) }
        #expect(eventually { server.listener.connectionCount == 2 })
        let refused = try RawSocketClient(port: server.localPort)
        let answer = try refused.receiveResponse()
        #expect(answer.status == 503)
        #expect(answer.text == "too many connections from your address\n")
        #expect(answer.headers["connection"] == "close")
        #expect(try refused.readsEndOfStream())
        // The ones admitted are served as usual.
        try held[0].send("GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(try held[0].receiveResponse().status == 200)
    }

    @Test("a body sent where no route takes one is refused as soon as the head is read, not buffered")
    func unwantedBodiesRefusedAtTheHead() throws {
        let (group, server) = try Self.startServer(.init(), name: "bodies")
        defer { group.shutdown() }
        let partial = [UInt8](repeating: 0x61, count: 4096)
        let cases: [(String, Int, String)] = [
            ("POST /healthz", 405, "POST is not allowed on /healthz\n"),
            ("POST /nowhere", 404, "no route for /nowhere\n"),
            ("GET /healthz", 413, "GET /healthz takes no request body\n"),
            ("POST /echo", 413, "body of 1000000 bytes over the 1024 that POST /echo takes\n"),
        ]
        for (line, status, text) in cases {
            let client = try RawSocketClient(port: server.localPort, readTimeout: 2)
            // A 1 MB body announced, 4 KiB of it sent: the answer must not wait for the rest.
            try client.send("\(line) HTTP/1.1\r\nHost: t\r\nContent-Length: 1000000\r\n\r\n")
            try client.send(partial)
            let answer = try client.receiveResponse()
            #expect(answer.status == status, "\(line)")
            #expect(answer.text == text)
            #expect(answer.headers["connection"] == "close")
            if status == 405 { #expect(answer.headers["allow"] == "GET") }
            #expect(try client.readsEndOfStream())
        }
        // The route that takes a body still gets it.
        let client = try RawSocketClient(port: server.localPort)
        try client.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\n\r\nabc")
        #expect(try client.receiveResponse().text == "abc")
    }
}
