import Foundation
import Glibc
import LiveCore
import Synchronization

/// A listening TCP socket. It accepts on one loop of its group and hands each new
/// connection to the next loop round-robin, where `onAccept` runs. Beyond
/// `maxConnections` open connections, or `perAddress.maxConnections` from one client
/// address, it accepts and closes at once (counted in `refusedCount`), so a flood, or
/// one client holding every slot, cannot exhaust descriptors or memory or lock the
/// others out. A refused client is first sent the bytes `refusal` gives for the
/// reason, where the protocol has a way to say it (HTTP's 503). Refusals are logged as
/// warnings, at most one line a second per reason with the count since the last line.
public final class TCPListener: EventLoopSource, @unchecked Sendable {
    // @unchecked: `fd`, `sourceID`, `acceptPaused` and `refusalLogs` are touched only
    // on `loop`'s thread; the counters are in a Mutex.

    /// A cap on the connections one client may hold open.
    public struct PerAddressLimit: Sendable, Equatable {
        /// Open connections from one IPv4 address or one IPv6 /64; 0: no limit.
        public var maxConnections: Int
        /// Clients on 127.0.0.1 or ::1 are not counted: tools and tests on the machine
        /// itself, or a reverse proxy on the same host, through which every client
        /// shares that one address. Other loopback addresses (127.0.0.2...) count like
        /// any client, so the limit can be tried on one machine.
        public var exemptsLoopback: Bool

        public init(maxConnections: Int, exemptsLoopback: Bool = true) {
            precondition(maxConnections >= 0, "a per-address limit cannot be negative")
            self.maxConnections = maxConnections
            self.exemptsLoopback = exemptsLoopback
        }

        /// No per-address limit.
        public static let unlimited = PerAddressLimit(maxConnections: 0)
        /// What the relay's RTMP and HTTP listeners use unless told otherwise.
        public static let serverDefault = PerAddressLimit(maxConnections: 64)
    }

    /// Why a connection was refused at accept.
    public enum Refusal: Sendable, Hashable {
        /// `maxConnections` were open.
        case full
        /// The client's address already held `perAddress.maxConnections`.
        case tooManyFromAddress
    }

    /// The bound address; with port 0 it carries the port the kernel chose.
    public let localAddress: SocketAddress
    public let maxConnections: Int?
    public let perAddress: PerAddressLimit
    public let options: TCPConnectionOptions
    /// What the listener serves ("rtmp", "http"), at the head of its log lines.
    public let label: String
    /// The loop that accepts.
    public let loop: EventLoop
    private let group: EventLoopGroup
    private let onAccept: @Sendable (TCPConnection) -> Void
    private let refusal: (@Sendable (Refusal) -> [UInt8])?

    private var fd: Int32
    private var sourceID: UInt64 = 0
    /// What any thread may read or a connection's close may change.
    private struct Counters {
        var open = 0
        var refused = 0
        var refusedFromAddress = 0
        var accepted = 0
        /// Open connections per client key (`SocketAddress.clientKey`), only while a
        /// per-address limit is set; entries leave at zero.
        var openPerAddress: [String: Int] = [:]
    }

    private let counters = Mutex(Counters())
    /// Refusals not yet logged, per reason, and whether a timer will log them. Loop thread.
    private var refusalLogs: [Refusal: (throttle: LogThrottle, timerSet: Bool)] = [:]

    /// Binds `host:port` (SO_REUSEADDR; port 0 picks a free port, see `localPort`) and
    /// starts accepting. `onAccept` runs on the new connection's loop thread before any
    /// read: set `connection.handler` there. `refusal` gives the bytes a refused client
    /// is sent before the close (one non-blocking send; keep it small), nil: none.
    /// `label` names the listener in its log lines. Throws when socket, bind or listen fail.
    public static func bind(host: String, port: UInt16, group: EventLoopGroup, label: String = "listener",
                            options: TCPConnectionOptions = TCPConnectionOptions(),
                            maxConnections: Int? = nil, perAddress: PerAddressLimit = .unlimited,
                            backlog: Int32 = 511,
                            refusal: (@Sendable (Refusal) -> [UInt8])? = nil,
                            onAccept: @escaping @Sendable (TCPConnection) -> Void) throws(NetError) -> TCPListener {
        let address = try SocketAddress.resolve(host: host, port: port)
        let fd = try Syscall.socket(domain: address.family, type: Int32(SOCK_STREAM.rawValue))
        let bound: SocketAddress
        do {
            try Syscall.setOption(fd, level: SOL_SOCKET, name: SO_REUSEADDR, value: 1, call: "setsockopt(SO_REUSEADDR)")
            try Syscall.bind(fd, address)
            try Syscall.listen(fd, backlog: backlog)
            bound = try Syscall.localAddress(fd)
        } catch {
            try? Syscall.close(fd)
            throw error
        }
        let listener = TCPListener(fd: fd, address: bound, group: group, label: label, options: options,
                                   maxConnections: maxConnections, perAddress: perAddress,
                                   refusal: refusal, onAccept: onAccept)
        let loop = listener.loop
        let scheduled = loop.submit(bounded: false) {
            do {
                listener.sourceID = try loop.register(fd, events: Epoll.input, source: listener)
            } catch {
                Log.error("listener \(bound): \(error)")
                listener.closeOnLoop()
            }
        }
        if !scheduled {
            listener.closeOnLoop()
            throw NetError.loopShutdown
        }
        return listener
    }

    private init(fd: Int32, address: SocketAddress, group: EventLoopGroup, label: String, options: TCPConnectionOptions,
                 maxConnections: Int?, perAddress: PerAddressLimit, refusal: (@Sendable (Refusal) -> [UInt8])?,
                 onAccept: @escaping @Sendable (TCPConnection) -> Void) {
        self.fd = fd
        self.localAddress = address
        self.label = label
        self.group = group
        self.loop = group.next()
        self.options = options
        self.maxConnections = maxConnections
        self.perAddress = perAddress
        self.refusal = refusal
        self.onAccept = onAccept
    }

    deinit {
        if fd >= 0 { try? Syscall.close(fd) }
    }

    public var localPort: UInt16 { localAddress.port }

    /// Connections accepted and not yet closed.
    public var connectionCount: Int { counter { $0.open } }
    /// Connections closed at once because `maxConnections` were open or their address
    /// held its share (those also in `refusedFromAddressCount`).
    public var refusedCount: Int { counter { $0.refused } }
    /// Connections closed at once because their address held `perAddress.maxConnections`.
    public var refusedFromAddressCount: Int { counter { $0.refusedFromAddress } }
    /// Open connections from `address`'s client (its IPv4 address or IPv6 /64), as the
    /// per-address limit counts them (0 when no limit is set or the address is exempt).
    public func connectionCount(from address: SocketAddress) -> Int {
        counter { $0.openPerAddress[address.clientKey] ?? 0 }
    }
    /// Connections handed to `onAccept` so far.
    public var acceptedCount: Int { counter { $0.accepted } }

    private func counter(_ read: (Counters) -> Int) -> Int {
        counters.withLock { read($0) }
    }

    /// Stops accepting and closes the listening socket; open connections stay open.
    /// Called from any thread.
    public func close() {
        _ = loop.submit(bounded: false) { self.closeOnLoop() }
    }

    private func closeOnLoop() {
        if sourceID != 0 {
            loop.deregister(fd, id: sourceID)
            sourceID = 0
        }
        if fd >= 0 {
            try? Syscall.close(fd)
            fd = -1
        }
    }

    func closeForShutdown() {
        closeOnLoop()
    }

    /// At most this many accepts per wake-up: a flood of connections (each cheap to
    /// refuse, but thousands of them) must not hold the loop from the connections it
    /// already serves; level-triggered epoll reports the rest on the next iteration.
    static let acceptsPerWakeup = 64

    func handleEvents(_ events: UInt32) {
        var budget = Self.acceptsPerWakeup
        while fd >= 0, budget > 0 {
            budget -= 1
            let result: IOResult<Int32>
            do {
                result = try Syscall.accept(fd)
            } catch {
                switch error.errno {
                case ECONNABORTED, EPROTO:
                    continue  // that client gave up while queued; the next may be fine
                case EMFILE, ENFILE, ENOBUFS, ENOMEM:
                    // Level-triggered epoll would report the waiting client again at once;
                    // stop listening for a moment instead of spinning.
                    Log.warning("listener \(localAddress): \(error); pausing accept for 100 ms")
                    pauseAccepting()
                default:
                    Log.error("listener \(localAddress): \(error)")
                }
                return
            }
            guard case .done(let client) = result else { return }
            admit(client)
        }
    }

    private func admit(_ client: Int32) {
        let peer = try? Syscall.peerAddress(client)
        let counted = perAddress.maxConnections > 0 && !(perAddress.exemptsLoopback && (peer?.isLocalHost ?? false))
        let key = counted ? peer?.clientKey : nil
        let maxConnections = maxConnections, maxFromAddress = perAddress.maxConnections
        let refusedFor: Refusal? = counters.withLock { counters in
            var refusedFor: Refusal?
            if let maxConnections, counters.open >= maxConnections {
                refusedFor = .full
            } else if let key, counters.openPerAddress[key, default: 0] >= maxFromAddress {
                refusedFor = .tooManyFromAddress
                counters.refusedFromAddress += 1
            } else {
                counters.open += 1
                if let key { counters.openPerAddress[key, default: 0] += 1 }
            }
            if refusedFor != nil { counters.refused += 1 }
            return refusedFor
        }
        if let refusedFor {
            refuse(client, refusedFor)
            return
        }
        let peerText = peer?.description ?? "unknown"
        let target = group.next()
        let handed = target.execute { self.adopt(client, peer: peerText, key: key, on: target) }
        if !handed {
            refuse(client, .full)
            connectionClosed(key: key)
        }
    }

    /// Tells the client why (when the protocol has a way) and closes. The reply is small
    /// and the socket fresh, so one send fits its buffer; whatever it cannot take is
    /// dropped rather than waited for.
    private func refuse(_ client: Int32, _ reason: Refusal) {
        if let bytes = refusal?(reason), !bytes.isEmpty {
            _ = try? Syscall.sendOnce(client, bytes)
        }
        try? Syscall.close(client)
        logRefusal(reason)
    }

    /// Logs the refusal now, or leaves it to the timer that logs the rest of a burst.
    /// Loop thread.
    private func logRefusal(_ reason: Refusal) {
        var entry = refusalLogs[reason] ?? (LogThrottle(), false)
        defer { refusalLogs[reason] = entry }
        if let count = entry.throttle.record(nowMicros: Clock.monotonicMicros()) {
            return Log.warning(refusalLine(reason, count: count))
        }
        guard !entry.timerSet, let due = entry.throttle.dueMicros else { return }
        entry.timerSet = true
        let now = Clock.monotonicMicros()
        loop.schedule(after: .microseconds(Int64(due > now ? due - now : 0))) { [weak self] in
            guard let self, var entry = self.refusalLogs[reason] else { return }
            entry.timerSet = false
            if let count = entry.throttle.take(nowMicros: Clock.monotonicMicros()) {
                Log.warning(self.refusalLine(reason, count: count))
            }
            self.refusalLogs[reason] = entry
        }
    }

    private func refusalLine(_ reason: Refusal, count: Int) -> String {
        let connections = count == 1 ? "1 connection" : "\(count) connections"
        let why = switch reason {
        case .full: "\(maxConnections ?? 0) open, the most it takes"
        case .tooManyFromAddress: "their address already holds \(perAddress.maxConnections), the most one client may"
        }
        return "\(label) \(localAddress): refused \(connections) (\(why))"
    }

    private func adopt(_ client: Int32, peer: String, key: String?, on target: EventLoop) {
        let connection = TCPConnection(fd: client, loop: target, options: options, peerAddress: peer, state: .open)
        connection.onClosed = { [weak self] in self?.connectionClosed(key: key) }
        do {
            try connection.activate()
        } catch {
            connection.abort(error)
            return
        }
        counters.withLock { $0.accepted += 1 }
        onAccept(connection)
    }

    private func connectionClosed(key: String?) {
        counters.withLock { counters in
            counters.open -= 1
            if let key, let count = counters.openPerAddress[key] {
                counters.openPerAddress[key] = count > 1 ? count - 1 : nil
            }
        }
    }

    private func pauseAccepting() {
        guard sourceID != 0 else { return }
        try? loop.reregister(fd, id: sourceID, events: 0)
        loop.schedule(after: .milliseconds(100)) { [weak self] in
            guard let self, self.fd >= 0, self.sourceID != 0 else { return }
            try? self.loop.reregister(self.fd, id: self.sourceID, events: Epoll.input)
        }
    }
}
