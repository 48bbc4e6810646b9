import Synchronization

/// A minimal HTTP/1.1 server on LiveNet's event loops: keep-alive, pipelining,
/// Content-Length bodies (only on routes that take one), routing by method and path,
/// 400/404/405/408/413/414/431/501/503/505 answers, deferred replies and a hand-over of
/// the connection for upgrades.
///
/// Hostile clients are budgeted (`Capacity`): plain HTTP connections and upgraded ones
/// (the line's WebSockets) have separate caps, so API clients cannot lock the signaling
/// out nor the other way round; at the API cap a newcomer takes the place of the
/// connection that has waited longest for its client; one client address holds at most
/// `perAddress.maxConnections`; a request must arrive whole within `requestTimeout`
/// (slowloris); idle is measured on bytes received. A refused client is answered 503
/// with the reason before the close.
public final class HTTPServer: Sendable {
    /// How many connections the server holds, and how long a request may take to arrive.
    public struct Capacity: Sendable {
        /// Plain HTTP connections open at once. Beyond, a new one takes the place of the
        /// one that has waited longest for its client (closed with a 408 when it was
        /// inside a request, silently when idle between requests); when all are being
        /// answered, it is answered 503.
        public var maxAPIConnections: Int
        /// Connections handed to another protocol (`HTTPReply.upgrade`: the line's
        /// WebSockets) open at once; beyond, the upgrade request is answered 503.
        public var maxUpgradedConnections: Int
        /// Connections from one client address, both kinds together (refused with 503).
        public var perAddress: TCPListener.PerAddressLimit
        /// A request's head and body must arrive within this from its first byte (the
        /// accept, for a connection's first request), or it is answered 408 and the
        /// connection closed. nil: no deadline (only the idle timeout).
        public var requestTimeout: Duration?

        public init(maxAPIConnections: Int = 256, maxUpgradedConnections: Int = 4096,
                    perAddress: TCPListener.PerAddressLimit = .serverDefault,
                    requestTimeout: Duration? = .seconds(10)) {
            precondition(maxAPIConnections > 0 && maxUpgradedConnections >= 0, "connection caps must be positive")
            self.maxAPIConnections = maxAPIConnections
            self.maxUpgradedConnections = maxUpgradedConnections
            self.perAddress = perAddress
            self.requestTimeout = requestTimeout
        }
    }

    /// The listener; its `localPort` is the bound port (useful with port 0).
    public let listener: TCPListener
    public let capacity: Capacity
    let counts: HTTPConnectionCounts

    /// What a connection gets unless told otherwise: closed after 30 s without a byte
    /// received (what the server writes does not count), and reading paused while
    /// 256 KiB of answers wait for a client that does not read them. With the parser's
    /// limits, one connection holds at most a head, the body its route allows, one
    /// read (64 KiB) and 256 KiB plus one answer.
    public static let defaultOptions = TCPConnectionOptions(highWatermark: 256 << 10, lowWatermark: 64 << 10,
                                                            idleTimeout: .seconds(30), idleCountsWrites: false)

    /// Binds `host:port` and serves `router`.
    public init(host: String, port: UInt16, group: EventLoopGroup, router: HTTPRouter,
                limits: HTTPRequestParser.Limits = HTTPRequestParser.Limits(),
                options: TCPConnectionOptions = HTTPServer.defaultOptions,
                capacity: Capacity = Capacity()) throws(NetError) {
        let counts = HTTPConnectionCounts(capacity: capacity)
        self.counts = counts
        self.capacity = capacity
        // Encoded once: a flood of refusals costs no formatting.
        let full = Self.refusal(.full).encoded(keepAlive: false)
        let fromAddress = Self.refusal(.tooManyFromAddress).encoded(keepAlive: false)
        listener = try TCPListener.bind(host: host, port: port, group: group, label: "http", options: options,
                                        // A backstop only: each eviction in flight counts its
                                        // victim and the newcomer, so plain connections never
                                        // exceed twice their cap.
                                        maxConnections: 2 * capacity.maxAPIConnections + capacity.maxUpgradedConnections,
                                        perAddress: capacity.perAddress,
                                        refusal: { $0 == .full ? full : fromAddress }) { connection in
            guard counts.admitAPI() else {
                connection.write(full)
                connection.close()
                return
            }
            let session = HTTPServerSession(router: router, limits: limits, counts: counts,
                                            requestTimeout: capacity.requestTimeout)
            connection.handler = session
            session.start(connection)
        }
    }

    public var localPort: UInt16 { listener.localPort }

    /// Plain HTTP connections open now.
    public var apiConnectionCount: Int { counts.snapshot.api }
    /// Upgraded connections (WebSockets) open now.
    public var upgradedConnectionCount: Int { counts.snapshot.upgraded }
    /// Connections answered 503 because `maxAPIConnections` were open, every one of
    /// them being answered.
    public var refusedAPIConnectionCount: Int { counts.snapshot.refusedAPI }
    /// Connections closed to make room for a newcomer at `maxAPIConnections`: the one
    /// that had waited longest for its client each time.
    public var evictedConnectionCount: Int { counts.snapshot.evicted }
    /// Upgrade requests answered 503 because `maxUpgradedConnections` were open.
    public var refusedUpgradeCount: Int { counts.snapshot.refusedUpgrades }

    /// Stops accepting; open connections finish on their own. Called from any thread.
    public func close() {
        listener.close()
    }

    /// The 503 a refused client gets, saying why.
    static func refusal(_ reason: TCPListener.Refusal) -> HTTPResponse {
        let text = switch reason {
        case .full: "too many connections\n"
        case .tooManyFromAddress: "too many connections from your address\n"
        }
        var response = HTTPResponse.text(text, status: .serviceUnavailable)
        response.headers.set("Connection", "close")
        return response
    }
}

/// The server's open connections by kind, against its `Capacity`, and the plain ones
/// waiting for their client, which a newcomer may take the place of. Any thread.
final class HTTPConnectionCounts: Sendable {
    struct Counts {
        var api = 0
        var upgraded = 0
        var refusedAPI = 0
        var refusedUpgrades = 0
        var evicted = 0
        /// Plain connections with no request being answered, by token.
        fileprivate var waiting: [UInt64: Waiting] = [:]
        fileprivate var nextToken: UInt64 = 0
    }

    fileprivate struct Waiting {
        /// When the connection began waiting for its client (µs, monotonic).
        let since: UInt64
        let evict: @Sendable () -> Void
    }

    private enum Admission {
        case admitted
        case evicting(@Sendable () -> Void)
        case refused
    }

    private let maxAPI: Int
    private let maxUpgraded: Int
    private let counts = Mutex(Counts())

    init(capacity: HTTPServer.Capacity) {
        maxAPI = capacity.maxAPIConnections
        maxUpgraded = capacity.maxUpgradedConnections
    }

    var snapshot: Counts { counts.withLock { $0 } }

    /// Counts a new plain connection. At the cap, the connection that has waited
    /// longest for its client (a slow or silent one, or an idle keep-alive) is closed
    /// to make room, as nginx reuses idle keep-alive connections; only when every
    /// connection is being answered is the newcomer refused (false, counted).
    func admitAPI() -> Bool {
        let admission: Admission = counts.withLock { counts in
            if counts.api < maxAPI {
                counts.api += 1
                return .admitted
            }
            guard let oldest = counts.waiting.min(by: { $0.value.since < $1.value.since }) else {
                counts.refusedAPI += 1
                return .refused
            }
            // The victim's slot passes to the newcomer: counted twice until it closes.
            counts.waiting[oldest.key] = nil
            counts.evicted += 1
            counts.api += 1
            return .evicting(oldest.value.evict)
        }
        switch admission {
        case .admitted: return true
        case .evicting(let evict):
            evict()
            return true
        case .refused: return false
        }
    }

    /// A plain connection waits for its client from `since`; `evict` (called from any
    /// thread) closes it when a newcomer needs the slot. Returns the token to end it.
    func startWaiting(since: UInt64, evict: @escaping @Sendable () -> Void) -> UInt64 {
        counts.withLock { counts in
            counts.nextToken += 1
            counts.waiting[counts.nextToken] = Waiting(since: since, evict: evict)
            return counts.nextToken
        }
    }

    /// The connection is being answered (or gone): no longer one to evict.
    func stopWaiting(_ token: UInt64) {
        _ = counts.withLock { $0.waiting.removeValue(forKey: token) }
    }

    func apiClosed() {
        counts.withLock { $0.api -= 1 }
    }

    /// Moves a plain connection to the upgraded ones; false (it stays plain, counted as
    /// refused) at the cap.
    func upgrade() -> Bool {
        counts.withLock { counts in
            guard counts.upgraded < maxUpgraded else {
                counts.refusedUpgrades += 1
                return false
            }
            counts.api -= 1
            counts.upgraded += 1
            return true
        }
    }

    func upgradedClosed() {
        counts.withLock { $0.upgraded -= 1 }
    }
}
