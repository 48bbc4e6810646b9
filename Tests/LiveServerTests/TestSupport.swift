import Foundation
import Testing
@testable import LiveServer

/// A relay on free ports for one test; `stop()` shuts it down.
func startRelay(_ configure: (inout RTMPServer.Configuration) -> Void = { _ in }) throws -> RelayServer {
    var rtmp = RTMPServer.Configuration(port: 0)
    configure(&rtmp)
    return try RelayServer(configuration: .init(rtmp: rtmp, httpPort: 0, loops: 2))
}

/// One blocking HTTP/1.0 GET (the server closes after answering): status and body.
func httpGet(port: UInt16, _ path: String, headers: [String] = []) throws -> (status: Int, body: String) {
    let socket = try TestSocket(port: port)
    let fields = (["Host: 127.0.0.1"] + headers).map { $0 + "\r\n" }.joined()
    socket.send(Array("GET \(path) HTTP/1.0\r\n\(fields)\r\n".utf8))
    var bytes: [UInt8] = []
    while case .bytes(let more) = socket.receive(timeout: 5) { bytes += more }
    let text = String(decoding: bytes, as: UTF8.self)
    let parts = text.components(separatedBy: "\r\n\r\n")
    let status = Int(parts[0].split(separator: " ").dropFirst().first ?? "") ?? 0
    return (status, parts.dropFirst().joined(separator: "\r\n\r\n"))
}

/// `GET /api/streams`, decoded (`headers`: an Authorization for a relay with auth on).
func apiStreams(_ relay: RelayServer, headers: [String] = []) throws -> [StreamStats] {
    let (status, body) = try httpGet(port: relay.httpPort, "/api/streams", headers: headers)
    #expect(status == 200)
    return try JSONDecoder().decode([StreamStats].self, from: Data(body.utf8))
}

/// True when this test binary runs with AddressSanitizer (its runtime is linked in).
let addressSanitizerIsOn = dlsym(nil, "__asan_init") != nil

/// The ports a `liveline serve` child prints on its ready line.
func servePorts(_ serve: ChildProcess) throws -> (rtmp: UInt16, http: UInt16) {
    #expect(eventually(10) { serve.stdout.contains("\n") })
    let line = serve.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    let match = try #require(try Regex(#"^ready rtmp://[^ ]+:(\d+) http://[^ ]+:(\d+)$"#).wholeMatch(in: line), "\(line) \(serve.stderr)")
    return (try #require(UInt16(match.output[1].substring ?? "")), try #require(UInt16(match.output[2].substring ?? "")))
}

/// Polls `condition` every 50 ms until it holds or `timeout` passes.
func eventually(_ timeout: Double, _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if try condition() { return true }
        usleep(50_000)
    }
    return try condition()
}

/// A child process (ffmpeg, ffprobe, liveline) with its output collected in the background.
final class ChildProcess: @unchecked Sendable {
    // @unchecked: `stdoutData`/`stderrData` are written by the reader threads and read
    // only under `lock`.
    let process = Process()
    private let lock = NSLock()
    private var stdoutData = Data()
    private var stderrData = Data()
    private let readers = DispatchGroup()

    init(_ executable: String, _ arguments: [String]) throws {
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        collect(out.fileHandleForReading) { self.stdoutData.append($0) }
        collect(err.fileHandleForReading) { self.stderrData.append($0) }
    }

    private func collect(_ handle: FileHandle, into append: @escaping @Sendable (Data) -> Void) {
        readers.enter()
        Thread.detachNewThread { [lock, readers] in
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                lock.lock()
                append(chunk)
                lock.unlock()
            }
            readers.leave()
        }
    }

    var stdout: String { lock.lock(); defer { lock.unlock() }; return String(decoding: stdoutData, as: UTF8.self) }
    var stderr: String { lock.lock(); defer { lock.unlock() }; return String(decoding: stderrData, as: UTF8.self) }

    /// Waits for the exit (killing the process after `timeout`); the exit status, or nil when it had to be killed.
    func wait(timeout: Double) -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning, Date() < deadline { usleep(20_000) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            _ = readers.wait(timeout: .now() + 2)
            return nil
        }
        process.waitUntilExit()
        _ = readers.wait(timeout: .now() + 2)
        return process.terminationStatus
    }

    func signal(_ number: Int32) { kill(process.processIdentifier, number) }
}

let ffmpegPath = "/usr/bin/ffmpeg"
let ffprobePath = "/usr/bin/ffprobe"
var ffmpegAvailable: Bool { FileManager.default.isExecutableFile(atPath: ffmpegPath) }

/// ffmpeg pushing testsrc2 in real time to `url`.
func ffmpegPublisher(_ url: String, seconds: Double, size: String = "640x360") throws -> ChildProcess {
    try ChildProcess(ffmpegPath, [
        "-hide_banner", "-loglevel", "error", "-re", "-f", "lavfi", "-i", "testsrc2=size=\(size):rate=30",
        "-t", String(seconds), "-c:v", "libx264", "-preset", "veryfast", "-tune", "zerolatency", "-g", "30",
        "-f", "flv", url,
    ])
}

/// The process's resident memory in kilobytes (VmRSS).
func residentKilobytes() -> Int {
    let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
    return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
}
