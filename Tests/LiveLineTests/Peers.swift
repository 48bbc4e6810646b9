import Foundation
import Glibc
import LiveTestSupport
import Testing

/// Real peers the guest and publisher tests talk to: nginx with the RTMP module,
/// ffmpeg and ffprobe, each started on a free loopback port and stopped by the test.
enum Peers {
    static let nginxModule = "/usr/lib/nginx/modules/ngx_rtmp_module.so"

    enum Failure: Error, CustomStringConvertible {
        case notListening(String)
        var description: String {
            switch self {
            case .notListening(let what): what
            }
        }
    }

    /// A TCP port nothing listens on right now (bound to port 0, then closed).
    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #expect(fd >= 0, "socket: errno \(errno)")
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        #expect(bound == 0, "bind: errno \(errno)")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        #expect(named == 0)
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// True once something accepts TCP connections on 127.0.0.1:`port`.
    static func isListening(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        } == 0
    }

    /// ffmpeg pushing a live 640x360 testsrc2 (H.264, a keyframe a second) to `url`.
    static func testPattern(to url: String) throws -> Background {
        try Background("/usr/bin/ffmpeg", [
            "-nostdin", "-v", "error", "-re", "-f", "lavfi", "-i", "testsrc2=size=640x360:rate=30",
            "-c:v", "libx264", "-preset", "veryfast", "-tune", "zerolatency", "-g", "30", "-f", "flv", url,
        ])
    }

    static func temporaryDirectory() throws -> URL { try makeTemporaryDirectory(prefix: "liveline-guest-") }

    /// nginx-rtmp on a free port, `application live { live on; }`, stopped on `stop()`.
    final class NginxRTMP {
        let port: Int
        let prefix: URL
        private let process = Process()

        init() throws {
            port = try Peers.freePort()
            prefix = try Peers.temporaryDirectory()
            let logs = prefix.appendingPathComponent("logs")
            try FileManager.default.createDirectory(at: logs, withIntermediateDirectories: true)
            let conf = prefix.appendingPathComponent("nginx.conf")
            try """
                load_module \(Peers.nginxModule);
                worker_processes 1;
                error_log \(logs.path)/error.log warn;
                pid \(logs.path)/nginx.pid;
                events { worker_connections 64; }
                rtmp {
                    server {
                        listen 127.0.0.1:\(port);
                        chunk_size 4096;
                        application live { live on; }
                    }
                }
                """.write(to: conf, atomically: true, encoding: .utf8)
            process.executableURL = URL(fileURLWithPath: "/usr/sbin/nginx")
            process.arguments = ["-e", "\(logs.path)/startup.log", "-p", prefix.path, "-c", conf.path, "-g", "daemon off;"]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            for _ in 0..<100 where !Peers.isListening(port) {
                guard process.isRunning else { break }
                usleep(50_000)
            }
            guard Peers.isListening(port) else {
                let log = (try? String(contentsOf: logs.appendingPathComponent("startup.log"), encoding: .utf8)) ?? ""
                stop()
                throw Failure.notListening("nginx-rtmp did not listen on \(port): \(log)")
            }
        }

        func url(_ stream: String) -> String { "rtmp://127.0.0.1:\(port)/live/\(stream)" }

        /// The pids of the nginx master and its workers (to freeze them with SIGSTOP).
        func processes() throws -> [pid_t] {
            let master = try String(contentsOfFile: prefix.path + "/logs/nginx.pid", encoding: .utf8)
                .trimmingCharacters(in: .whitespacesAndNewlines)
            var pids: [pid_t] = []
            if let pid = pid_t(master) { pids.append(pid) }
            for entry in try FileManager.default.contentsOfDirectory(atPath: "/proc") {
                guard let pid = pid_t(entry),
                      let status = try? String(contentsOfFile: "/proc/\(entry)/status", encoding: .utf8) else { continue }
                if status.split(separator: "\n").contains(where: { $0 == "PPid:\t\(master)" }) { pids.append(pid) }
            }
            return pids
        }

        func stop() {
            if process.isRunning {
                process.terminate()
                process.waitUntilExit()
            }
            try? FileManager.default.removeItem(at: prefix)
        }
    }

    /// A child process whose output is discarded (ffmpeg pushing a test source).
    final class Background {
        private let process = Process()

        init(_ executable: String, _ arguments: [String]) throws {
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = arguments
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            process.standardInput = FileHandle.nullDevice
            try process.run()
        }

        var isRunning: Bool { process.isRunning }

        /// Its process id (to pause it with SIGSTOP).
        var pid: pid_t { process.processIdentifier }

        /// SIGINT first (a clean end), SIGKILL after two seconds: a child started from
        /// a test thread inherits that thread's blocked signal mask, so ffmpeg may never
        /// see SIGINT or SIGTERM.
        func stop() {
            if process.isRunning {
                process.interrupt()
                for _ in 0..<40 where process.isRunning { usleep(50_000) }
                if process.isRunning { kill(process.processIdentifier, SIGKILL) }
                process.waitUntilExit()
            }
        }
    }

    /// Runs a program to its end, reading both pipes while it runs.
    static func run(_ executable: String, _ arguments: [String]) throws -> ProcessOutput {
        try ProcessOutput.run(executable, arguments)
    }

    /// The built `liveline` executable next to the test bundle.
    static var liveline: String { BuildProducts.liveline }

    /// ffprobe's first video stream: codec, size and counted frames.
    static func probe(_ path: String, format: String? = nil) throws -> (codec: String, width: Int, height: Int, frames: Int) {
        try FFprobe.firstVideoStream(path, format: format)
    }
}

/// Polls `condition` every 20 ms until it holds (true) or `seconds` pass (false).
func eventually(_ seconds: Double = 5, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    repeat {
        if condition() { return true }
        Thread.sleep(forTimeInterval: 0.02)
    } while Date() < deadline
    return false
}
