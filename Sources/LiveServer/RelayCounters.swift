import Synchronization

/// Server-wide totals for /metrics, bumped from every loop thread without a lock.
public final class RelayCounters: Sendable {
    /// Bytes read from RTMP connections.
    public let bytesIn = Atomic<UInt64>(0)
    /// Bytes queued to RTMP connections (media fan-out and protocol replies).
    public let bytesOut = Atomic<UInt64>(0)
    /// Bytes of FLV queued to HTTP-FLV and WebSocket FLV viewers (their framing included).
    public let flvBytesOut = Atomic<UInt64>(0)
    /// Video frames not sent to players that fell behind, all streams.
    public let droppedFrames = Atomic<UInt64>(0)
    /// Connections closed for a protocol error (garbage, malformed handshake or chunk).
    public let protocolErrors = Atomic<UInt64>(0)
    /// Connections closed by the handshake or idle timeout.
    public let timeouts = Atomic<UInt64>(0)
    /// Publishes refused with NetStream.Publish.BadName.
    public let refusedPublishes = Atomic<UInt64>(0)
    /// Publishers replaced by their returning selves.
    public let takeovers = Atomic<UInt64>(0)
    /// Plays refused (a token that does not grant it, or the co-host play rule).
    public let refusedPlays = Atomic<UInt64>(0)
    /// Connects refused with NetConnection.Connect.Rejected (a bad token in tcUrl).
    public let refusedConnects = Atomic<UInt64>(0)

    public init() {}

    static func add(_ counter: borrowing Atomic<UInt64>, _ value: Int) {
        counter.wrappingAdd(UInt64(value), ordering: .relaxed)
    }
}

/// One player's counters, readable from the HTTP thread while its loop updates them.
public final class PlayerCounters: Sendable {
    /// Video frames dropped because the player's queue was full.
    public let droppedFrames = Atomic<UInt64>(0)
    /// Bytes queued to the player.
    public let bytesOut = Atomic<UInt64>(0)
    /// The most bytes its write queue held right after a write.
    public let peakQueuedBytes = Atomic<Int>(0)
    /// Bytes its write queue held after the latest write.
    public let queuedBytes = Atomic<Int>(0)

    public init() {}

    func recordQueue(_ bytes: Int) {
        queuedBytes.store(bytes, ordering: .relaxed)
        if bytes > peakQueuedBytes.load(ordering: .relaxed) { peakQueuedBytes.store(bytes, ordering: .relaxed) }
    }
}
