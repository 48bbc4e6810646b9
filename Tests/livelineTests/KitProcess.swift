import Foundation
import Testing

/// A `liveline` process whose stdout JSON lines are collected with the time each arrived,
/// for tests that look at events as they happen; its stderr is kept as text.
final class KitProcess: @unchecked Sendable {
    // @unchecked: `lines` and `errorText` are guarded by `lock`.
    let process = Process()
    private let output = Pipe()
    private let errors = Pipe()
    private let lock = NSLock()
    private var lines: [(time: Date, object: [String: Any])] = []
    private var errorText = ""

    /// `input`: the process's stdin (a `Pipe` to type into, `FileHandle.nullDevice`);
    /// nil: the test's own.
    init(_ arguments: [String], input: Any? = nil) throws {
        process.executableURL = URL(fileURLWithPath: CLI.liveline)
        process.arguments = arguments
        process.standardOutput = output
        process.standardError = errors
        if let input { process.standardInput = input }
        try process.run()
        let errorHandle = errors.fileHandleForReading
        Thread.detachNewThread { [self] in
            while true {
                let data = errorHandle.availableData
                if data.isEmpty { break }
                lock.lock()
                errorText += String(decoding: data, as: UTF8.self)
                lock.unlock()
            }
        }
        let handle = output.fileHandleForReading
        Thread.detachNewThread { [self] in
            var buffer = Data()
            while true {
                let data = handle.availableData
                if data.isEmpty { break }
                buffer.append(data)
                while let newline = buffer.firstIndex(of: 0x0A) {
                    let line = buffer[buffer.startIndex..<newline]
                    buffer.removeSubrange(buffer.startIndex...newline)
                    if let object = try? JSONSerialization.jsonObject(with: line) as? [String: Any] {
                        lock.lock()
                        lines.append((Date(), object))
                        lock.unlock()
                    }
                }
            }
        }
    }

    /// Every JSON line so far, with its arrival time.
    var events: [(time: Date, object: [String: Any])] {
        lock.lock()
        defer { lock.unlock() }
        return lines
    }

    /// The `event` names in arrival order.
    var names: [String] { events.compactMap { $0.object["event"] as? String } }

    /// Waits until `predicate` holds for some line; that line's time, or nil on timeout.
    func waitFor(timeout: TimeInterval, _ predicate: ([String: Any]) -> Bool) -> Date? {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let hit = events.first(where: { predicate($0.object) }) { return hit.time }
            Thread.sleep(forTimeInterval: 0.05)
        }
        return nil
    }

    /// What the process wrote to stderr so far.
    var stderr: String {
        lock.lock()
        defer { lock.unlock() }
        return errorText
    }

    /// Waits until stderr contains `text`.
    func waitForError(_ text: String, timeout: TimeInterval) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if stderr.contains(text) { return true }
            Thread.sleep(forTimeInterval: 0.05)
        }
        return stderr.contains(text)
    }

    /// SIGTERM and wait.
    @discardableResult
    func stop() -> Int32 {
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        Thread.sleep(forTimeInterval: 0.2)
        return process.terminationStatus
    }

    deinit { if process.isRunning { process.terminate() } }
}

/// A TCP proxy on loopback for network trouble: it limits the client→server direction
/// to a bit rate, and can hold the server→client bytes for a while and then release
/// them at once (a stall and a burst).
final class TroubleProxy: @unchecked Sendable {
    // @unchecked: `holdUntil` is guarded by `lock`; each pump thread owns its sockets.
    let port: Int
    private let listener: Int32
    private let upstreamPort: Int
    private let upstreamBitsPerSecond: Double?
    private let lock = NSLock()
    private var holdUntil: Date?
    private var closed = false
    /// The client and server sockets of the live connections; the server sockets of the
    /// cut ones, left open.
    private var connections: [(client: Int32, server: Int32)] = []
    private var abandoned: Set<Int32> = []

    init(upstreamPort: Int, upstreamBitsPerSecond: Double? = nil) throws {
        self.upstreamPort = upstreamPort
        self.upstreamBitsPerSecond = upstreamBitsPerSecond
        // A small receive window, as on a real narrow link: otherwise loopback's
        // auto-tuned buffers hide megabytes of backlog from the sender.
        (listener, port) = try Self.listen(receiveBuffer: 32 << 10)
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    /// A TCP socket listening on a free port of 127.0.0.1, and that port.
    static func listen(receiveBuffer: Int32? = nil) throws -> (socket: Int32, port: Int) {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        if var window = receiveBuffer {
            setsockopt(listener, SOL_SOCKET, SO_RCVBUF, &window, socklen_t(MemoryLayout<Int32>.size))
        }
        var address = Self.loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        let listening = bound == 0 ? Glibc.listen(listener, 16) : -1
        guard listening == 0 else {
            let code = errno
            Glibc.close(listener)
            throw ProxyError.listen(errno: code)
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        return (listener, Int(UInt16(bigEndian: address.sin_port)))
    }

    /// From now on, server→client bytes are kept for `seconds` and then sent at once.
    func hold(seconds: Double) {
        lock.lock()
        holdUntil = Date().addingTimeInterval(seconds)
        lock.unlock()
    }

    /// Drops every client's connection while the server's side stays open and silent: to
    /// the server the clients look alive but gone quiet (a dead link not yet noticed).
    /// Later connections pass through as before.
    func cutClients() {
        lock.lock()
        let cutting = connections
        connections = []
        abandoned.formUnion(cutting.map(\.server))
        lock.unlock()
        for connection in cutting { shutdown(connection.client, Int32(SHUT_RDWR)) }
    }

    enum ProxyError: Error { case listen(errno: Int32) }

    func close() {
        lock.lock()
        closed = true
        lock.unlock()
        shutdown(listener, Int32(SHUT_RDWR))
        Glibc.close(listener)
    }

    deinit { close() }

    /// A socket connected to 127.0.0.1:`port`, or nil (closed) when the connect failed.
    static func connect(toPort port: Int) -> Int32? {
        let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = loopback(port: UInt16(port))
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(server, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            Glibc.close(server)
            return nil
        }
        return server
    }

    /// 127.0.0.1:`port` as a socket address.
    private static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }

    private func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            if client < 0 { return }
            guard let server = Self.connect(toPort: upstreamPort) else {
                Glibc.close(client)
                continue
            }
            lock.lock()
            connections.append((client, server))
            lock.unlock()
            Thread.detachNewThread { [self] in pump(from: client, to: server, limited: true, serverSide: server) }
            Thread.detachNewThread { [self] in pump(from: server, to: client, limited: false, serverSide: server) }
        }
    }

    private func pump(from source: Int32, to destination: Int32, limited: Bool, serverSide: Int32) {
        defer {
            lock.lock()
            let keepServer = abandoned.contains(serverSide)
            lock.unlock()
            for fd in [source, destination] where !(keepServer && fd == serverSide) { shutdown(fd, Int32(SHUT_RDWR)) }
        }
        var buffer = [UInt8](repeating: 0, count: limited ? 1400 : 65536)
        var held: [UInt8] = []
        let started = Date()
        var sent = 0.0
        while true {
            let n = recv(source, &buffer, buffer.count, 0)
            if n <= 0 { return }
            if limited, let rate = upstreamBitsPerSecond {
                // Send no faster than the rate allows since the start.
                sent += Double(n) * 8
                let due = sent / rate - Date().timeIntervalSince(started)
                if due > 0 { Thread.sleep(forTimeInterval: due) }
            }
            held.append(contentsOf: buffer[0..<n])
            if !limited {
                lock.lock()
                let until = holdUntil
                lock.unlock()
                if let until, Date() < until { continue }
            }
            var offset = 0
            while offset < held.count {
                let w = held[offset...].withUnsafeBytes { send(destination, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                if w <= 0 { return }
                offset += w
            }
            held.removeAll(keepingCapacity: true)
        }
    }
}
