import Foundation
import Glibc

/// A blocking TCP client for tests: connect to 127.0.0.1, send everything, receive with
/// a timeout. Small receive buffers make a player that stops reading stall quickly.
final class TestSocket {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    private(set) var fd: Int32

    init(port: UInt16, receiveBufferSize: Int32? = nil) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: errno \(errno)") }
        if var size = receiveBufferSize {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else {
            let code = errno
            Glibc.close(fd)
            throw Failure(description: "connect to port \(port): errno \(code)")
        }
    }

    deinit { close() }

    func close() {
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
    }

    /// Sends all of `bytes`; false when the peer has closed.
    @discardableResult
    func send(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if sent <= 0 { return false }
            offset += sent
        }
        return true
    }

    enum Received: Equatable {
        case bytes([UInt8])
        case timedOut
        /// The peer closed (orderly or reset).
        case closed
    }

    /// Waits up to `timeout` for bytes.
    func receive(timeout: Double, max: Int = 256 * 1024) -> Received {
        var pollFD = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let ready = poll(&pollFD, 1, Int32(timeout * 1000))
        guard ready > 0 else { return .timedOut }
        var buffer = [UInt8](repeating: 0, count: max)
        let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, max, 0) }
        guard count > 0 else { return .closed }
        return .bytes(Array(buffer[0..<count]))
    }

    /// True when the peer closes the connection within `timeout` (bytes before that are skipped).
    func closesWithin(_ timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            switch receive(timeout: deadline.timeIntervalSinceNow) {
            case .closed: return true
            case .timedOut: return false
            case .bytes: continue
            }
        }
        return false
    }
}
