import Foundation
import Testing
@testable import LiveNet

/// Echoes bytes after taking over an upgraded connection.
final class UpgradedEcho: TCPConnectionHandler, Sendable {
    func onRead(_ connection: TCPConnection, _ bytes: UnsafeRawBufferPointer) {
        connection.write(SharedBytes(bytes))
    }

    func onClose(_ connection: TCPConnection, _ error: NetError?) {}
}

@Suite("HTTPServer")
struct HTTPServerTests {
    static func makeRouter() -> HTTPRouter {
        var router = HTTPRouter()
        router.get("/healthz") { _ in .response(.text("ok\n")) }
        router.get("/api/live/{id}/members") { request in
            struct Members: Encodable {
                let id: String
                let role: String?
                let members: [String]
            }
            return .response(.json(Members(id: request.pathParameters["id"] ?? "", role: request.query("role"), members: [])))
        }
        router.post("/echo", maxBodyBytes: 1024) { request in .response(.text(request.bodyText)) }
        router.get("/later") { _ in
            .deferred { respond in
                Thread {
                    usleep(20_000)
                    respond(.text("later"))
                }.start()
            }
        }
        router.get("/ws") { _ in
            var response = HTTPResponse(status: .switchingProtocols)
            response.headers.set("Connection", "Upgrade")
            response.headers.set("Upgrade", "echo")
            return .upgrade(response) { _, _ in UpgradedEcho() }
        }
        return router
    }

    @Test("answers routed requests on one keep-alive connection, pipelined and deferred included")
    func keepAliveConversation() throws {
        let group = try EventLoopGroup(count: 2, name: "http")
        defer { group.shutdown() }
        let server = try HTTPServer(host: "127.0.0.1", port: 0, group: group, router: Self.makeRouter())
        let client = try RawSocketClient(port: server.localPort)

        try client.send("GET /healthz HTTP/1.1\r\nHost: test\r\n\r\n")
        let health = try client.receiveResponse()
        #expect(health.status == 200)
        #expect(health.text == "ok\n")
        #expect(health.headers["connection"] == "keep-alive")
        #expect(health.headers["content-type"] == "text/plain; charset=utf-8")

        try client.send("GET /api/live/room%207/members?role=guest HTTP/1.1\r\nHost: test\r\n\r\n")
        let members = try client.receiveResponse()
        #expect(members.status == 200)
        #expect(members.headers["content-type"] == "application/json")
        #expect(members.text == #"{"id":"room 7","members":[],"role":"guest"}"#)

        // Pipelined: three requests in one segment, answered in order; the deferred one
        // holds the ones behind it.
        try client.send("GET /later HTTP/1.1\r\nHost: t\r\n\r\nPOST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n\r\nhelloHEAD /healthz HTTP/1.1\r\nHost: t\r\n\r\n")
        let later = try client.receiveResponse()
        #expect(later.text == "later")
        let echo = try client.receiveResponse()
        #expect(echo.status == 200)
        #expect(echo.text == "hello")
        let head = try client.receiveResponse(toHead: true)
        #expect(head.status == 200)
        #expect(head.headers["content-length"] == "3")

        try client.send("GET /nope HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(try client.receiveResponse().status == 404)

        try client.send("DELETE /healthz HTTP/1.1\r\nHost: t\r\n\r\n")
        let notAllowed = try client.receiveResponse()
        #expect(notAllowed.status == 405)
        #expect(notAllowed.headers["allow"] == "GET")

        try client.send("GET /healthz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        let last = try client.receiveResponse()
        #expect(last.status == 200)
        #expect(last.headers["connection"] == "close")
        #expect(try client.readsEndOfStream())
        #expect(eventually { server.listener.connectionCount == 0 })
    }

    @Test("garbage gets 400 and a closed connection; HTTP/1.0 closes after its answer")
    func badRequestAndHTTP10() throws {
        let group = try EventLoopGroup(count: 1, name: "http-bad")
        defer { group.shutdown() }
        let server = try HTTPServer(host: "127.0.0.1", port: 0, group: group, router: Self.makeRouter())

        let garbage = try RawSocketClient(port: server.localPort)
        try garbage.send("\u{16}\u{03}\u{01}\u{02}\u{00}\u{01}\u{00}\u{01}\u{fc}\r\n\r\n")
        let rejected = try garbage.receiveResponse()
        #expect(rejected.status == 400)
        #expect(rejected.headers["connection"] == "close")
        #expect(try garbage.readsEndOfStream())

        let old = try RawSocketClient(port: server.localPort)
        try old.send("GET /healthz HTTP/1.0\r\n\r\n")
        let answer = try old.receiveResponse()
        #expect(answer.status == 200)
        #expect(answer.headers["connection"] == "close")
        #expect(try old.readsEndOfStream())

        let huge = try RawSocketClient(port: server.localPort)
        try huge.send("GET /healthz HTTP/1.1\r\nHost: t\r\nX-Big: \(String(repeating: "b", count: 9000))\r\n\r\n")
        #expect(try huge.receiveResponse().status == 431)
    }

    @Test("an upgrade hands the connection, and the bytes after the request, to the new handler")
    func upgradeTakesOver() throws {
        let group = try EventLoopGroup(count: 1, name: "http-up")
        defer { group.shutdown() }
        let server = try HTTPServer(host: "127.0.0.1", port: 0, group: group, router: Self.makeRouter())
        let client = try RawSocketClient(port: server.localPort)
        try client.send("GET /ws HTTP/1.1\r\nHost: t\r\nUpgrade: echo\r\nConnection: Upgrade\r\n\r\nping")
        let switched = try client.receiveResponse()
        #expect(switched.status == 101)
        #expect(switched.headers["connection"] == "Upgrade")
        #expect(try client.receive(exactly: 4) == Array("ping".utf8))
        // No longer HTTP: a request line is echoed back, not answered.
        let line = Array("GET /healthz HTTP/1.1\r\n".utf8)
        try client.send(line)
        #expect(try client.receive(exactly: line.count) == line)
    }
}
