/// A minimal HTTP/1.1 server on LiveNet's event loops: keep-alive, pipelining,
/// Content-Length bodies, routing by method and path, 400/404/405/413/414/431/501/505
/// answers, deferred replies and a hand-over of the connection for upgrades.
public final class HTTPServer: Sendable {
    /// The listener; its `localPort` is the bound port (useful with port 0).
    public let listener: TCPListener

    /// Binds `host:port` and serves `router`. Connections idle for `options.idleTimeout`
    /// (30 s unless given) are closed.
    public init(host: String, port: UInt16, group: EventLoopGroup, router: HTTPRouter,
                limits: HTTPRequestParser.Limits = HTTPRequestParser.Limits(),
                options: TCPConnectionOptions = TCPConnectionOptions(idleTimeout: .seconds(30)),
                maxConnections: Int? = 1024) throws(NetError) {
        listener = try TCPListener.bind(host: host, port: port, group: group, options: options,
                                        maxConnections: maxConnections) { connection in
            connection.handler = HTTPServerSession(router: router, limits: limits)
        }
    }

    public var localPort: UInt16 { listener.localPort }

    /// Stops accepting; open connections finish on their own. Called from any thread.
    public func close() {
        listener.close()
    }
}
