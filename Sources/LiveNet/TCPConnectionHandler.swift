/// What a protocol (an RTMP session, the HTTP server, a test echo) does with a
/// connection's events. Every method is called on the connection's event loop thread,
/// one at a time; the handler may write, pause reading or close from inside any of them.
public protocol TCPConnectionHandler: AnyObject {
    /// Bytes arrived. `bytes` points into the loop's shared read buffer and is valid only
    /// during this call: copy (or parse) what you need to keep.
    func onRead(_ connection: TCPConnection, _ bytes: UnsafeRawBufferPointer)

    /// The write queue crossed a watermark: false once it holds `highWatermark` bytes
    /// (writes are refused from then on, so a relay drops frames for this peer), true
    /// once it has drained to `lowWatermark`. Called from inside `write` when that write
    /// crossed the high watermark.
    func onWritabilityChanged(_ connection: TCPConnection, _ isWritable: Bool)

    /// The write queue became empty: every byte written so far is in the kernel.
    func onDrained(_ connection: TCPConnection)

    /// The connection is closed: nil after `close()` or an orderly end from the peer,
    /// the reason otherwise (`.timedOut` when idle, `.loopShutdown`, a failed syscall).
    /// Called exactly once; the connection drops its reference to the handler afterwards.
    func onClose(_ connection: TCPConnection, _ error: NetError?)

    /// The loop is shutting down and closes the open connection right after this call
    /// (then `onClose` with `.loopShutdown`): the last chance to say goodbye in the
    /// protocol's words (a WebSocket's close frame, 1001). What is written here is
    /// flushed as far as the socket takes it at once.
    func onShutdown(_ connection: TCPConnection)
}

public extension TCPConnectionHandler {
    func onWritabilityChanged(_ connection: TCPConnection, _ isWritable: Bool) {}
    func onDrained(_ connection: TCPConnection) {}
    func onShutdown(_ connection: TCPConnection) {}
}
