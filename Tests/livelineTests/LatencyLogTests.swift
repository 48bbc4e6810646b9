import Foundation
import LiveTestSupport
import Testing

/// `liveline guest --latency-log FILE`: glass-to-glass per shown frame.
@Suite("guest --latency-log", .serialized)
struct LatencyLogTests {
    @Test("one line per shown frame: wall clock, capture time, their difference in ms")
    func linePerFrame() throws {
        let server = try Server()
        defer { server.background.stop() }
        let host = try Background(CLI.liveline, ["host", server.url("latency"), "--size", "640x360", "--duration", "8"])
        defer { host.stop() }
        Thread.sleep(forTimeInterval: 1)
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let log = dir.appendingPathComponent("latency.log").path
        let guest = try CLI.liveline("guest", server.url("latency"), "--frames", "45", "--stats", "json", "--latency-log", log)
        #expect(guest.status == 0, "stderr: \(guest.stderr)")
        let lines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 45, "\(lines.count) lines")
        var previousWall: UInt64 = 0
        for line in lines {
            let fields = line.split(separator: " ")
            try #require(fields.count == 3, "line: \(line)")
            let wall = try #require(UInt64(fields[0])), capture = try #require(UInt64(fields[1]))
            let latency = try #require(Double(fields[2]))
            #expect(abs(latency - Double(Int64(wall) - Int64(capture)) / 1000) < 0.06, "line: \(line)")
            #expect(latency > 0 && latency < 2000, "line: \(line)")
            #expect(wall >= previousWall, "shown out of order: \(line)")
            previousWall = wall
        }
    }

    @Test("a latency log needs a play: with --no-play it is a usage error (2)")
    func needsPlay() throws {
        let result = try CLI.liveline("guest", "rtmp://127.0.0.1:1/live/x", "--apply", "--no-play", "--latency-log", "/tmp/x.log")
        #expect(result.status == 2, "stderr: \(result.stderr)")
        #expect(result.stderr.contains("--latency-log"), "stderr: \(result.stderr)")
    }

    @Test("a latency log that cannot be written ends the run with 1 and says which file")
    func unwritable() throws {
        let result = try CLI.liveline("guest", "rtmp://127.0.0.1:1/live/x", "--latency-log", "/nonexistent-dir/x.log")
        #expect(result.status == 1, "stderr: \(result.stderr)")
        #expect(result.stderr.contains("/nonexistent-dir/x.log"), "stderr: \(result.stderr)")
    }
}
