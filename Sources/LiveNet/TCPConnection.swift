import Glibc
import LiveCore

/// A non-blocking TCP connection on one event loop: reads into the loop's shared buffer
/// and hands the bytes to its `handler`; writes go to a bounded queue of shared buffers
/// that leaves through writev, several buffers per call.
///
/// Confined to its loop's thread: create it with `connect` or through a `TCPListener`,
/// and from any other thread reach it only via `connection.loop.execute { ... }`.
public final class TCPConnection: EventLoopSource, @unchecked Sendable, CustomStringConvertible {
    // @unchecked: every mutable field is touched only on `loop`'s thread (see above).

    public enum State: Sendable {
        /// A `connect` is in progress.
        case connecting
        /// Reading and writing.
        case open
        /// `close()` was called: flushing the write queue, reading no more.
        case closing
        /// Closed; `onClose` has been called.
        case closed
    }

    /// The loop whose thread owns this connection.
    public let loop: EventLoop
    /// The options it was made with (`setWatermarks` may change the watermarks).
    public private(set) var options: TCPConnectionOptions
    /// Receives reads and state changes; set it in the accept or connect callback.
    public var handler: TCPConnectionHandler? {
        get { currentHandler }
        set { currentHandler = newValue }
    }
    public var state: State { currentState }
    /// "ip:port" of the other end.
    public var peerAddress: String { currentPeerAddress }
    /// Bytes received since the connection opened.
    public var bytesRead: UInt64 { readCount }
    /// Bytes the kernel accepted from the write queue.
    public var bytesWritten: UInt64 { writtenCount }
    /// Bytes ever accepted into the write queue.
    public var bytesQueued: UInt64 { queuedCount }
    /// Writes refused because the queue was at the high watermark.
    public var refusedWrites: UInt64 { refusedCount }
    /// False from the moment the queue reaches `highWatermark` until it drains to
    /// `lowWatermark`; writes are refused meanwhile.
    public var isWritable: Bool { writable }
    /// Close the connection after this long without a byte moving (received bytes
    /// only, unless `options.idleCountsWrites`); nil: never.
    public var idleTimeout: Duration? {
        didSet { armIdleTimer(fresh: true) }
    }

    // The state behind the public properties above is private: the compiler sees every
    // access to it, so it needs no run-time exclusivity checks on the write path.
    private var currentHandler: TCPConnectionHandler?
    private var currentState: State
    private var currentPeerAddress: String
    private var readCount: UInt64 = 0
    private var writtenCount: UInt64 = 0
    private var queuedCount: UInt64 = 0
    private var refusedCount: UInt64 = 0
    private var writable = true
    private(set) var fd: Int32
    private var sourceID: UInt64 = 0
    private var interest: UInt32 = 0
    private var readingPaused = false
    private var flushScheduled = false
    /// EPOLLOUT is armed because the socket took less than the queue held.
    private var awaitingWritable = false
    // Run-time exclusivity checks are off for the write queue: it is touched only on the
    // loop thread, and none of its methods calls out (the only code they can run is a
    // buffer's deinit, which frees memory), so no access to it can overlap another.
    // The checks cost the relay about a third of its user-space instructions
    // (Benchmarks/RESULTS.md).
    @exclusivity(unchecked) private var queue = WriteQueue()
    private var lastActivity: UInt64 = 0
    private var idleTimer: TimerHandle?
    private var connectTimer: TimerHandle?
    private var connectCompletion: ((Result<TCPConnection, NetError>) -> Void)?
    /// Called once when the connection closes (the listener keeps its count with it).
    var onClosed: (() -> Void)?

    init(fd: Int32, loop: EventLoop, options: TCPConnectionOptions, peerAddress: String, state: State) {
        self.fd = fd
        self.loop = loop
        self.options = options
        self.currentPeerAddress = peerAddress
        self.currentState = state
        self.idleTimeout = options.idleTimeout
    }

    deinit {
        if fd >= 0 { try? Syscall.close(fd) }
    }

    public var description: String { "TCPConnection(\(peerAddress), \(state))" }

    /// Bytes waiting in the write queue.
    public var queuedBytes: Int { queue.byteCount }
    /// Bytes the kernel took (`bytesWritten`) that the peer has not acknowledged yet:
    /// unsent in the socket's buffer, queued on the way out or in flight (SIOCOUTQ).
    /// On a narrow link this is where the backlog hides; 0 once closed.
    public var unacknowledgedBytes: Int {
        guard fd >= 0 else { return 0 }
        var value: Int32 = 0
        return ioctl(fd, UInt(TIOCOUTQ), &value) == 0 ? Int(max(0, value)) : 0
    }
    /// The kernel's smoothed round-trip time of the connection (TCP_INFO), in µs; nil
    /// when it cannot be read (closed).
    public var roundTripMicros: Int? {
        guard fd >= 0 else { return nil }
        var info = tcp_info()
        var length = socklen_t(MemoryLayout<tcp_info>.size)
        guard getsockopt(fd, Int32(IPPROTO_TCP), TCP_INFO, &info, &length) == 0 else { return nil }
        return Int(info.tcpi_rtt)
    }
    /// Buffers waiting in the write queue.
    public var queuedBuffers: Int { queue.bufferCount }
    /// False while reading is paused with `pauseReading()`.
    public var isReading: Bool { !readingPaused }

    // MARK: connect

    /// Opens a connection to `host:port` without blocking the loop. `completion` runs on
    /// `loop`'s thread with the open connection (set its handler there: reads start after
    /// it returns) or the failure, `NetError.timedOut` after `timeout`. The host is
    /// resolved on the calling thread first (instant for numeric addresses). When the
    /// loop has shut down or its task queue is full, `completion` runs at once on the
    /// calling thread with the failure.
    public static func connect(host: String, port: UInt16, on loop: EventLoop,
                               options: TCPConnectionOptions = TCPConnectionOptions(),
                               timeout: Duration = .seconds(10),
                               completion: @escaping @Sendable (Result<TCPConnection, NetError>) -> Void) {
        let address: SocketAddress
        do {
            address = try SocketAddress.resolve(host: host, port: port)
        } catch {
            // The loop gone or its queue full: the caller still hears, on this thread.
            if !loop.execute({ completion(.failure(error)) }) { completion(.failure(error)) }
            return
        }
        let accepted = loop.execute {
            let fd: Int32
            do throws(NetError) {
                fd = try Syscall.socket(domain: address.family, type: Int32(SOCK_STREAM.rawValue))
            } catch {
                completion(.failure(error))
                return
            }
            let connection = TCPConnection(fd: fd, loop: loop, options: options,
                                           peerAddress: address.description, state: .connecting)
            connection.connectCompletion = completion
            connection.start(connectingTo: address, timeout: timeout)
        }
        if !accepted { completion(.failure(loop.refusal)) }
    }

    private func start(connectingTo address: SocketAddress, timeout: Duration) {
        do {
            sourceID = try loop.register(fd, events: Epoll.output, source: self)
            interest = Epoll.output
            switch try Syscall.connect(fd, address) {
            case .done:
                finishConnect()
            case .wouldBlock:
                // Timers hold the connection strongly: a weak reference would move every
                // retain of it (one per queued write) to the slow side-table path.
                // `closeNow` cancels them, which breaks the cycle.
                connectTimer = loop.schedule(after: timeout) { [self] in
                    closeNow(.timedOut("connect to \(address)"))
                }
            }
        } catch {
            closeNow(error)
        }
    }

    private func finishConnect() {
        connectTimer?.cancel()
        connectTimer = nil
        do throws(NetError) {
            let failure = try Syscall.socketError(fd)
            if failure != 0 { throw NetError.syscall(call: "connect", errno: failure) }
            currentState = .open
            if let peer = try? Syscall.peerAddress(fd) { currentPeerAddress = peer.description }
            try applySocketOptions()
            try updateInterest()
        } catch {
            closeNow(error)
            return
        }
        armIdleTimer(fresh: true)
        let completion = connectCompletion
        connectCompletion = nil
        completion?(.success(self))
    }

    // MARK: accepted connections

    /// Registers an accepted connection with its loop (on the loop thread).
    func activate() throws(NetError) {
        try applySocketOptions()
        sourceID = try loop.register(fd, events: Epoll.input, source: self)
        interest = Epoll.input
        armIdleTimer(fresh: true)
    }

    private func applySocketOptions() throws(NetError) {
        if options.noDelay {
            try Syscall.setOption(fd, level: Int32(IPPROTO_TCP), name: TCP_NODELAY, value: 1, call: "setsockopt(TCP_NODELAY)")
        }
        if let bytes = options.sendBufferBytes {
            try Syscall.setOption(fd, level: SOL_SOCKET, name: SO_SNDBUF, value: Int32(clamping: bytes), call: "setsockopt(SO_SNDBUF)")
        }
        if let bytes = options.notSentLowWatermarkBytes {
            try Syscall.setOption(fd, level: Int32(IPPROTO_TCP), name: TCP_NOTSENT_LOWAT, value: Int32(clamping: bytes),
                                  call: "setsockopt(TCP_NOTSENT_LOWAT)")
        }
    }

    // MARK: reading

    /// Stops reading: the kernel buffers fill up and TCP pushes back on the peer (what
    /// a proxy does while its other side cannot take more).
    public func pauseReading() {
        guard !readingPaused else { return }
        readingPaused = true
        try? updateInterest()
    }

    /// Resumes reading after `pauseReading()`.
    public func resumeReading() {
        guard readingPaused else { return }
        readingPaused = false
        try? updateInterest()
    }

    /// At most this many full buffers per wake-up, so one fast sender cannot hold the
    /// loop; level-triggered epoll reports the rest on the next iteration.
    private static let readsPerWakeup = 4

    private func readAvailable() {
        let buffer = loop.readBuffer
        for _ in 0..<Self.readsPerWakeup {
            let result: IOResult<Int>
            do {
                result = try Syscall.read(fd, into: buffer)
            } catch {
                closeNow(error)
                return
            }
            guard case .done(let count) = result else { return }
            if count == 0 {
                // The peer finished sending: whatever was queued for it gets one more
                // chance to leave, then the connection ends in order.
                flushNow()
                closeNow(nil)
                return
            }
            readCount += UInt64(count)
            lastActivity = loop.now
            currentHandler?.onRead(self, UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
            guard state == .open, !readingPaused, count == buffer.count else { return }
        }
    }

    // MARK: writing

    /// Queues `bytes[range]` (all of it by default) for sending, or refuses it and
    /// returns false when the queue is at the high watermark (`isWritable` false) or the
    /// connection is not open. Nothing is copied: the queue keeps a reference. The bytes
    /// leave at the end of the loop iteration, together with everything else queued.
    /// Loop thread only.
    @discardableResult
    public func write(_ bytes: SharedBytes, range: Range<Int>? = nil) -> Bool {
        guard state == .open else { return false }
        guard isWritable else {
            refusedCount += 1
            return false
        }
        let range = range ?? 0..<bytes.count
        precondition(range.lowerBound >= 0 && range.upperBound <= bytes.count, "range \(range) outside \(bytes.count) bytes")
        guard !range.isEmpty else { return true }
        queue.append(bytes, range: range)
        didQueue(range.count)
        return true
    }

    /// Queues several ranges of `bytes` (a framing prefix and a shared payload, say) all
    /// together or none: false, and nothing queued, when the queue is at the high
    /// watermark or the connection is not open. See `write(_:range:)`. Loop thread only.
    @discardableResult
    public func write(_ bytes: SharedBytes, ranges: [Range<Int>]) -> Bool {
        guard state == .open else { return false }
        guard isWritable else {
            refusedCount += 1
            return false
        }
        for range in ranges {
            precondition(range.lowerBound >= 0 && range.upperBound <= bytes.count, "range \(range) outside \(bytes.count) bytes")
        }
        var total = 0
        for range in ranges where !range.isEmpty {
            queue.append(bytes, range: range)
            total += range.count
        }
        if total > 0 { didQueue(total) }
        return true
    }

    /// `count` bytes joined the queue: a flush at the end of the iteration, and the
    /// high watermark checked.
    private func didQueue(_ count: Int) {
        queuedCount &+= UInt64(count)
        if !flushScheduled, !awaitingWritable {
            flushScheduled = true
            loop.flushLater(self)
        }
        if queue.byteCount >= options.highWatermark {
            writable = false
            currentHandler?.onWritabilityChanged(self, false)
        }
    }

    /// Changes the write queue's watermarks (a connection handed to another protocol
    /// takes that protocol's, as an HTTP-FLV viewer takes a relay player's). A queue
    /// already past the new high watermark refuses writes until it drains to the new
    /// low one. Loop thread only.
    public func setWatermarks(high: Int, low: Int) {
        precondition(low <= high, "the low watermark must not exceed the high watermark")
        options.highWatermark = high
        options.lowWatermark = low
        if writable, queue.byteCount >= high {
            writable = false
            currentHandler?.onWritabilityChanged(self, false)
        } else if !writable, queue.byteCount <= low, state == .open {
            writable = true
            currentHandler?.onWritabilityChanged(self, true)
        }
    }

    /// Copies `bytes` into a new buffer and queues it (see `write(_:range:)`).
    @discardableResult
    public func write(_ bytes: [UInt8]) -> Bool {
        guard state == .open, isWritable else {
            if state == .open { refusedCount += 1 }
            return false
        }
        return write(SharedBytes(bytes))
    }

    func flushFromLoop() {
        flushScheduled = false
        flushNow()
    }

    private func flushNow() {
        guard state == .open || state == .closing else { return }
        var progressed = false
        while !queue.isEmpty {
            let (count, total) = queue.fill(loop.ioVectors, capacity: EventLoop.ioVectorCapacity)
            let result: IOResult<Int>
            do {
                result = try Syscall.writev(fd, loop.ioVectors, count: count)
            } catch {
                closeNow(error)
                return
            }
            guard case .done(let written) = result else { break }
            queue.consume(written)
            writtenCount += UInt64(written)
            progressed = true
            // A short write means the socket buffer is full; EPOLLOUT says when it is not.
            if written < total { break }
        }
        if progressed, options.idleCountsWrites { lastActivity = loop.now }
        awaitingWritable = !queue.isEmpty
        do {
            try updateInterest()
        } catch {
            closeNow(error)
            return
        }
        if !isWritable, queue.byteCount <= options.lowWatermark, state == .open {
            writable = true
            currentHandler?.onWritabilityChanged(self, true)
        }
        guard queue.isEmpty else { return }
        if state == .closing {
            closeNow(nil)
        } else if progressed, state == .open {
            currentHandler?.onDrained(self)
        }
    }

    // MARK: events

    func handleEvents(_ events: UInt32) {
        if state == .connecting {
            finishConnect()
            return
        }
        let failed = events & (Epoll.error | Epoll.hangUp) != 0
        if state == .open, events & Epoll.input != 0 || failed {
            if !readingPaused {
                readAvailable()
            } else if failed {
                // Nobody will read what is left, and a level-triggered hang-up would be
                // reported again on every iteration.
                closeNow(pendingSocketError())
                return
            }
        }
        if state == .open || state == .closing, events & Epoll.output != 0 || failed {
            flushNow()
        }
    }

    func closeForShutdown() {
        if state == .open { currentHandler?.onShutdown(self) }
        flushNow()
        closeNow(.loopShutdown)
    }

    private func pendingSocketError() -> NetError? {
        guard let code = try? Syscall.socketError(fd), code != 0 else { return nil }
        return .syscall(call: "read", errno: code)
    }

    private func updateInterest() throws(NetError) {
        guard sourceID != 0 else { return }
        var wanted: UInt32 = 0
        if state == .connecting || awaitingWritable { wanted |= Epoll.output }
        if state == .open, !readingPaused { wanted |= Epoll.input }
        guard wanted != interest else { return }
        try loop.reregister(fd, id: sourceID, events: wanted)
        interest = wanted
    }

    // MARK: idle timeout

    private func armIdleTimer(fresh: Bool) {
        if fresh {
            idleTimer?.cancel()
            idleTimer = nil
            lastActivity = loop.now
        }
        guard let timeout = idleTimeout, state == .open || state == .closing else { return }
        let limit = EventLoop.micros(timeout)
        let idleFor = loop.now > lastActivity ? loop.now - lastActivity : 0
        idleTimer = loop.schedule(afterMicros: limit > idleFor ? limit - idleFor : 0) { [self] in
            checkIdle()
        }
    }

    /// One timer per connection, re-armed for the remaining time when bytes moved since
    /// it was set, instead of a reschedule on every read.
    private func checkIdle() {
        idleTimer = nil
        guard let timeout = idleTimeout, state == .open || state == .closing else { return }
        if loop.now >= lastActivity + EventLoop.micros(timeout) {
            closeNow(.timedOut("idle connection from \(peerAddress) (no data for \(timeout))"))
        } else {
            armIdleTimer(fresh: false)
        }
    }

    // MARK: closing

    /// Graceful close: stops reading, sends what is queued, then closes (`onClose(nil)`).
    /// Idempotent. Loop thread only.
    public func close() {
        switch state {
        case .closed, .closing:
            return
        case .connecting:
            closeNow(.connectionClosed)
        case .open:
            if queue.isEmpty {
                closeNow(nil)
            } else {
                currentState = .closing
                try? updateInterest()
                if !flushScheduled, !awaitingWritable {
                    flushScheduled = true
                    loop.flushLater(self)
                }
            }
        }
    }

    /// Closes at once, dropping what is queued; `onClose` gets `error`. Loop thread only.
    public func abort(_ error: NetError? = nil) {
        closeNow(error)
    }

    private func closeNow(_ error: NetError?) {
        guard state != .closed else { return }
        let wasConnecting = state == .connecting
        currentState = .closed
        idleTimer?.cancel()
        idleTimer = nil
        connectTimer?.cancel()
        connectTimer = nil
        if sourceID != 0 {
            loop.deregister(fd, id: sourceID)
            sourceID = 0
        }
        if fd >= 0 {
            try? Syscall.close(fd)
            fd = -1
        }
        queue.removeAll()
        if wasConnecting {
            let completion = connectCompletion
            connectCompletion = nil
            completion?(.failure(error ?? .connectionClosed))
        } else {
            let handler = currentHandler
            currentHandler = nil
            handler?.onClose(self, error)
        }
        let closed = onClosed
        onClosed = nil
        closed?()
    }
}
