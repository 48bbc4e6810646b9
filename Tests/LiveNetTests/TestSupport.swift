import Foundation
import Glibc
// Exported so every file of this target sees the shared helpers (`Locked`).
import LiveTestSupport
@testable import LiveNet

/// A one-shot (or counting) signal from a loop thread to the waiting test.
final class Signal: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)

    func fire() { semaphore.signal() }

    /// True when fired within `seconds`.
    func wait(seconds: Double = 10) -> Bool {
        semaphore.wait(timeout: .now() + seconds) == .success
    }
}

/// Polls `condition` until it holds or `seconds` pass.
func eventually(seconds: Double = 10, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if condition() { return true }
        usleep(2000)
    }
    return condition()
}

struct TestSocketError: Error, CustomStringConvertible {
    let description: String
}

/// A plain blocking socket, written without LiveNet so the tests check LiveNet against
/// an independent peer.
// @unchecked: used by one thread at a time (a test may hand it to a reader thread and stop touching it).
final class RawSocketClient: @unchecked Sendable {
    let fd: Int32
    private var buffered: [UInt8] = []

    /// Connects to 127.0.0.1:`port` (from `source`, another loopback address, when
    /// given); reads give up after `readTimeout` seconds.
    init(port: UInt16, readTimeout: Double = 5, receiveBuffer: Int32? = nil, source: String? = nil) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestSocketError(description: "socket: errno \(errno)") }
        if let source {
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            local.sin_addr.s_addr = inet_addr(source)
            let bound = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard bound == 0 else {
                let code = errno
                Glibc.close(fd)
                throw TestSocketError(description: "bind \(source): errno \(code)")
            }
        }
        var timeout = timeval(tv_sec: Int(readTimeout), tv_usec: Int((readTimeout - Double(Int(readTimeout))) * 1_000_000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        if var size = receiveBuffer {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let status = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard status == 0 else {
            let code = errno
            Glibc.close(fd)
            throw TestSocketError(description: "connect: errno \(code)")
        }
    }

    deinit { Glibc.close(fd) }

    func send(_ text: String) throws { try send(Array(text.utf8)) }

    func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard sent > 0 else { throw TestSocketError(description: "send: errno \(errno)") }
            offset += sent
        }
    }

    /// Reads once: the bytes, [] at end of stream, nil on timeout.
    func receive(max: Int = 65536) throws -> [UInt8]? {
        if !buffered.isEmpty {
            defer { buffered.removeAll() }
            return buffered
        }
        var bytes = [UInt8](repeating: 0, count: max)
        let count = bytes.withUnsafeMutableBytes { Glibc.recv(fd, $0.baseAddress, max, 0) }
        if count < 0 {
            if errno == EAGAIN || errno == EWOULDBLOCK { return nil }
            throw TestSocketError(description: "recv: errno \(errno)")
        }
        return Array(bytes[0..<count])
    }

    /// Reads until `count` bytes arrived (or the stream ended / timed out).
    func receive(exactly count: Int) throws -> [UInt8] {
        var result: [UInt8] = []
        while result.count < count {
            guard let chunk = try receive(max: count - result.count), !chunk.isEmpty else { break }
            result += chunk
        }
        return result
    }

    /// True when the peer closed the connection (a read returns end of stream).
    func readsEndOfStream() throws -> Bool {
        while true {
            guard let chunk = try receive() else { return false }
            if chunk.isEmpty { return true }
        }
    }

    /// Reads one HTTP response (head + Content-Length body, no body for a HEAD
    /// request's), keeping what follows.
    func receiveResponse(toHead: Bool = false) throws -> RawHTTPResponse {
        let separator: [UInt8] = Array("\r\n\r\n".utf8)
        while true {
            if let end = buffered.firstRange(of: separator) {
                let head = String(decoding: buffered[..<end.lowerBound], as: UTF8.self)
                var lines = head.components(separatedBy: "\r\n")
                let statusLine = lines.removeFirst().split(separator: " ", maxSplits: 2)
                var headers: [String: String] = [:]
                for line in lines {
                    let parts = line.split(separator: ":", maxSplits: 1)
                    headers[parts[0].lowercased()] = parts[1].trimmingCharacters(in: .whitespaces)
                }
                let length = toHead ? 0 : Int(headers["content-length"] ?? "0") ?? 0
                let bodyStart = end.upperBound
                while buffered.count < bodyStart + length {
                    guard let chunk = try receiveRaw(), !chunk.isEmpty else {
                        throw TestSocketError(description: "stream ended inside a body")
                    }
                    buffered += chunk
                }
                let body = Array(buffered[bodyStart..<(bodyStart + length)])
                buffered.removeFirst(bodyStart + length)
                return RawHTTPResponse(status: Int(statusLine[1]) ?? 0, headers: headers, body: body)
            }
            guard let chunk = try receiveRaw(), !chunk.isEmpty else {
                throw TestSocketError(description: "stream ended before a response head")
            }
            buffered += chunk
        }
    }

    private func receiveRaw() throws -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: 65536)
        let count = bytes.withUnsafeMutableBytes { Glibc.recv(fd, $0.baseAddress, 65536, 0) }
        if count < 0 {
            if errno == EAGAIN || errno == EWOULDBLOCK { return nil }
            throw TestSocketError(description: "recv: errno \(errno)")
        }
        return Array(bytes[0..<count])
    }
}

struct RawHTTPResponse {
    let status: Int
    let headers: [String: String]
    let body: [UInt8]
    var text: String { String(decoding: body, as: UTF8.self) }
}

/// Names of this process's threads (/proc/self/task/*/comm).
func threadNames() -> [String] {
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
    return tasks.compactMap {
        try? String(contentsOfFile: "/proc/self/task/\($0)/comm", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

/// A port that nothing listens on (bound, read, released).
func unusedPort() throws -> UInt16 {
    let group = EventLoopGroup(loops: [try EventLoop()])
    let listener = try TCPListener.bind(host: "127.0.0.1", port: 0, group: group) { _ in }
    let port = listener.localPort
    group.loops[0].shutdown()
    return port
}
