import Foundation
import Glibc
import LiveCore

/// A listening TCP socket. It accepts on one loop of its group and hands each new
/// connection to the next loop round-robin, where `onAccept` runs; beyond
/// `maxConnections` open connections it accepts and closes at once (counted in
/// `refusedCount`), so a flood cannot exhaust descriptors or memory.
public final class TCPListener: EventLoopSource, @unchecked Sendable {
    // @unchecked: `fd`, `sourceID` and `acceptPaused` are touched only on `loop`'s
    // thread; the counters only under `lock`.

    /// The bound address; with port 0 it carries the port the kernel chose.
    public let localAddress: SocketAddress
    public let maxConnections: Int?
    public let options: TCPConnectionOptions
    /// The loop that accepts.
    public let loop: EventLoop
    private let group: EventLoopGroup
    private let onAccept: @Sendable (TCPConnection) -> Void

    private var fd: Int32
    private var sourceID: UInt64 = 0
    private let lock = NSLock()
    private var open = 0
    private var refused = 0
    private var accepted = 0

    /// Binds `host:port` (SO_REUSEADDR; port 0 picks a free port, see `localPort`) and
    /// starts accepting. `onAccept` runs on the new connection's loop thread before any
    /// read: set `connection.handler` there. Throws when socket, bind or listen fail.
    public static func bind(host: String, port: UInt16, group: EventLoopGroup,
                            options: TCPConnectionOptions = TCPConnectionOptions(),
                            maxConnections: Int? = nil, backlog: Int32 = 511,
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
        let listener = TCPListener(fd: fd, address: bound, group: group, options: options,
                                   maxConnections: maxConnections, onAccept: onAccept)
        let loop = listener.loop
        let scheduled = loop.execute {
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

    private init(fd: Int32, address: SocketAddress, group: EventLoopGroup, options: TCPConnectionOptions,
                 maxConnections: Int?, onAccept: @escaping @Sendable (TCPConnection) -> Void) {
        self.fd = fd
        self.localAddress = address
        self.group = group
        self.loop = group.next()
        self.options = options
        self.maxConnections = maxConnections
        self.onAccept = onAccept
    }

    deinit {
        if fd >= 0 { try? Syscall.close(fd) }
    }

    public var localPort: UInt16 { localAddress.port }

    /// Connections accepted and not yet closed.
    public var connectionCount: Int { counter { $0.open } }
    /// Connections closed at once because `maxConnections` were open.
    public var refusedCount: Int { counter { $0.refused } }
    /// Connections handed to `onAccept` so far.
    public var acceptedCount: Int { counter { $0.accepted } }

    private func counter(_ read: (TCPListener) -> Int) -> Int {
        lock.lock()
        defer { lock.unlock() }
        return read(self)
    }

    /// Stops accepting and closes the listening socket; open connections stay open.
    /// Called from any thread.
    public func close() {
        loop.execute { self.closeOnLoop() }
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

    func handleEvents(_ events: UInt32) {
        while fd >= 0 {
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
        lock.lock()
        let full = maxConnections.map { open >= $0 } ?? false
        if full {
            refused += 1
        } else {
            open += 1
        }
        lock.unlock()
        if full {
            try? Syscall.close(client)
            return
        }
        let peer = (try? Syscall.peerAddress(client))?.description ?? "unknown"
        let target = group.next()
        let handed = target.execute { self.adopt(client, peer: peer, on: target) }
        if !handed {
            try? Syscall.close(client)
            connectionClosed()
        }
    }

    private func adopt(_ client: Int32, peer: String, on target: EventLoop) {
        let connection = TCPConnection(fd: client, loop: target, options: options, peerAddress: peer, state: .open)
        connection.onClosed = { [weak self] in self?.connectionClosed() }
        do {
            try connection.activate()
        } catch {
            connection.abort(error)
            return
        }
        lock.lock()
        accepted += 1
        lock.unlock()
        onAccept(connection)
    }

    private func connectionClosed() {
        lock.lock()
        open -= 1
        lock.unlock()
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
