import Foundation

/// Opens client WebSockets (RFC 6455 §4.1) on a LiveNet loop: TCP connect, upgrade
/// request, checks of the 101 answer, then a `WebSocketConnection` in the client role.
public enum WebSocketClient {
    /// The parts of a `ws://HOST[:PORT]/PATH` URL (port 80 when absent); nil for any
    /// other scheme (no TLS here) or a malformed URL.
    public static func parse(url: String) -> (host: String, port: UInt16, path: String)? {
        guard url.hasPrefix("ws://") else { return nil }
        let rest = url.dropFirst(5)
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        let authority = rest[..<slash]
        let path = slash == rest.endIndex ? "/" : String(rest[slash...])
        var host = String(authority)
        var port: UInt16 = 80
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            host = String(authority[authority.index(after: authority.startIndex)..<close])
            let after = authority[authority.index(after: close)...]
            if after.hasPrefix(":") {
                guard let value = UInt16(after.dropFirst()) else { return nil }
                port = value
            }
        } else if let colon = authority.lastIndex(of: ":") {
            host = String(authority[..<colon])
            guard let value = UInt16(authority[authority.index(after: colon)...]) else { return nil }
            port = value
        }
        return host.isEmpty ? nil : (host, port, path)
    }

    /// Connects to `url` on `loop`. `completion` runs once on the loop thread with the
    /// open WebSocket (set its callbacks there: frames are read after it returns) or the
    /// failure; connect and handshake together are given `timeout`.
    public static func connect(url: String, on loop: EventLoop, maxMessage: Int = 1 << 20, timeout: Duration = .seconds(10),
                               completion: @escaping @Sendable (Result<WebSocketConnection, WebSocketError>) -> Void) {
        guard let (host, port, path) = parse(url: url) else {
            let error = WebSocketError.handshake("'\(url)' is not a ws:// URL")
            if !loop.execute({ completion(.failure(error)) }) { completion(.failure(error)) }
            return
        }
        TCPConnection.connect(host: host, port: port, on: loop, timeout: timeout) { result in
            switch result {
            case .failure(let error):
                completion(.failure(.connection(error)))
            case .success(let connection):
                let key = WebSocketHandshake.makeKey()
                let pending = ClientHandshake(key: key, maxMessage: maxMessage, completion: completion)
                connection.handler = pending
                pending.timer = loop.schedule(after: timeout) { [weak connection] in
                    connection?.abort(.timedOut("WebSocket handshake with \(url)"))
                }
                connection.write(WebSocketHandshake.clientRequest(host: host, port: port, path: path, key: key))
            }
        }
    }
}

/// The client's side of the handshake until the 101 arrives. Loop thread only.
private final class ClientHandshake: TCPConnectionHandler {
    let key: String
    let maxMessage: Int
    var completion: (@Sendable (Result<WebSocketConnection, WebSocketError>) -> Void)?
    var timer: TimerHandle?
    private var received: [UInt8] = []

    init(key: String, maxMessage: Int, completion: @escaping @Sendable (Result<WebSocketConnection, WebSocketError>) -> Void) {
        self.key = key
        self.maxMessage = maxMessage
        self.completion = completion
    }

    func onRead(_ connection: TCPConnection, _ bytes: UnsafeRawBufferPointer) {
        received += bytes
        let headLength: Int?
        do {
            headLength = try WebSocketHandshake.parseServerResponse(received, key: key)
        } catch {
            finish(.failure(error))
            connection.abort(nil)
            return
        }
        guard let headLength else { return }
        timer?.cancel()
        let socket = WebSocketConnection(connection: connection, role: .client, maxMessage: maxMessage)
        connection.handler = socket
        finish(.success(socket))
        let rest = Array(received[headLength...])
        if !rest.isEmpty, connection.state == .open {
            rest.withUnsafeBytes { socket.onRead(connection, $0) }
        }
    }

    func onClose(_ connection: TCPConnection, _ error: NetError?) {
        timer?.cancel()
        finish(.failure(.connection(error ?? .connectionClosed)))
    }

    private func finish(_ result: Result<WebSocketConnection, WebSocketError>) {
        let callback = completion
        completion = nil
        callback?(result)
    }
}
