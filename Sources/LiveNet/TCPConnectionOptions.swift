/// Per-connection settings, given to a listener (for every accepted connection) or to
/// `TCPConnection.connect`.
public struct TCPConnectionOptions: Sendable {
    /// When the write queue holds this many bytes or more, `isWritable` turns false and
    /// further writes are refused until it drains to `lowWatermark`. The queue therefore
    /// never holds more than `highWatermark` plus the one buffer that crossed it.
    public var highWatermark: Int
    /// `isWritable` turns true again once the queue has drained to this many bytes.
    public var lowWatermark: Int
    /// Close a connection that moved no byte for this long (`onClose` gets
    /// `NetError.timedOut`). nil: never. Which bytes count is `idleCountsWrites`'s.
    public var idleTimeout: Duration?
    /// Whether bytes this side writes count as activity for `idleTimeout`. A client
    /// keeps it true (a publisher mostly writes). A server sets it false, so only bytes
    /// *received* keep a connection: otherwise its own keep-alive traffic (the RTMP
    /// server's pings) would keep a silent or dead peer's slot forever.
    public var idleCountsWrites: Bool
    /// TCP_NODELAY: send small messages (RTMP control, HTTP replies) without waiting
    /// for Nagle's algorithm.
    public var noDelay: Bool
    /// SO_SNDBUF in bytes; nil leaves the kernel's auto-tuning. A live publisher sets it
    /// small so a slow link shows up in its own queue (where it can drop frames) instead
    /// of megabytes of stale video hiding in the kernel.
    public var sendBufferBytes: Int?
    /// TCP_NOTSENT_LOWAT in bytes: the kernel takes no more writes while this many of its
    /// bytes are still unsent (in flight ones do not count), so a publisher's backlog
    /// stays in its own queue, where frames can still be dropped; nil: no limit.
    public var notSentLowWatermarkBytes: Int?

    public init(highWatermark: Int = 1 << 20, lowWatermark: Int = 256 << 10,
                idleTimeout: Duration? = nil, idleCountsWrites: Bool = true, noDelay: Bool = true) {
        precondition(lowWatermark <= highWatermark, "the low watermark must not exceed the high watermark")
        self.highWatermark = highWatermark
        self.lowWatermark = lowWatermark
        self.idleTimeout = idleTimeout
        self.idleCountsWrites = idleCountsWrites
        self.noDelay = noDelay
    }
}
