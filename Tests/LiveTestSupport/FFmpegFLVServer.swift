import Foundation
import Glibc

/// ffmpeg serving a live FLV over HTTP (`-f flv -listen 1 http://127.0.0.1:PORT/x.flv`:
/// one client, a close-delimited HTTP/1.1 body): a 320x240 testsrc2 at 30 fps with a
/// keyframe a second and a 440 Hz AAC tone, paced by `-re`. ffmpeg's HTTP server takes
/// a single connection, so it is waited for by reading the kernel's socket table, never
/// by connecting.
public final class FFmpegFLVServer {
    public let port: Int
    private let process = Process()

    /// Starts ffmpeg on `port` (a free one when nil) and waits until it listens.
    public init(port: Int? = nil, seconds: Int = 20, size: String = "320x240") throws {
        self.port = try port ?? Self.freePort()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
        process.arguments = [
            "-nostdin", "-v", "error", "-re", "-f", "lavfi", "-i", "testsrc2=size=\(size):rate=30",
            "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000", "-t", "\(seconds)",
            "-c:v", "libx264", "-preset", "ultrafast", "-tune", "zerolatency", "-g", "30", "-c:a", "aac",
            "-f", "flv", "-listen", "1", "http://127.0.0.1:\(self.port)/x.flv",
        ]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(10)
        while !Self.isListening(self.port) {
            guard Date() < deadline, process.isRunning else {
                stop()
                throw Failure(description: "ffmpeg did not listen on port \(self.port)")
            }
            usleep(20_000)
        }
    }

    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// The stream's URL.
    public var url: String { "http://127.0.0.1:\(port)/x.flv" }

    public var isRunning: Bool { process.isRunning }

    /// SIGINT, then SIGKILL after two seconds (a child of a test thread may not see SIGINT).
    public func stop() {
        guard process.isRunning else { return }
        process.interrupt()
        for _ in 0..<40 where process.isRunning { usleep(50_000) }
        if process.isRunning { Glibc.kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    /// Kills it at once (a server that vanishes mid-stream).
    public func kill() {
        guard process.isRunning else { return }
        Glibc.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// True when a socket listens on 127.0.0.1 or any address at `port` (/proc/net/tcp,
    /// state 0A), found without connecting to it.
    public static func isListening(_ port: Int) -> Bool {
        guard let table = try? String(contentsOfFile: "/proc/net/tcp", encoding: .utf8) else { return false }
        let suffix = String(format: ":%04X", port)
        return table.split(separator: "\n").dropFirst().contains { line in
            let fields = line.split(separator: " ")
            return fields.count > 3 && fields[1].hasSuffix(suffix) && fields[3] == "0A"
        }
    }

    /// A TCP port nothing listens on right now (bound to port 0, then closed).
    public static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: errno \(errno)") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else { throw Failure(description: "bind: errno \(errno)") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
