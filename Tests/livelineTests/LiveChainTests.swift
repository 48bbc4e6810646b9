import Foundation
import Testing

/// Hoster → LiveLine's server → players, all real processes on loopback.
@Suite("host → serve → guest / ffmpeg", .serialized)
struct LiveChainTests {
    static func summary(_ stdout: String) throws -> [String: Any] {
        let line = try #require(stdout.split(separator: "\n").last { $0.contains("\"event\":\"summary\"") })
        return try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
    }

    @Test("(e) the guest decodes the hoster's stream through liveline serve, with latency from the SEI")
    func hostServeGuest() throws {
        let server = try Server()
        defer { server.background.stop() }
        let host = try Background(CLI.liveline, ["host", server.url("e"), "--size", "640x360", "--duration", "8"])
        defer { host.stop() }
        Thread.sleep(forTimeInterval: 1)
        let guest = try CLI.liveline("guest", server.url("e"), "--duration", "3", "--stats", "json")
        #expect(guest.status == 0, "stderr: \(guest.stderr)")
        let summary = try Self.summary(guest.stdout)
        #expect((summary["frames"] as? Int ?? 0) >= 60, "\(summary)")
        #expect(summary["width"] as? Int == 640 && summary["height"] as? Int == 360)
        let p50 = try #require(summary["latencyP50Ms"] as? Double, "latency missing: \(summary)")
        let p95 = try #require(summary["latencyP95Ms"] as? Double)
        #expect(p50 > 0 && p50 <= p95 && p95 < 1000, "p50 \(p50) p95 \(p95)")
        #expect(summary["firstFrameMs"] is Double)
    }

    @Test("(f) a guest joining mid-stream shows its first frame within 500 ms (GOP cache)")
    func joinMidStream() throws {
        let server = try Server()
        defer { server.background.stop() }
        // A 4-second keyframe interval: without the GOP cache a late player would wait seconds.
        let host = try Background(CLI.liveline, ["host", server.url("f"), "--size", "640x360", "--keyint", "4",
                                                 "--duration", "10"])
        defer { host.stop() }
        Thread.sleep(forTimeInterval: 2.5)
        let guest = try CLI.liveline("guest", server.url("f"), "--frames", "10", "--stats", "json")
        #expect(guest.status == 0, "stderr: \(guest.stderr)")
        let summary = try Self.summary(guest.stdout)
        let first = try #require(summary["firstFrameMs"] as? Double)
        #expect(first < 500, "first frame after \(first) ms")
        #expect(summary["frames"] as? Int == 10)
    }

    @Test("(b) ffmpeg decodes what liveline host pushes through liveline serve, without errors")
    func ffmpegPlays() throws {
        let server = try Server()
        defer { server.background.stop() }
        let host = try Background(CLI.liveline, ["host", server.url("b"), "--size", "640x360", "--duration", "8"])
        defer { host.stop() }
        Thread.sleep(forTimeInterval: 1)
        let ffmpeg = try CLI.run("/usr/bin/ffmpeg", ["-v", "error", "-nostdin", "-i", server.url("b"),
                                                     "-frames:v", "90", "-f", "null", "-"])
        #expect(ffmpeg.status == 0)
        #expect(ffmpeg.stderr.isEmpty, "ffmpeg reported: \(ffmpeg.stderr)")
        let probe = try CLI.run("/usr/bin/ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries",
                                                    "stream=codec_name,width,height", "-of", "csv=p=0", server.url("b")])
        #expect(probe.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "h264,640,360")
    }
}
