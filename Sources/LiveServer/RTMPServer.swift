import LiveCore
import LiveNet
import LiveRTMP

/// The RTMP side of the relay (DESIGN.md §3): accepts publishers and players on LiveNet
/// event loops, one `RTMPServerSession` per connection, streams in a `StreamRegistry`.
///
/// Thread-safe; sessions run on their connection's loop.
public final class RTMPServer: Sendable {
    /// Limits and timeouts of the relay.
    public struct Configuration: Sendable {
        public var host: String
        /// 0 picks a free port (see `localPort`).
        public var port: UInt16
        /// Open connections beyond this are accepted and closed at once.
        public var maxConnections: Int?
        /// Open connections from one client address beyond this are closed at once.
        public var perAddress = TCPListener.PerAddressLimit.serverDefault
        /// C0+C1 through C2 must arrive within this.
        public var handshakeTimeout: Duration
        /// A connection that sends nothing (pongs and acknowledgements count; the
        /// server's own pings do not), a publisher that sends no media, or a
        /// connection that neither publishes nor plays, is closed after this.
        public var idleTimeout: Duration
        /// Ping requests keep quiet players alive and check the silence above.
        public var pingInterval: Duration
        /// The chunk size sent with (and the size every shared encoding uses).
        public var chunkSize: Int
        public var windowAcknowledgementSize: UInt32
        /// Longer messages close the connection (a keyframe of a 1080p stream is well under).
        public var maxMessageLength: Int
        public var gopCache: GOPCache.Limits
        /// A player's queue refuses writes from this many bytes until it drains to the low mark.
        public var playerHighWatermark: Int
        public var playerLowWatermark: Int
        /// A live publisher silent this long may be taken over by a new publish of its name.
        public var takeoverQuietInterval: Duration

        public init(host: String = "127.0.0.1", port: UInt16 = 1935, maxConnections: Int? = 4096,
                    handshakeTimeout: Duration = .seconds(10), idleTimeout: Duration = .seconds(30),
                    pingInterval: Duration = .seconds(10), chunkSize: Int = 4096,
                    windowAcknowledgementSize: UInt32 = 5_000_000, maxMessageLength: Int = 8 << 20,
                    gopCache: GOPCache.Limits = GOPCache.Limits(),
                    playerHighWatermark: Int = 2 << 20, playerLowWatermark: Int = 512 << 10,
                    takeoverQuietInterval: Duration = .seconds(2)) {
            self.host = host
            self.port = port
            self.maxConnections = maxConnections
            self.handshakeTimeout = handshakeTimeout
            self.idleTimeout = idleTimeout
            self.pingInterval = pingInterval
            self.chunkSize = chunkSize
            self.windowAcknowledgementSize = windowAcknowledgementSize
            self.maxMessageLength = maxMessageLength
            self.gopCache = gopCache
            self.playerHighWatermark = playerHighWatermark
            self.playerLowWatermark = playerLowWatermark
            self.takeoverQuietInterval = takeoverQuietInterval
        }
    }

    public let configuration: Configuration
    public let counters = RelayCounters()
    /// Asked before every publish (the co-host line's pubId rule); allows all by default.
    public let publishAuthorizer = PublishAuthorizer()
    let registry: StreamRegistry
    // Set once in init, right after the listener exists; sessions reach the server
    // through it only after accept.
    private let listenerBox = ListenerBox()

    /// Binds and starts accepting on `group`'s loops. Throws when the port cannot be bound.
    public init(configuration: Configuration = Configuration(), group: EventLoopGroup) throws(NetError) {
        self.configuration = configuration
        registry = StreamRegistry(chunkSize: configuration.chunkSize, gopLimits: configuration.gopCache,
                                  takeoverQuietMicros: EventLoopMicros.of(configuration.takeoverQuietInterval))
        let options = TCPConnectionOptions(highWatermark: configuration.playerHighWatermark,
                                           lowWatermark: configuration.playerLowWatermark,
                                           idleTimeout: configuration.idleTimeout, idleCountsWrites: false, noDelay: true)
        let box = listenerBox
        let listener = try TCPListener.bind(host: configuration.host, port: configuration.port, group: group,
                                            options: options, maxConnections: configuration.maxConnections,
                                            perAddress: configuration.perAddress)
        { [weak self] connection in
            guard let self, box.isOpen else {
                connection.abort(nil)
                return
            }
            RTMPServerSession(connection: connection, server: self).start()
        }
        box.listener = listener
    }

    public var listener: TCPListener { listenerBox.listener! }

    /// The bound port (the chosen one when configured with 0).
    public var localPort: UInt16 { listener.localPort }

    /// Open RTMP connections.
    public var connectionCount: Int { listener.connectionCount }

    /// Every stream (live or with players waiting), sorted by app and name.
    public func streams() -> [StreamStats] {
        let now = Clock.monotonicMicros()
        return registry.all.map { $0.stats(nowMicros: now) }
    }

    /// Stops accepting; open connections end with their loops' shutdown. Any thread.
    public func close() {
        listenerBox.isOpen = false
        listener.close()
    }
}

/// The listener, set right after binding (the accept closure exists before it).
private final class ListenerBox: @unchecked Sendable {
    // @unchecked: written once in RTMPServer.init before any accept can run, and
    // `isOpen` only flips to false (a stale read admits one more connection at worst).
    var listener: TCPListener?
    var isOpen = true
}
