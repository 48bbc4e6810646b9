import Foundation
import Glibc
import LiveTestSupport

/// A TCP proxy on a free loopback port in front of `upstreamPort` that records what each
/// client sends and cuts the first connection (both sides) once it has forwarded
/// `cutFirstAfter` client bytes: a publisher whose connection alone drops while the
/// server stays up. Blocking sockets, two threads per connection; `stop()` ends them.
final class CutProxy: @unchecked Sendable {
    // @unchecked: the mutable state is in `state`, under its lock.
    let port: Int
    private let upstreamPort: Int
    private let cutFirstAfter: Int
    private let listener: Int32
    private struct State {
        var sent: [[UInt8]] = []
        var sockets: [Int32] = []
        /// Directions finished per connection: its sockets close when both are.
        var finished: [Int] = []
        var stopped = false
    }
    private let state = Locked(State())

    init(upstreamPort: Int, cutFirstAfter: Int) throws {
        self.upstreamPort = upstreamPort
        self.cutFirstAfter = cutFirstAfter
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        listener = fd
        var address = CutProxy.loopback(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ready = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && listen(fd, 8) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard fd >= 0, ready else { throw Failure("proxy listen: errno \(errno)") }
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread { [self] in acceptLoop() }.start()
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// The bytes each client sent so far, by connection in accept order.
    var clientBytes: [[UInt8]] { state.update { $0.sent } }

    func stop() {
        let sockets = state.update { state -> [Int32] in
            state.stopped = true
            return state.sockets
        }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        for fd in sockets { shutdown(fd, Int32(SHUT_RDWR)) }
    }

    static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return address
    }

    private func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            guard client >= 0 else { return }
            let upstream = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = CutProxy.loopback(port: upstreamPort)
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(upstream, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
                }
            }
            let index = state.update { state -> Int? in
                guard !state.stopped, connected else { return nil }
                state.sent.append([])
                state.finished.append(0)
                state.sockets += [client, upstream]
                return state.sent.count - 1
            }
            guard let index else {
                close(client)
                close(upstream)
                continue
            }
            let limit = index == 0 ? cutFirstAfter : Int.max
            Thread { [self] in
                pump(from: client, to: upstream, record: index, limit: limit)
                finish(index, client, upstream)
            }.start()
            Thread { [self] in
                pump(from: upstream, to: client, record: nil, limit: .max)
                finish(index, client, upstream)
            }.start()
        }
    }

    /// Closes a connection's sockets once both of its directions have ended.
    private func finish(_ index: Int, _ client: Int32, _ upstream: Int32) {
        let both = state.update { state -> Bool in
            state.finished[index] += 1
            guard state.finished[index] == 2 else { return false }
            state.sockets.removeAll { $0 == client || $0 == upstream }
            return true
        }
        if both {
            close(client)
            close(upstream)
        }
    }

    /// Copies until either side ends or `limit` recorded bytes went through, then shuts
    /// both sockets so the other direction ends too.
    private func pump(from source: Int32, to destination: Int32, record: Int?, limit: Int) {
        var buffer = [UInt8](repeating: 0, count: 16 << 10)
        var forwarded = 0
        while forwarded < limit {
            let want = min(buffer.count, limit - forwarded)
            let count = buffer.withUnsafeMutableBytes { recv(source, $0.baseAddress, want, 0) }
            guard count > 0 else { break }
            if let record { state.update { $0.sent[record] += buffer[0..<count] } }
            let written = buffer.withUnsafeBytes { send(destination, $0.baseAddress, count, Int32(MSG_NOSIGNAL)) }
            guard written == count else { break }
            forwarded += count
        }
        shutdown(source, Int32(SHUT_RDWR))
        shutdown(destination, Int32(SHUT_RDWR))
    }
}
