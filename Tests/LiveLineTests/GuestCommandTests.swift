import Foundation
import Testing

/// `liveline guest` as a user runs it (the executable built next to the tests).
@Suite("liveline guest", .serialized)
struct GuestCommandTests {
    @Test("a URL that is neither rtmp:// nor http:// is a usage error: exit 2")
    func badURL() throws {
        let result = try Peers.run(Peers.liveline, ["guest", "ftp://127.0.0.1/live/x"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("is not an rtmp:// or http:// URL"), "\(result.stderr)")
        let missing = try Peers.run(Peers.liveline, ["guest"])
        #expect(missing.status == 2)
    }

    @Test("guest --apply whose line signaling cannot be reached: exit 1 with the reason, not 0")
    func applyWithoutSignaling() throws {
        // nginx-rtmp names no line, so --signal is taken as given; nothing listens there.
        let nginx = try Peers.NginxRTMP()
        defer { nginx.stop() }
        let started = Date()
        let result = try Peers.run(Peers.liveline, ["guest", nginx.url("x"), "--apply", "--no-play", "--reconnect-tries", "0",
                                                    "--signal", "ws://127.0.0.1:\(try Peers.freePort())/line", "--duration", "30"])
        // Before: exit 0 after the whole duration.
        #expect(result.status == 1, "stderr: \(result.stderr)")
        #expect(result.stderr.contains("the co-host line was lost"), "stderr: \(result.stderr)")
        #expect(Date().timeIntervalSince(started) < 20)
    }

    @Test("--stats json: a picture whose size changes mid-stream prints firstFrame and then a sizeChanged line with the new size")
    func sizeChangedLine() throws {
        let dir = try Peers.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let segments = try GuestKitTests.twoSizes(in: dir)
        let nginx = try Peers.NginxRTMP()
        defer { nginx.stop() }
        let ffmpeg = try Peers.Background("/usr/bin/ffmpeg", [
            "-nostdin", "-v", "error", "-re", "-i", segments, "-c", "copy", "-f", "flv", nginx.url("sizes"),
        ])
        defer { ffmpeg.stop() }
        Thread.sleep(forTimeInterval: 0.3)
        let result = try Peers.run(Peers.liveline, ["guest", nginx.url("sizes"), "--stats", "json", "--duration", "3.5"])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let events = result.text.split(separator: "\n").compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
        }
        let sizes = events.filter { ["firstFrame", "sizeChanged"].contains($0["event"] as? String) }
            .map { "\($0["event"]!) \($0["width"]!)x\($0["height"]!)" }
        #expect(sizes == ["firstFrame 320x240", "sizeChanged 480x270"], "\(result.text)")
    }

    @Test("connection refused: exit 1 with the reason and the URL")
    func refused() throws {
        let port = try Peers.freePort()
        let url = "rtmp://127.0.0.1:\(port)/live/x"
        let result = try Peers.run(Peers.liveline, ["guest", url, "--timeout", "2"])
        #expect(result.status == 1)
        #expect(result.stderr.contains(url))
        #expect(result.stderr.contains("Connection refused"))
    }

    @Test("liveline host RTMP_URL to a closed port: exit 1 naming the URL, at once")
    func hostRefused() throws {
        let port = try Peers.freePort()
        let url = "rtmp://127.0.0.1:\(port)/live/h"
        let started = Date()
        let result = try Peers.run(Peers.liveline, ["host", url, "--size", "320x240", "--duration", "5"])
        #expect(result.status == 1)
        #expect(result.stderr.contains(url))
        #expect(Date().timeIntervalSince(started) < 4)
    }

    @Test("--stats json ends in a summary with the required keys; with --y4m - it goes to stderr")
    func summaryLine() throws {
        let nginx = try Peers.NginxRTMP()
        defer { nginx.stop() }
        let host = try Peers.Background(Peers.liveline, ["host", nginx.url("cli"), "--size", "320x240", "--keyint", "1",
                                                         "--duration", "20"])
        defer { host.stop() }

        let result = try Peers.run(Peers.liveline, ["guest", nginx.url("cli"), "--frames", "30", "--stats", "json"])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let lines = result.text.split(separator: "\n").map(String.init)
        let last = try #require(lines.last)
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any])
        for key in ["event", "frames", "width", "height", "firstFrameMs", "latencyP50Ms", "latencyP95Ms"] {
            #expect(summary.keys.contains(key), "missing \(key) in \(summary)")
        }
        #expect(summary["event"] as? String == "summary")
        #expect((summary["frames"] as? Int ?? 0) >= 30)
        #expect(summary["width"] as? Int == 320 && summary["height"] as? Int == 240)
        #expect(summary["latencyP50Ms"] as? Double != nil)

        let piped = try Peers.run(Peers.liveline, ["guest", nginx.url("cli"), "--frames", "10", "--stats", "json", "--y4m", "-"])
        #expect(piped.status == 0, "stderr: \(piped.stderr)")
        #expect(piped.stdout.starts(with: Data("YUV4MPEG2 W320 H240 F30:1 Ip A1:1 C420jpeg\nFRAME\n".utf8)))
        let frameBytes = 6 + 320 * 240 * 3 / 2
        let header = "YUV4MPEG2 W320 H240 F30:1 Ip A1:1 C420jpeg\n".utf8.count
        #expect((piped.stdout.count - header) % frameBytes == 0)
        #expect((piped.stdout.count - header) / frameBytes >= 10)
        let lastError = try #require(piped.stderr.split(separator: "\n").last)
        let pipedSummary = try #require(try JSONSerialization.jsonObject(with: Data(lastError.utf8)) as? [String: Any])
        #expect(pipedSummary["event"] as? String == "summary")
    }
}
