/// What a route handler gives back.
public enum HTTPReply: Sendable {
    /// Answer now.
    case response(HTTPResponse)
    /// Answer later: the closure gets `respond`, callable once from any thread (for data
    /// gathered from other loops). The connection reads no further request meanwhile.
    case deferred(@Sendable (_ respond: @escaping @Sendable (HTTPResponse) -> Void) -> Void)
    /// Hand the connection to another protocol (the WebSocket upgrade): `response` (a
    /// 101 with its own "Connection: Upgrade") is written, then `takeOver` returns the
    /// connection's new handler; it gets the bytes that followed the request, and the
    /// HTTP server lets go of the connection.
    case upgrade(HTTPResponse, takeOver: @Sendable (TCPConnection, _ bufferedBytes: [UInt8]) -> TCPConnectionHandler)
}
