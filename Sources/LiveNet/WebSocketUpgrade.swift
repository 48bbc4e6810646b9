/// Serves WebSockets on an `HTTPRouter` path: the route checks the upgrade request,
/// answers 101 and hands the connection to a `WebSocketConnection` (or answers 400/426
/// with the reason and closes).
public enum WebSocketUpgrade {
    /// A route handler for `router.get(path, ...)`. `onOpen` runs on the connection's
    /// loop thread with the new socket and the upgrade request, before any frame is
    /// read: set `onMessage` / `onClose` there. `idleTimeout` replaces the HTTP server's
    /// (nil: a WebSocket may stay silent; the protocol on top watches liveness).
    public static func handler(maxMessage: Int = 1 << 20, idleTimeout: Duration? = nil,
                               onOpen: @escaping @Sendable (WebSocketConnection, HTTPRequest) -> Void) -> HTTPRouter.Handler {
        { request in
            switch WebSocketHandshake.serverResponse(for: request) {
            case .failure(let error):
                return .response(WebSocketHandshake.refusal(error))
            case .success(let response):
                return .upgrade(response) { connection, _ in
                    connection.idleTimeout = idleTimeout
                    let socket = WebSocketConnection(connection: connection, role: .server, maxMessage: maxMessage)
                    onOpen(socket, request)
                    return socket
                }
            }
        }
    }
}
