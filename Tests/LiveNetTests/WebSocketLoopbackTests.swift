import Foundation
import LiveTestSupport
import Testing
@testable import LiveNet

/// WebSocketUpgrade and WebSocketClient against each other, and the server against a
/// raw socket that speaks frames by hand.
@Suite("WebSocket on loopback")
struct WebSocketLoopbackTests {
    /// An echo server on `/ws`: text and binary messages come back as they were.
    private func startEcho(_ group: EventLoopGroup, maxMessage: Int = 1 << 20) throws -> HTTPServer {
        var router = HTTPRouter()
        router.get("/ws", WebSocketUpgrade.handler(maxMessage: maxMessage) { socket, _ in
            socket.onMessage = { socket, message in
                switch message {
                case .text(let text): socket.send(text: text)
                case .binary(let bytes): socket.send(binary: bytes)
                default: break
                }
            }
        })
        return try HTTPServer(host: "127.0.0.1", port: 0, group: group, router: router)
    }

    private func connect(_ url: String, _ loop: EventLoop) throws -> (WebSocketConnection, Locked<[WebSocketMessage]>, Locked<(UInt16, String)?>) {
        let opened = Locked<Result<WebSocketConnection, WebSocketError>?>(nil)
        let received = Locked<[WebSocketMessage]>([])
        let closed = Locked<(UInt16, String)?>(nil)
        let done = Signal()
        WebSocketClient.connect(url: url, on: loop) { result in
            if case .success(let socket) = result {
                socket.onMessage = { _, message in received.update { $0.append(message) } }
                socket.onClose = { _, code, reason in closed.update { $0 = (code, reason) } }
            }
            opened.update { $0 = result }
            done.fire()
        }
        #expect(done.wait())
        let socket = try #require(try opened.value?.get())
        return (socket, received, closed)
    }

    @Test("client and server: text, binary, a fragmented message, ping/pong and the closing handshake")
    func echo() throws {
        let group = try EventLoopGroup(count: 2, name: "ws-echo")
        defer { group.shutdown() }
        let server = try startEcho(group)
        let loop = group.loops[1]
        let (socket, received, closed) = try connect("ws://127.0.0.1:\(server.localPort)/ws", loop)
        let big = (0..<70_000).map { UInt8(truncatingIfNeeded: $0) }
        _ = loop.execute {
            socket.send(text: "hello 连麦")
            socket.send(binary: big)
            socket.send(WebSocketFrame(fin: false, opcode: .text, payload: Array("frag".utf8)))
            socket.send(WebSocketFrame(fin: false, opcode: .continuation, payload: Array("men".utf8)))
            socket.send(WebSocketFrame(opcode: .continuation, payload: Array("ted".utf8)))
            socket.ping([7])
        }
        #expect(eventually { received.value.count == 4 })
        #expect(received.value == [.text("hello 连麦"), .binary(big), .text("fragmented"), .pong([7])])
        _ = loop.execute { socket.close(code: 1000, reason: "done") }
        #expect(eventually { closed.value != nil })
        #expect(closed.value?.0 == 1000)
    }

    @Test("an oversize message closes with 1009 and an unmasked client frame with 1002")
    func serverRefusals() throws {
        let group = try EventLoopGroup(count: 1, name: "ws-refuse")
        defer { group.shutdown() }
        let server = try startEcho(group, maxMessage: 100)
        let (socket, _, closed) = try connect("ws://127.0.0.1:\(server.localPort)/ws", group.loops[0])
        _ = group.loops[0].execute { socket.send(binary: [UInt8](repeating: 1, count: 101)) }
        #expect(eventually { closed.value != nil })
        #expect(closed.value?.0 == 1009)

        let raw = try RawSocketClient(port: server.localPort)
        try raw.send("GET /ws HTTP/1.1\r\nHost: t\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
        let head = try raw.receiveResponse()
        #expect(head.status == 101)
        #expect(head.headers["sec-websocket-accept"] == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
        try raw.send(WebSocketFrame(opcode: .text, payload: Array("Hello".utf8)).encoded())
        let close = try raw.receive(exactly: 4)
        #expect(Array(close.prefix(1)) == [0x88])
        #expect(Array(close.dropFirst(2).prefix(2)) == [0x03, 0xEA]) // 1002
        #expect(try raw.readsEndOfStream())
    }

    @Test("a server shutting down sends a close frame, 1001 going away, instead of dropping the connection")
    func shutdownSaysGoingAway() throws {
        let serverGroup = try EventLoopGroup(count: 1, name: "ws-shutdown-server")
        let clientGroup = try EventLoopGroup(count: 1, name: "ws-shutdown-client")
        defer { clientGroup.shutdown() }
        let server = try startEcho(serverGroup)
        let (_, _, closed) = try connect("ws://127.0.0.1:\(server.localPort)/ws", clientGroup.loops[0])
        server.close()
        serverGroup.shutdown()
        #expect(eventually { closed.value != nil })
        // Before: 1006, the connection closed without a close frame.
        #expect(closed.value?.0 == 1001)
        #expect(closed.value?.1 == "the server is shutting down")
    }

    @Test("a request that is not a valid upgrade gets 400 and the route stays HTTP")
    func badUpgrade() throws {
        let group = try EventLoopGroup(count: 1, name: "ws-bad")
        defer { group.shutdown() }
        let server = try startEcho(group)
        let raw = try RawSocketClient(port: server.localPort)
        try raw.send("GET /ws HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(try raw.receiveResponse().status == 400)
        let failed = Locked<WebSocketError?>(nil)
        let done = Signal()
        WebSocketClient.connect(url: "ws://127.0.0.1:\(server.localPort)/nothing", on: group.loops[0]) { result in
            if case .failure(let error) = result { failed.update { $0 = error } }
            done.fire()
        }
        #expect(done.wait())
        #expect(failed.value != nil)
    }
}
