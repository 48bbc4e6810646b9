import Foundation
import Glibc
import LiveTestSupport
import Testing
@testable import LiveNet

@Suite("TCPListener limits")
struct TCPListenerLimitTests {
    @Test("one address holds at most perAddress.maxConnections; the next is told why and closed, and a slot freed is reusable")
    func perAddressLimit() throws {
        let group = try EventLoopGroup(count: 2, name: "per-ip")
        defer { group.shutdown() }
        let closes = Locked<[NetError?]>([])
        let listener = try TCPListener.bind(host: "127.0.0.1", port: 0, group: group,
                                            perAddress: .init(maxConnections: 2, exemptsLoopback: false),
                                            refusal: { reason in Array("refused: \(reason)\n".utf8) }) { connection in
            connection.handler = GreetingHandler(closes: closes)
            connection.write(Array("hello".utf8))
        }
        let first = try RawSocketClient(port: listener.localPort)
        let second = try RawSocketClient(port: listener.localPort)
        #expect(try first.receive(exactly: 5) == Array("hello".utf8))
        #expect(try second.receive(exactly: 5) == Array("hello".utf8))
        let loopback = try SocketAddress.resolve(host: "127.0.0.1", port: 0)
        #expect(listener.connectionCount(from: loopback) == 2)

        let third = try RawSocketClient(port: listener.localPort)
        let said = try third.receive(exactly: 64)
        #expect(String(decoding: said, as: UTF8.self) == "refused: tooManyFromAddress\n")
        #expect(try third.readsEndOfStream())
        #expect(listener.refusedFromAddressCount == 1)
        #expect(listener.refusedCount == 1)

        Glibc.shutdown(first.fd, Int32(SHUT_RDWR))
        #expect(eventually { listener.connectionCount(from: loopback) == 1 })
        let fourth = try RawSocketClient(port: listener.localPort)
        #expect(try fourth.receive(exactly: 5) == Array("hello".utf8))
        #expect(listener.refusedFromAddressCount == 1)
    }

    @Test("127.0.0.1 is not counted against a per-address limit unless asked; other loopback addresses are")
    func localHostExempt() throws {
        let group = try EventLoopGroup(count: 1, name: "per-ip-lo")
        defer { group.shutdown() }
        let listener = try TCPListener.bind(host: "127.0.0.1", port: 0, group: group,
                                            perAddress: .init(maxConnections: 1)) { connection in
            connection.handler = GreetingHandler(closes: Locked([]))
            connection.write(Array("hi".utf8))
        }
        let local = try (0..<3).map { _ in try RawSocketClient(port: listener.localPort) }
        for client in local { #expect(try client.receive(exactly: 2) == Array("hi".utf8)) }
        #expect(listener.refusedCount == 0)

        let other = try RawSocketClient(port: listener.localPort, source: "127.0.0.2")
        #expect(try other.receive(exactly: 2) == Array("hi".utf8))
        let second = try RawSocketClient(port: listener.localPort, source: "127.0.0.2")
        #expect(try second.readsEndOfStream())
        #expect(listener.refusedFromAddressCount == 1)
        let third = try RawSocketClient(port: listener.localPort, source: "127.0.0.3")
        #expect(try third.receive(exactly: 2) == Array("hi".utf8))
    }

    @Test("a refused connection beyond maxConnections gets the refusal bytes for .full")
    func fullIsToldWhy() throws {
        let group = try EventLoopGroup(count: 1, name: "full-why")
        defer { group.shutdown() }
        let listener = try TCPListener.bind(host: "127.0.0.1", port: 0, group: group, maxConnections: 1,
                                            refusal: { reason in Array("\(reason)".utf8) }) { connection in
            connection.handler = GreetingHandler(closes: Locked([]))
            connection.write(Array("hi".utf8))
        }
        let first = try RawSocketClient(port: listener.localPort)
        #expect(try first.receive(exactly: 2) == Array("hi".utf8))
        let second = try RawSocketClient(port: listener.localPort)
        #expect(try second.receive(exactly: 4) == Array("full".utf8))
        #expect(try second.readsEndOfStream())
    }

    @Test("clients are counted by IPv4 address or IPv6 /64; IPv4-mapped IPv6 counts as its IPv4 address")
    func clientKeys() throws {
        #expect(try SocketAddress.resolve(host: "192.0.2.7", port: 1).clientKey == "192.0.2.7")
        #expect(try SocketAddress.resolve(host: "::ffff:192.0.2.7", port: 1).clientKey == "192.0.2.7")
        let a = try SocketAddress.resolve(host: "2001:db8:1:2:aaaa::1", port: 1)
        let b = try SocketAddress.resolve(host: "2001:db8:1:2:bbbb::9", port: 2)
        let other = try SocketAddress.resolve(host: "2001:db8:1:3::1", port: 1)
        #expect(a.clientKey == "2001:db8:1:2::/64")
        #expect(a.clientKey == b.clientKey)
        #expect(a.clientKey != other.clientKey)
        #expect(try SocketAddress.resolve(host: "127.8.9.10", port: 1).isLoopback)
        #expect(try SocketAddress.resolve(host: "::1", port: 1).isLoopback)
        #expect(try SocketAddress.resolve(host: "::ffff:127.0.0.1", port: 1).isLoopback)
        #expect(try SocketAddress.resolve(host: "::ffff:127.0.0.1", port: 1).isLocalHost)
        #expect(try SocketAddress.resolve(host: "::1", port: 1).isLocalHost)
        #expect(try !SocketAddress.resolve(host: "127.0.0.2", port: 1).isLocalHost)
        #expect(try !SocketAddress.resolve(host: "10.0.0.1", port: 1).isLoopback)
        #expect(try !SocketAddress.resolve(host: "::2", port: 1).isLoopback)
    }

    @Test("a flood of waiting connections is accepted a bounded batch per loop iteration, so the loop's other work runs in between")
    func acceptsInBatches() throws {
        let loop = try EventLoop(name: "accept-batch")
        loop.start()
        let group = EventLoopGroup(loops: [loop])
        defer { loop.shutdown() }
        let listener = try TCPListener.bind(host: "127.0.0.1", port: 0, group: group) { connection in
            connection.handler = GreetingHandler(closes: Locked([]))
        }
        #expect(eventually { loop.pendingTaskCount == 0 })
        // Hold the loop while 300 clients finish their handshakes in the kernel backlog.
        let held = DispatchSemaphore(value: 0), holding = DispatchSemaphore(value: 0)
        loop.execute {
            holding.signal()
            held.wait()
        }
        holding.wait()
        let clients = try (0..<300).map { _ in try RawSocketClient(port: listener.localPort) }
        let seenByNextTask = Locked(-1)
        loop.execute { seenByNextTask.update { $0 = listener.connectionCount } }
        held.signal()
        #expect(eventually { listener.acceptedCount == 300 })
        // The task queued while the clients waited ran after the first batch, not after all 300.
        #expect(seenByNextTask.value == TCPListener.acceptsPerWakeup)
        withExtendedLifetime(clients) {}
    }
}
