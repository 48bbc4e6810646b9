import LiveAuth
import LiveCore
import LiveNet
import LiveRTMP
import LiveSignal
import Synchronization

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
        /// Longer command, data or control messages close the connection (connect is under 1 KiB).
        public var maxCommandMessageLength: Int
        /// More chunk streams on one connection close it (real peers use fewer than ten).
        public var maxChunkStreams: Int
        /// One connection's unfinished messages plus undecoded bytes; more closes it.
        /// At least `maxMessageLength` plus a socket read (64 KiB).
        public var maxUnfinishedBytesPerConnection: Int
        /// All connections' unfinished messages together; the connection whose bytes
        /// would pass it is closed. Charged after each read, so one read's growth per
        /// event loop may pass it for a moment.
        public var maxUnfinishedBytesTotal: Int
        /// The longest app or stream name in bytes (without the query); longer ones are
        /// refused (connect: NetConnection.Connect.Rejected; publish: BadName; play: Failed).
        public var maxNameLength: Int
        /// The longest query ('?' and after) on an app or stream name, in bytes.
        public var maxQueryLength: Int
        public var gopCache: GOPCache.Limits
        /// The GOP caches of all streams together; past it, the stream whose cache grows
        /// is dropped to its headers (new players wait for its next keyframe).
        public var maxGOPCacheBytesTotal: Int
        /// A player's queue refuses writes from this many bytes until it drains to the low mark.
        public var playerHighWatermark: Int
        public var playerLowWatermark: Int
        /// A live publisher silent this long may be taken over by a new publish of its name
        /// (with auth on, a publisher whose token grants the name takes over at once).
        public var takeoverQuietInterval: Duration
        /// With a verifier, publish and play need a token granting `publish` / `play` on
        /// "app/name" (`?token=` on the stream name, else on connect's tcUrl); nil: open.
        public var auth: TokenVerifier? = nil
        /// What happens to a publishing or playing session whose token expires.
        public var onExpiry: TokenExpiryPolicy = .keep

        public init(host: String = "127.0.0.1", port: UInt16 = 1935, maxConnections: Int? = 4096,
                    handshakeTimeout: Duration = .seconds(10), idleTimeout: Duration = .seconds(30),
                    pingInterval: Duration = .seconds(10), chunkSize: Int = 4096,
                    windowAcknowledgementSize: UInt32 = 5_000_000, maxMessageLength: Int = 8 << 20,
                    maxCommandMessageLength: Int = 64 << 10, maxChunkStreams: Int = 64,
                    maxUnfinishedBytesPerConnection: Int = 12 << 20, maxUnfinishedBytesTotal: Int = 256 << 20,
                    maxNameLength: Int = 256, maxQueryLength: Int = 4096,
                    gopCache: GOPCache.Limits = GOPCache.Limits(), maxGOPCacheBytesTotal: Int = 512 << 20,
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
            self.maxCommandMessageLength = maxCommandMessageLength
            self.maxChunkStreams = maxChunkStreams
            self.maxUnfinishedBytesPerConnection = maxUnfinishedBytesPerConnection
            self.maxUnfinishedBytesTotal = maxUnfinishedBytesTotal
            self.maxNameLength = maxNameLength
            self.maxQueryLength = maxQueryLength
            self.gopCache = gopCache
            self.maxGOPCacheBytesTotal = maxGOPCacheBytesTotal
            self.playerHighWatermark = playerHighWatermark
            self.playerLowWatermark = playerLowWatermark
            self.takeoverQuietInterval = takeoverQuietInterval
        }
    }

    /// Why a connection was closed for the server's sake rather than its own input.
    public enum BudgetError: Error, CustomStringConvertible, Equatable, Sendable {
        /// The connections' unfinished messages together would pass `maxUnfinishedBytesTotal`.
        case unfinishedBytesTotal(limit: Int)

        public var description: String {
            switch self {
            case .unfinishedBytesTotal(let limit):
                "the unfinished messages of all connections would pass the server's budget of \(limit) bytes"
            }
        }
    }

    public let configuration: Configuration
    public let counters = RelayCounters()
    /// What all connections' unfinished messages hold (`maxUnfinishedBytesTotal`).
    public let unfinishedBudget: ByteBudget
    /// What all streams' GOP caches hold (`maxGOPCacheBytesTotal`).
    public let gopBudget: ByteBudget
    /// Returns freed memory to the system after large connections close.
    let heapTrim = HeapTrim()
    /// Asked before every publish (the co-host line's pubId rule, the call's stream rule);
    /// allows all by default.
    public let publishAuthorizer = PublishAuthorizer()
    /// Asked before every play of a co-host (`line-…`) or call (`call-…`) stream; allows
    /// all by default.
    public let playAuthorizer = PlayAuthorizer()
    let registry: StreamRegistry
    private let announcement = Mutex(AMF0Object())
    // Set once in init, right after the listener exists; sessions reach the server
    // through it only after accept.
    private let listenerBox = ListenerBox()

    /// Binds and starts accepting on `group`'s loops. Throws when the port cannot be bound.
    public init(configuration: Configuration = Configuration(), group: EventLoopGroup) throws(NetError) {
        self.configuration = configuration
        unfinishedBudget = ByteBudget(limit: configuration.maxUnfinishedBytesTotal)
        let gopBudget = ByteBudget(limit: configuration.maxGOPCacheBytesTotal)
        self.gopBudget = gopBudget
        var gopLimits = configuration.gopCache
        gopLimits.sharedBudget = gopBudget
        registry = StreamRegistry(chunkSize: configuration.chunkSize, gopLimits: gopLimits,
                                  takeoverQuietMicros: EventLoopMicros.of(configuration.takeoverQuietInterval))
        let options = TCPConnectionOptions(highWatermark: configuration.playerHighWatermark,
                                           lowWatermark: configuration.playerLowWatermark,
                                           idleTimeout: configuration.idleTimeout, idleCountsWrites: false, noDelay: true)
        let box = listenerBox
        let listener = try TCPListener.bind(host: configuration.host, port: configuration.port, group: group, label: "rtmp",
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

    /// What connect's `_result` tells every client besides NetConnection.Connect.Success
    /// (the relay announces its line signaling there: `LineSignalAnnouncement`). Any
    /// thread; connects from then on carry it.
    public var connectAnnouncement: AMF0Object {
        get { announcement.withLock { $0 } }
        set { announcement.withLock { $0 = newValue } }
    }

    /// Every stream (live or with players waiting), sorted by app and name.
    public func streams() -> [StreamStats] {
        let now = Clock.monotonicMicros()
        return registry.all.map { $0.stats(nowMicros: now) }
    }

    /// The query `key`'s live publisher published with ("" for none), nil when nobody
    /// publishes it (the line checks a hoster's `lineKey=` with it). Any thread.
    public func publisherQuery(of key: StreamKey) -> String? {
        registry.stream(key)?.livePublisher.map { $0.query ?? "" }
    }

    /// Ends `key`'s live publication, if any: its players hear it unpublished and the
    /// publisher's connection closes (a hung-up co-host's push). Any thread.
    public func endPublisher(of key: StreamKey) {
        guard let stream = registry.stream(key), let publisher = stream.livePublisher?.publisher else { return }
        stream.endPublishing(publisher, notifyPlayers: true)
        registry.removeIfEmpty(stream)
        publisher.loop.executeCoalesced { publisher.replaced() }
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
