/// A WebSocket (RFC 6455) on a `TCPConnection`, server or client side: decodes frames,
/// joins fragments, answers pings, runs the closing handshake and masks what a client
/// sends. Made by `WebSocketUpgrade` on the server and `WebSocketClient` on the client.
///
/// Confined to its connection's loop thread: `send`, `close` and the callbacks all run
/// there; from another thread go through `loop.execute { ... }`.
public final class WebSocketConnection: TCPConnectionHandler, @unchecked Sendable, CustomStringConvertible {
    // @unchecked: every mutable field is touched only on `loop`'s thread (see above).

    /// Which end of the connection this is: a client masks its frames and expects
    /// unmasked ones (§5.1).
    public enum Role: Sendable { case server, client }

    public let connection: TCPConnection
    public let role: Role
    /// Called on the loop thread for every text or binary message, ping and pong (pings
    /// are answered before this is called); the close frame arrives through `onClose`.
    public var onMessage: ((WebSocketConnection, WebSocketMessage) -> Void)?
    /// Called once on the loop thread when the WebSocket is gone: the close code (the
    /// peer's or the one sent for an error; 1006 when the TCP connection just dropped)
    /// and a reason.
    public var onClose: ((WebSocketConnection, UInt16, String) -> Void)?

    private var decoder: WebSocketFrameDecoder
    private var assembler: WebSocketMessageAssembler
    private var closeSent = false
    private var closeReported = false
    private var peerClose: (code: UInt16, reason: String)?
    private var closeTimer: TimerHandle?
    private var random = SystemRandomNumberGenerator()

    /// Wraps an open connection; set it as the connection's handler (the upgrade and the
    /// client do). `maxMessage` bounds a frame and a joined message alike.
    public init(connection: TCPConnection, role: Role, maxMessage: Int = 1 << 20) {
        self.connection = connection
        self.role = role
        decoder = WebSocketFrameDecoder(requireMask: role == .server, maxPayload: maxMessage)
        assembler = WebSocketMessageAssembler(maxMessage: maxMessage)
    }

    public var loop: EventLoop { connection.loop }
    public var description: String { "WebSocket(\(role), \(connection.peerAddress))" }
    /// True until a close frame was sent or the connection closed.
    public var isOpen: Bool { !closeSent && connection.state == .open }

    /// Sends a text message in one frame; false when the connection is closing or its
    /// write queue is full.
    @discardableResult
    public func send(text: String) -> Bool {
        send(WebSocketFrame(opcode: .text, payload: Array(text.utf8)))
    }

    /// Sends a binary message in one frame.
    @discardableResult
    public func send(binary: [UInt8]) -> Bool {
        send(WebSocketFrame(opcode: .binary, payload: binary))
    }

    /// Sends `bytes[range]`, one or more whole frames encoded beforehand (server role
    /// only: a server's frames are unmasked, so one encoding is shared by every
    /// connection; see `WebSocketFrame.appendHead`). Nothing is copied. False when
    /// closing or when the write queue is full.
    @discardableResult
    public func send(encodedFrames bytes: SharedBytes, range: Range<Int>) -> Bool {
        precondition(role == .server, "a client masks every frame: it cannot send frames encoded beforehand")
        guard !closeSent, connection.state == .open else { return false }
        return connection.write(bytes, range: range)
    }

    /// Sends a ping (at most 125 bytes of payload).
    @discardableResult
    public func ping(_ payload: [UInt8] = []) -> Bool {
        send(WebSocketFrame(opcode: .ping, payload: Array(payload.prefix(WebSocketFrame.maxControlPayload))))
    }

    /// Sends any frame as it is (tests use it to fragment); false once closing.
    @discardableResult
    public func send(_ frame: WebSocketFrame) -> Bool {
        guard !closeSent, connection.state == .open else { return false }
        return write(frame)
    }

    /// Starts the closing handshake (§7.1.2): sends a close frame, then closes the TCP
    /// connection when the peer answers or after `timeout`.
    public func close(code: UInt16 = 1000, reason: String = "", timeout: Duration = .seconds(2)) {
        guard !closeSent, connection.state == .open else { return }
        closeSent = true
        write(.close(code: code, reason: reason))
        closeTimer = loop.schedule(after: timeout) { [weak self] in
            self?.connection.abort(.timedOut("WebSocket closing handshake"))
        }
    }

    @discardableResult
    private func write(_ frame: WebSocketFrame) -> Bool {
        var key: [UInt8]?
        if role == .client {
            let value = random.next() as UInt32
            key = [UInt8(value >> 24), UInt8(truncatingIfNeeded: value >> 16), UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value)]
        }
        return connection.write(frame.encoded(maskingKey: key))
    }

    // MARK: TCPConnectionHandler

    public func onRead(_ connection: TCPConnection, _ bytes: UnsafeRawBufferPointer) {
        decoder.append(bytes)
        do throws(WebSocketError) {
            while connection.state == .open, let frame = try decoder.next() {
                guard let message = try assembler.push(frame) else { continue }
                handle(message)
            }
        } catch {
            fail(error)
        }
    }

    public func onClose(_ connection: TCPConnection, _ error: NetError?) {
        closeTimer?.cancel()
        closeTimer = nil
        let code = peerClose?.code ?? 1006
        let reason = peerClose?.reason ?? error.map { "\($0)" } ?? "the connection closed without a close frame"
        report(code, reason)
    }

    /// The loop shuts down: a close frame with 1001 "going away" (§7.4.1), so the peer
    /// hears a server stopping or a client leaving, not a dropped connection (1006).
    public func onShutdown(_ connection: TCPConnection) {
        guard !closeSent else { return }
        closeSent = true
        let reason = role == .server ? "the server is shutting down" : "going away"
        peerClose = (1001, reason)
        write(.close(code: 1001, reason: reason))
    }

    private func handle(_ message: WebSocketMessage) {
        switch message {
        case .ping(let payload):
            if !closeSent { write(WebSocketFrame(opcode: .pong, payload: payload)) }
            onMessage?(self, message)
        case .close(let code, let reason):
            peerClose = (code ?? 1005, reason)
            if !closeSent {
                // Echo the peer's code (§5.5.1), then end the TCP connection.
                closeSent = true
                write(code.map { .close(code: $0) } ?? WebSocketFrame(opcode: .close))
            }
            connection.close()
        case .text, .binary, .pong:
            onMessage?(self, message)
        }
    }

    private func fail(_ error: WebSocketError) {
        peerClose = (error.closeCode, "\(error)")
        if !closeSent {
            closeSent = true
            write(.close(code: error.closeCode, reason: "\(error)"))
        }
        connection.close()
    }

    private func report(_ code: UInt16, _ reason: String) {
        guard !closeReported else { return }
        closeReported = true
        let callback = onClose
        onClose = nil
        onMessage = nil
        callback?(self, code, reason)
    }
}
