import Foundation
import LiveTestSupport
import Testing

/// A `liveline` (or peer) process running beside a test, stopped when the test ends.
final class Background {
    let process = Process()
    private let output = Pipe()
    private let errors = Pipe()

    init(_ executable: String, _ arguments: [String]) throws {
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = output
        process.standardError = errors
        try process.run()
    }

    /// Reads stdout until a line starting with `prefix` (e.g. serve's "ready" line).
    func waitForLine(prefix: String, timeout: TimeInterval = 10) throws -> String {
        let handle = output.fileHandleForReading
        var buffer = ""
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let data = handle.availableData
            if data.isEmpty { break }
            buffer += String(decoding: data, as: UTF8.self)
            if let line = buffer.split(separator: "\n").first(where: { $0.hasPrefix(prefix) }) { return String(line) }
        }
        throw BackgroundError.noLine(prefix: prefix, seen: buffer)
    }

    /// SIGTERM, then the exit status.
    @discardableResult
    func stop() -> Int32 {
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        return process.terminationStatus
    }

    deinit { if process.isRunning { process.terminate() } }

    enum BackgroundError: Error { case noLine(prefix: String, seen: String) }
}

/// `liveline serve` on free ports.
struct Server {
    let background: Background
    let rtmpPort: Int
    let httpPort: Int

    /// `extra`: more serve options (`--auth-secret-file FILE`).
    init(_ extra: [String] = []) throws {
        background = try Background(CLI.liveline, ["serve", "--rtmp", "127.0.0.1:0", "--http", "127.0.0.1:0"] + extra)
        let ready = try background.waitForLine(prefix: "ready")
        // ready rtmp://127.0.0.1:PORT http://127.0.0.1:PORT
        let ports = ready.split(separator: " ").dropFirst().compactMap { $0.split(separator: ":").last.flatMap { Int($0) } }
        try #require(ports.count == 2, "ready line: \(ready)")
        rtmpPort = ports[0]
        httpPort = ports[1]
    }

    func url(_ stream: String) -> String { "rtmp://127.0.0.1:\(rtmpPort)/live/\(stream)" }

    /// Players of `stream` on this serve's `/api/streams` (0 when it cannot be asked).
    func players(of stream: String) -> Int {
        guard let page = try? ProcessOutput.run("/usr/bin/curl", ["-s", "--max-time", "2", "http://127.0.0.1:\(httpPort)/api/streams"]),
              let list = try? JSONSerialization.jsonObject(with: page.stdout) as? [[String: Any]] else { return 0 }
        return list.first { $0["name"] as? String == stream }?["players"] as? Int ?? 0
    }

    /// Kills this serve with SIGKILL (no goodbye to anyone), waits `pause` seconds and
    /// starts a new one on the same RTMP port, with `extra` options; HTTP on `http`
    /// (0: any free port). Returns the new serve once it is ready.
    func killAndRestart(after pause: Double = 1, http: Int = 0, _ extra: [String] = []) throws -> Background {
        kill(background.process.processIdentifier, SIGKILL)
        background.process.waitUntilExit()
        Thread.sleep(forTimeInterval: pause)
        let restarted = try Background(CLI.liveline, ["serve", "--rtmp", "127.0.0.1:\(rtmpPort)", "--http", "127.0.0.1:\(http)"] + extra)
        _ = try restarted.waitForLine(prefix: "ready")
        return restarted
    }
}
