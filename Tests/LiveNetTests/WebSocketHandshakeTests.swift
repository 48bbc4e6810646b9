import Testing
@testable import LiveNet

@Suite("WebSocket handshake")
struct WebSocketHandshakeTests {
    private func request(_ headers: HTTPHeaders, method: String = "GET") throws -> HTTPRequest {
        try #require(HTTPRequest(method: method, target: "/line", headers: headers))
    }

    static let goodHeaders: HTTPHeaders = [
        "Host": "server.example.com", "Upgrade": "websocket", "Connection": "keep-alive, Upgrade",
        "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Version": "13",
    ]

    @Test("a valid upgrade gets 101 with the RFC's accept value")
    func accepted() throws {
        let response = try WebSocketHandshake.serverResponse(for: request(Self.goodHeaders)).get()
        #expect(response.status.code == 101)
        #expect(response.headers["Sec-WebSocket-Accept"] == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
        #expect(String(decoding: response.encoded(keepAlive: true), as: UTF8.self).hasPrefix("HTTP/1.1 101 Switching Protocols\r\n"))
    }

    @Test("missing or wrong headers are refused; a wrong version gets 426 naming 13")
    func refused() throws {
        for name in ["Upgrade", "Connection", "Sec-WebSocket-Key", "Sec-WebSocket-Version"] {
            var headers = Self.goodHeaders
            headers.remove(name)
            #expect(throws: WebSocketError.self, "without \(name)") { try WebSocketHandshake.serverResponse(for: request(headers)).get() }
        }
        var shortKey = Self.goodHeaders
        shortKey.set("Sec-WebSocket-Key", "c2hvcnQ=")
        #expect(throws: WebSocketError.self) { try WebSocketHandshake.serverResponse(for: request(shortKey)).get() }
        #expect(throws: WebSocketError.self) { try WebSocketHandshake.serverResponse(for: request(Self.goodHeaders, method: "POST")).get() }
        var version = Self.goodHeaders
        version.set("Sec-WebSocket-Version", "8")
        guard case .failure(let error) = WebSocketHandshake.serverResponse(for: try request(version)) else {
            Issue.record("version 8 was accepted")
            return
        }
        let refusal = WebSocketHandshake.refusal(error)
        #expect(refusal.status.code == 426)
        #expect(refusal.headers["Sec-WebSocket-Version"] == "13")
    }

    @Test("the client checks the server's answer, whatever the split")
    func clientSide() throws {
        let key = "dGhlIHNhbXBsZSBub25jZQ=="
        let head = Array("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n".utf8)
        for cut in 0..<head.count {
            #expect(try WebSocketHandshake.parseServerResponse(Array(head[..<cut]), key: key) == nil)
        }
        #expect(try WebSocketHandshake.parseServerResponse(head + [0x81, 0x00], key: key) == head.count)
        #expect(throws: WebSocketError.self) { try WebSocketHandshake.parseServerResponse(head, key: "AAAAAAAAAAAAAAAAAAAAAA==") }
        let refused = Array("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n".utf8)
        #expect(throws: WebSocketError.self) { try WebSocketHandshake.parseServerResponse(refused, key: key) }
        let request = String(decoding: WebSocketHandshake.clientRequest(host: "127.0.0.1", port: 8080, path: "/line", key: key), as: UTF8.self)
        #expect(request.hasPrefix("GET /line HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n"))
        #expect(request.contains("Sec-WebSocket-Key: \(key)\r\n"))
    }

    @Test("ws:// URLs")
    func urls() {
        #expect(WebSocketClient.parse(url: "ws://127.0.0.1:8080/line")! == ("127.0.0.1", 8080, "/line"))
        #expect(WebSocketClient.parse(url: "ws://example.com")! == ("example.com", 80, "/"))
        #expect(WebSocketClient.parse(url: "ws://[::1]:9/x?y=1")! == ("::1", 9, "/x?y=1"))
        #expect(WebSocketClient.parse(url: "wss://example.com/") == nil)
        #expect(WebSocketClient.parse(url: "ws://host:99999/") == nil)
    }
}
