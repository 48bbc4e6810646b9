import Foundation
import Glibc
import LiveTestSupport
import Testing
@testable import LiveNet

/// Echoes what it reads; pauses reading while its own write queue is full, so nothing
/// is refused and nothing grows.
final class EchoHandler: TCPConnectionHandler, Sendable {
    let closes: Locked<[NetError?]>

    init(closes: Locked<[NetError?]> = Locked([])) { self.closes = closes }

    func onRead(_ connection: TCPConnection, _ bytes: UnsafeRawBufferPointer) {
        connection.write(SharedBytes(bytes))
    }

    func onWritabilityChanged(_ connection: TCPConnection, _ isWritable: Bool) {
        if isWritable { connection.resumeReading() } else { connection.pauseReading() }
    }

    func onClose(_ connection: TCPConnection, _ error: NetError?) {
        closes.update { $0.append(error) }
    }
}

/// Sends `total` bytes of a pseudo-random pattern as zero-copy ranges of one shared
/// buffer, and checks every echoed byte against the pattern.
final class PatternClient: TCPConnectionHandler, @unchecked Sendable {
    // @unchecked: the counters are touched only on the connection's loop; the test reads them after `done`.
    static let period = 1_000_003  // prime, so no power-of-two chunking lines up with it
    static let chunk = 64 * 1024
    static let pattern: SharedBytes = {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        return SharedBytes(count: period + chunk) { bytes in
            for index in 0..<period {
                state ^= state << 13
                state ^= state >> 7
                state ^= state << 17
                bytes[index] = UInt8(truncatingIfNeeded: state)
            }
            // The tail repeats the head, so any range start..<start+chunk follows the cycle.
            for index in period..<bytes.count { bytes[index] = bytes[index - period] }
        }
    }()

    let total: Int
    let done = Signal()
    private(set) var sent = 0
    private(set) var received = 0
    private(set) var firstMismatch: Int?
    private(set) var closeError: NetError?
    private(set) var closed = false

    init(total: Int) { self.total = total }

    func pump(_ connection: TCPConnection) {
        while sent < total, connection.isWritable {
            let count = min(Self.chunk, total - sent)
            let start = sent % Self.period
            guard connection.write(Self.pattern, range: start..<(start + count)) else { return }
            sent += count
        }
    }

    func onRead(_ connection: TCPConnection, _ bytes: UnsafeRawBufferPointer) {
        var offset = 0
        while offset < bytes.count {
            let start = (received + offset) % Self.period
            let run = min(bytes.count - offset, Self.period - start)
            let same = Self.pattern.withUnsafeBytes { memcmp(bytes.baseAddress! + offset, $0.baseAddress! + start, run) == 0 }
            if !same, firstMismatch == nil { firstMismatch = received + offset }
            offset += run
        }
        received += bytes.count
        if received >= total {
            connection.close()
        }
    }

    func onWritabilityChanged(_ connection: TCPConnection, _ isWritable: Bool) {
        if isWritable { pump(connection) }
    }

    func onClose(_ connection: TCPConnection, _ error: NetError?) {
        closed = true
        closeError = error
        done.fire()
    }
}

/// Writes `chunk`-sized buffers every 2 ms whenever the queue takes them, to a peer that
/// does not read, until the queue has stayed full for 50 ticks in a row; records what
/// the queue did.
final class FloodingHandler: TCPConnectionHandler, @unchecked Sendable {
    // @unchecked: `timer`, `fullTicks` and `flooding` are touched only on the connection's loop.
    let chunk: SharedBytes
    let stalled = Signal()
    let resumed = Signal()
    let stats = Locked((maxQueued: 0, notWritableEvents: 0, writableEventsAfterStall: 0, refusedWhileFull: 0, acceptedWhileFull: 0))
    private var timer: TimerHandle?
    private var fullTicks = 0
    private var flooding = true

    init(chunkSize: Int) {
        chunk = SharedBytes(count: chunkSize) { $0.initializeMemory(as: UInt8.self, repeating: 0x5A) }
    }

    func start(_ connection: TCPConnection) {
        tick(connection)
    }

    private func tick(_ connection: TCPConnection) {
        guard connection.state == .open, flooding else { return }
        fullTicks = connection.isWritable ? 0 : fullTicks + 1
        while connection.isWritable {
            connection.write(chunk)
            stats.update { $0.maxQueued = max($0.maxQueued, connection.queuedBytes) }
        }
        // Knock on the full queue: every attempt must be refused.
        let accepted = connection.write(chunk)
        stats.update {
            if accepted { $0.acceptedWhileFull += 1 } else { $0.refusedWhileFull += 1 }
            $0.maxQueued = max($0.maxQueued, connection.queuedBytes)
        }
        if fullTicks == 50 {
            flooding = false
            stalled.fire()
            return
        }
        timer = connection.loop.schedule(after: .milliseconds(2)) { [weak self] in self?.tick(connection) }
    }

    func onRead(_ connection: TCPConnection, _ bytes: UnsafeRawBufferPointer) {}

    func onWritabilityChanged(_ connection: TCPConnection, _ isWritable: Bool) {
        let afterStall = !flooding
        stats.update {
            if !isWritable { $0.notWritableEvents += 1 } else if afterStall { $0.writableEventsAfterStall += 1 }
        }
        if isWritable, afterStall { resumed.fire() }
    }

    func onClose(_ connection: TCPConnection, _ error: NetError?) {
        timer?.cancel()
    }
}

/// Counts what arrives and signals once `total` bytes are in.
final class CountingSink: TCPConnectionHandler, Sendable {
    let received: Locked<Int>
    let total: Int
    let done: Signal

    init(received: Locked<Int>, total: Int, done: Signal) {
        self.received = received
        self.total = total
        self.done = done
    }

    func onRead(_ connection: TCPConnection, _ bytes: UnsafeRawBufferPointer) {
        if received.update({ $0 += bytes.count; return $0 }) >= total { done.fire() }
    }

    func onClose(_ connection: TCPConnection, _ error: NetError?) {}
}

/// Says hello to every accepted connection and records how each one closed.
final class GreetingHandler: TCPConnectionHandler, Sendable {
    let closes: Locked<[NetError?]>

    init(closes: Locked<[NetError?]>) { self.closes = closes }

    func onRead(_ connection: TCPConnection, _ bytes: UnsafeRawBufferPointer) {}

    func onClose(_ connection: TCPConnection, _ error: NetError?) {
        closes.update { $0.append(error) }
    }
}

@Suite("TCPConnection")
struct TCPConnectionTests {
    @Test("an echo server and a client move 50 MB over loopback, every byte verified")
    func echoFiftyMegabytes() throws {
        let group = try EventLoopGroup(count: 2, name: "echo")
        defer { group.shutdown() }
        let serverCloses = Locked<[NetError?]>([])
        let listener = try TCPListener.bind(host: "127.0.0.1", port: 0, group: group) { connection in
            connection.handler = EchoHandler(closes: serverCloses)
        }
        #expect(listener.localPort != 0)

        let total = 50 * 1024 * 1024
        let client = PatternClient(total: total)
        let connected = Locked<TCPConnection?>(nil)
        TCPConnection.connect(host: "127.0.0.1", port: listener.localPort, on: group.loops[1]) { result in
            guard case .success(let connection) = result else { return client.done.fire() }
            connected.update { $0 = connection }
            connection.handler = client
            client.pump(connection)
        }
        #expect(client.done.wait(seconds: 120))
        let connection = try #require(connected.value)
        #expect(client.closed)
        #expect(client.closeError == nil)
        #expect(client.received == total)
        #expect(client.firstMismatch == nil)
        #expect(connection.bytesWritten == UInt64(total))
        #expect(connection.bytesRead == UInt64(total))
        #expect(connection.peerAddress == "127.0.0.1:\(listener.localPort)")
        #expect(eventually { serverCloses.value.count == 1 })
        #expect(serverCloses.value.first == .some(nil))
        #expect(eventually { listener.connectionCount == 0 })
    }

    @Test("a writer that refills its queue only when it turns writable again never stalls")
    func refillFromWritabilityChange() throws {
        let group = try EventLoopGroup(count: 1, name: "refill")
        defer { group.shutdown() }
        // The writer has a loop of its own, so no other descriptor's events wake it.
        let writerLoop = try EventLoop(name: "refill-writer")
        writerLoop.start()
        defer { writerLoop.shutdown() }
        let total = 16 * 1024 * 1024
        let received = Locked(0)
        let done = Signal()
        let listener = try TCPListener.bind(host: "127.0.0.1", port: 0, group: group) { connection in
            connection.handler = CountingSink(received: received, total: total, done: done)
        }
        // Small watermarks: the kernel takes a whole queue in one flush, so the refill
        // happens from inside the loop's flush pass.
        let options = TCPConnectionOptions(highWatermark: 64 * 1024, lowWatermark: 16 * 1024)
        let writer = PatternClient(total: total)
        TCPConnection.connect(host: "127.0.0.1", port: listener.localPort, on: writerLoop, options: options) { result in
            guard case .success(let connection) = result else { return }
            connection.handler = writer
            writer.pump(connection)
        }
        #expect(done.wait(seconds: 20))
        #expect(received.value == total)
    }

    @Test("a peer that stops reading turns isWritable false and the queue stays under high watermark + one buffer")
    func watermarksBoundTheQueue() throws {
        let group = try EventLoopGroup(count: 1, name: "watermark")
        defer { group.shutdown() }
        let high = 256 * 1024
        let low = 64 * 1024
        let chunk = 48 * 1024
        let flooder = FloodingHandler(chunkSize: chunk)
        let options = TCPConnectionOptions(highWatermark: high, lowWatermark: low)
        let listener = try TCPListener.bind(host: "127.0.0.1", port: 0, group: group, options: options) { connection in
            connection.handler = flooder
            flooder.start(connection)
        }
        let peer = try RawSocketClient(port: listener.localPort, readTimeout: 0.5, receiveBuffer: 4096)

        #expect(flooder.stalled.wait())
        let stalled = flooder.stats.value
        #expect(stalled.notWritableEvents >= 1)
        #expect(stalled.maxQueued >= high)
        #expect(stalled.maxQueued <= high + chunk)
        #expect(stalled.refusedWhileFull >= 50)
        #expect(stalled.acceptedWhileFull == 0)

        // The peer reads again: the queue drains below the low watermark and says so.
        let drain = Thread {
            while let bytes = try? peer.receive(), !bytes.isEmpty {}
        }
        drain.start()
        #expect(flooder.resumed.wait())
        #expect(flooder.stats.value.writableEventsAfterStall == 1)
        #expect(flooder.stats.value.maxQueued <= high + chunk)
    }

    @Test("the listener refuses connections beyond its cap and admits again after one closes")
    func connectionCap() throws {
        let group = try EventLoopGroup(count: 2, name: "cap")
        defer { group.shutdown() }
        let closes = Locked<[NetError?]>([])
        let listener = try TCPListener.bind(host: "127.0.0.1", port: 0, group: group, maxConnections: 2) { connection in
            connection.handler = GreetingHandler(closes: closes)
            connection.write(Array("hello".utf8))
        }
        let first = try RawSocketClient(port: listener.localPort)
        let second = try RawSocketClient(port: listener.localPort)
        #expect(try first.receive(exactly: 5) == Array("hello".utf8))
        #expect(try second.receive(exactly: 5) == Array("hello".utf8))
        #expect(listener.connectionCount == 2)

        let third = try RawSocketClient(port: listener.localPort)
        #expect(try third.readsEndOfStream())
        #expect(listener.refusedCount == 1)
        #expect(listener.acceptedCount == 2)

        Glibc.shutdown(first.fd, Int32(SHUT_RDWR))
        #expect(eventually { listener.connectionCount == 1 })
        let fourth = try RawSocketClient(port: listener.localPort)
        #expect(try fourth.receive(exactly: 5) == Array("hello".utf8))
        #expect(listener.refusedCount == 1)
    }

    @Test("an idle connection is closed after the timeout; a busy one is not")
    func idleTimeout() throws {
        let group = try EventLoopGroup(count: 1, name: "idle")
        defer { group.shutdown() }
        let closes = Locked<[NetError?]>([])
        let options = TCPConnectionOptions(idleTimeout: .milliseconds(400))
        let listener = try TCPListener.bind(host: "127.0.0.1", port: 0, group: group, options: options) { connection in
            connection.handler = GreetingHandler(closes: closes)
        }
        let client = try RawSocketClient(port: listener.localPort, readTimeout: 0.05)
        // Busy for twice the timeout: a byte every 50 ms keeps it open.
        for _ in 0..<16 {
            try client.send([1])
            #expect(try client.receive() == nil)
        }
        #expect(closes.value.isEmpty)

        // Then silent: closed by the server with a timeout.
        let silentClient = client
        #expect(eventually(seconds: 5) { (try? silentClient.receive()) == .some([]) })
        #expect(eventually { closes.value.count == 1 })
        guard case .some(.timedOut) = closes.value.first else {
            Issue.record("expected a timeout, got \(closes.value)")
            return
        }
    }

    @Test("with idleCountsWrites false, a peer that only receives is closed as idle; one that answers stays")
    func idleCountsOnlyReceivedBytes() throws {
        let group = try EventLoopGroup(count: 1, name: "idle-rx")
        defer { group.shutdown() }
        let closes = Locked<[NetError?]>([])
        // The server writes a byte every 50 ms (as the RTMP server pings); that alone
        // must not keep a silent peer.
        let options = TCPConnectionOptions(idleTimeout: .milliseconds(400), idleCountsWrites: false)
        let listener = try TCPListener.bind(host: "127.0.0.1", port: 0, group: group, options: options) { connection in
            connection.handler = GreetingHandler(closes: closes)
            @Sendable func ping() {
                guard connection.state == .open else { return }
                connection.write([0x2A])
                connection.loop.schedule(after: .milliseconds(50)) { ping() }
            }
            ping()
        }
        let answering = try RawSocketClient(port: listener.localPort, readTimeout: 0.05)
        let silent = try RawSocketClient(port: listener.localPort, readTimeout: 0.05)
        let start = Date()
        var silentClosedAfter: Double?
        // 1.2 s: three idle timeouts. The answering client sends a byte every ~100 ms.
        while Date().timeIntervalSince(start) < 1.2 {
            _ = try answering.receive()
            try answering.send([1])
            if silentClosedAfter == nil, (try? silent.receive()) == .some([]) {
                silentClosedAfter = Date().timeIntervalSince(start)
            }
            usleep(50_000)
        }
        let closedAfter = try #require(silentClosedAfter, "the silent peer was kept alive by the server's own writes")
        #expect(closedAfter >= 0.35)
        #expect(closes.value.count == 1)
        guard case .some(.timedOut) = closes.value.first else {
            Issue.record("expected a timeout, got \(closes.value)")
            return
        }
        #expect(listener.connectionCount == 1)
    }

    @Test("connect to a closed port fails with ECONNREFUSED naming connect")
    func connectRefused() throws {
        let port = try unusedPort()
        let loop = try EventLoop(name: "refused")
        loop.start()
        defer { loop.shutdown() }
        let outcome = Locked<Result<TCPConnection, NetError>?>(nil)
        let done = Signal()
        TCPConnection.connect(host: "127.0.0.1", port: port, on: loop) { result in
            outcome.update { $0 = result }
            done.fire()
        }
        #expect(done.wait())
        guard case .failure(let error) = try #require(outcome.value) else {
            Issue.record("connected to a port nobody listens on")
            return
        }
        #expect(error == .syscall(call: "connect", errno: ECONNREFUSED))
    }

    @Test("shutdown closes every connection and listener and ends the loop threads")
    func shutdownClosesEverything() throws {
        let group = try EventLoopGroup(count: 2, name: "closing")
        let closes = Locked<[NetError?]>([])
        let listener = try TCPListener.bind(host: "127.0.0.1", port: 0, group: group) { connection in
            connection.handler = GreetingHandler(closes: closes)
        }
        let clients = try (0..<3).map { _ in try RawSocketClient(port: listener.localPort) }
        let outgoing = Signal()
        TCPConnection.connect(host: "127.0.0.1", port: listener.localPort, on: group.loops[0]) { result in
            if case .success(let connection) = result {
                connection.handler = GreetingHandler(closes: closes)
                outgoing.fire()
            }
        }
        #expect(outgoing.wait())
        #expect(eventually { listener.connectionCount == 4 })
        #expect(threadNames().contains("closing-0"))

        group.shutdown()

        #expect(closes.value.count == 5)  // 4 accepted + the outgoing one
        #expect(closes.value.allSatisfy { $0 == .loopShutdown })
        for client in clients { #expect(try client.readsEndOfStream()) }
        #expect(group.loops.allSatisfy { !$0.isRunning })
        // pthread_join returns once the kernel clears the thread's tid, which it does a
        // moment before the task leaves /proc/self/task: wait for that, briefly.
        #expect(eventually { !threadNames().contains("closing-0") && !threadNames().contains("closing-1") })
        #expect(throws: TestSocketError.self) { try RawSocketClient(port: listener.localPort) }
    }
}
