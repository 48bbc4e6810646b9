import LiveCore
import LiveNet

/// The socket under a publisher or player: TCP connect, the client handshake, then an
/// `RTMPClientSessionCore` fed with every byte read, its output written back. A thin
/// driver: the protocol decisions are the core's.
///
/// Bytes the core produced are never dropped (the chunk encoder compresses headers
/// against what it sent before, so a lost message would corrupt the stream): when the
/// connection refuses a write at its high watermark they wait here and go out once it
/// drains. Media producers check `isWritable` before they hand the core more.
///
/// Confined to its loop's thread; every callback runs there.
final class RTMPClientConnection: TCPConnectionHandler, @unchecked Sendable {
    // @unchecked: all mutable state is touched only on `loop`'s thread (see above).

    private enum Phase { case idle, connecting, handshaking, session, closed }

    let url: RTMPURL
    let loop: EventLoop
    private(set) var core: RTMPClientSessionCore
    private var handshake = RTMPHandshakeClient()
    private(set) var connection: TCPConnection?
    private var phase = Phase.idle
    /// Output the connection refused at its high watermark, in order.
    private var held: [UInt8] = []
    /// Bytes handed to the connection so far (compared with `bytesWritten` to know
    /// which messages are still in its queue).
    private(set) var bytesQueued: UInt64 = 0
    private var startTimer: TimerHandle?
    private var ready = false

    /// Session events (connected, publishing/playing, media, status…).
    var onEvents: ([RTMPClientSessionCore.Event]) -> Void = { _ in }
    /// The connection can take more bytes (drained or below its low watermark).
    var onWritable: () -> Void = {}
    /// The connection ended: nil after `close()`, the reason otherwise. Called once.
    var onEnd: (RTMPClientError?) -> Void = { _ in }

    init(url: RTMPURL, mode: RTMPClientSessionCore.Mode, configuration: RTMPClientSessionCore.Configuration, loop: EventLoop) {
        self.url = url
        self.loop = loop
        core = RTMPClientSessionCore(url: url, mode: mode, configuration: configuration)
    }

    var urlText: String { url.description }

    /// True while the connection takes writes without holding them back.
    var isWritable: Bool { held.isEmpty && (connection?.isWritable ?? false) }
    var bytesRead: UInt64 { connection?.bytesRead ?? 0 }
    var bytesWritten: UInt64 { connection?.bytesWritten ?? 0 }
    /// Bytes the kernel took that the server has not acknowledged yet.
    var unacknowledgedBytes: Int { connection?.unacknowledgedBytes ?? 0 }
    /// The kernel's smoothed round-trip time, in µs.
    var roundTripMicros: Int? { connection?.roundTripMicros }
    /// Where the bytes produced so far end in the connection's byte count
    /// (`bytesWritten` reaches it when the kernel has taken all of them).
    var endOffset: UInt64 { bytesQueued + UInt64(held.count) }
    /// Bytes given to the connection that the kernel has not taken yet, plus held ones.
    var unsentBytes: Int { Int(bytesQueued &- bytesWritten) + held.count }

    /// Connects, shakes hands and starts the session; `timeout` bounds all of it until
    /// `markReady()` (publishing or playing) is called.
    func open(timeout: Duration, options: TCPConnectionOptions) {
        guard phase == .idle else { return }
        phase = .connecting
        startTimer = loop.schedule(after: timeout) { [weak self] in
            guard let self, !self.ready, self.phase != .closed else { return }
            let what = self.phase == .session ? "starting the stream" : self.phase == .handshaking ? "the RTMP handshake" : "connect"
            self.end(.timedOut(url: self.urlText, what: "\(what) (limit \(timeout))"))
        }
        TCPConnection.connect(host: url.host, port: UInt16(url.port), on: loop, options: options, timeout: timeout) { [self] result in
            switch result {
            case .failure(let error):
                end(.connectFailed(url: urlText, error))
            case .success(let connection):
                guard phase == .connecting else {
                    connection.abort()
                    return
                }
                self.connection = connection
                connection.handler = self
                phase = .handshaking
                write(handshake.start())
            }
        }
    }

    /// Publishing or playing has started: the start timeout no longer applies.
    func markReady() {
        ready = true
        startTimer?.cancel()
        startTimer = nil
    }

    /// Runs `body` on the core and sends what it produced.
    func withCore(_ body: (inout RTMPClientSessionCore) throws -> Void) rethrows {
        try body(&core)
        flush()
    }

    /// Graceful close: what is queued still leaves, then the socket closes; `onEnd(nil)`.
    func close() {
        guard phase != .closed else { return }
        closeRequestedLocally = true
        if let connection, held.isEmpty {
            connection.close()
        } else if connection == nil {
            end(nil)
        } else {
            // Held bytes go first; closing waits for them (see onWritabilityChanged).
            closeWhenFlushed = true
        }
    }

    private var closeWhenFlushed = false
    /// `close()` was called: the end that follows is not an error.
    private var closeRequestedLocally = false

    /// Closes at once with `error` (nil: a local close).
    func end(_ error: RTMPClientError?) {
        guard phase != .closed else { return }
        phase = .closed
        startTimer?.cancel()
        startTimer = nil
        held = []
        let connection = self.connection
        connection?.handler = nil
        connection?.abort()
        let callback = onEnd
        onEnd = { _ in }
        callback(error)
    }

    // MARK: - Output

    private func flush() {
        let output = core.takeOutput()
        if !output.isEmpty { write(output) }
    }

    private func write(_ bytes: [UInt8]) {
        guard !bytes.isEmpty, let connection else { return }
        if held.isEmpty {
            let shared = SharedBytes(bytes)
            if connection.write(shared) {
                bytesQueued += UInt64(bytes.count)
                return
            }
        }
        held += bytes
    }

    private func releaseHeld() {
        guard !held.isEmpty, let connection, connection.isWritable else { return }
        let bytes = held
        held = []
        if connection.write(SharedBytes(bytes)) {
            bytesQueued += UInt64(bytes.count)
        } else {
            held = bytes
        }
        if held.isEmpty && closeWhenFlushed { connection.close() }
    }

    // MARK: - TCPConnectionHandler

    func onRead(_ connection: TCPConnection, _ bytes: UnsafeRawBufferPointer) {
        switch phase {
        case .handshaking:
            let step: RTMPHandshake.Step
            do {
                step = try handshake.feed(Array(bytes))
            } catch {
                end(.handshakeFailed(url: urlText, reason: "\(error)"))
                return
            }
            write(step.output)
            guard step.done else { return }
            phase = .session
            do {
                try core.start()
                flush()
            } catch {
                end(.protocolViolation(url: urlText, reason: "\(error)"))
                return
            }
            if !step.leftover.isEmpty { feedCore(step.leftover) }
        case .session:
            feedCore(bytes)
        case .idle, .connecting, .closed:
            break
        }
    }

    private func feedCore<Bytes: Collection>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        let events: [RTMPClientSessionCore.Event]
        do {
            events = try core.feed(bytes)
        } catch {
            end(.protocolViolation(url: urlText, reason: "\(error)"))
            return
        }
        flush()
        if !events.isEmpty { onEvents(events) }
    }

    func onWritabilityChanged(_ connection: TCPConnection, _ isWritable: Bool) {
        guard isWritable else { return }
        releaseHeld()
        onWritable()
    }

    func onDrained(_ connection: TCPConnection) {
        releaseHeld()
        onWritable()
    }

    func onClose(_ connection: TCPConnection, _ error: NetError?) {
        guard phase != .closed else { return }
        let wasHandshaking = phase == .handshaking
        if closeRequestedLocally {
            end(nil)
        } else if wasHandshaking {
            end(.handshakeFailed(url: urlText, reason: error.map { "\($0)" } ?? "the server closed the connection"))
        } else {
            end(.connectionLost(url: urlText, error))
        }
    }
}
