import Foundation
import LiveTestSupport
import Testing

/// The hoster and the guest over a link whose capacity drops for a while
/// (scripts/netns-link: network namespaces, a veth pair, a tc token bucket; root).
@Suite("shaped link: host → serve → guest", .serialized,
       .enabled(if: ShapedLink.unavailable == nil, "needs root and network namespaces: \(ShapedLink.unavailable ?? "")"))
struct ShapedLinkTests {
    /// One `liveline --stats json` line of a run, with the wall time it stands for.
    struct Stats {
        let wall: Double
        let fields: [String: Any]
    }

    /// `command` in the background with its stdout in `path` and stderr in `path.err`.
    static func start(_ command: (String, [String]), stdout path: URL) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: command.0)
        process.arguments = command.1
        for file in [path.path, path.path + ".err"] {
            try #require(FileManager.default.createFile(atPath: file, contents: nil), "cannot create \(file)")
        }
        process.standardOutput = try FileHandle(forWritingTo: path)
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: path.path + ".err"))
        try process.run()
        return process
    }

    /// The hoster's `stats` lines; their `time` (seconds since the host started) put on
    /// the wall clock from `started`.
    static func hostStats(_ path: URL, started: Double) throws -> [Stats] {
        try String(contentsOf: path, encoding: .utf8).split(separator: "\n").compactMap { line in
            guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  object["event"] as? String == "stats", let time = object["time"] as? Double else { return nil }
            return Stats(wall: started + time, fields: object)
        }
    }

    /// The guest's `--latency-log`: (wall seconds when shown, latency ms) per frame.
    static func latencies(_ path: URL) throws -> [(wall: Double, ms: Double)] {
        try String(contentsOf: path, encoding: .utf8).split(separator: "\n").map { line in
            let parts = line.split(separator: " ")
            let wall = try #require(parts.count == 3 ? Double(parts[0]) : nil, "latency log line: \(line)")
            return (wall / 1e6, try #require(Double(parts[2])))
        }
    }

    /// A 5 s 640x360 clip with sound whose picture is grainy (noise on every frame), so
    /// the encoder spends the whole bitrate; the test pattern alone needs a tenth of it.
    static func grainyClip(in dir: URL) throws -> String {
        let path = dir.appendingPathComponent("grainy.mp4").path
        let made = try CLI.run("/usr/bin/ffmpeg", [
            "-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i", "testsrc2=size=640x360:rate=30,noise=alls=16:allf=t",
            "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000", "-t", "5", "-c:v", "libx264", "-preset", "ultrafast",
            "-crf", "20", "-g", "30", "-c:a", "aac", "-ac", "2", path,
        ])
        try #require(made.status == 0, "ffmpeg: \(made.stderr)")
        return path
    }

    @Test("30 s at 3 Mbit/s, 800 kbit/s for 10 s of it: the hoster's bitrate goes down in the dip and back up after it; the guest never shows a frame older than --buffer-ms + one keyframe interval")
    func bitrateFollowsTheLink() throws {
        let link = try ShapedLink()
        defer { link.remove() }
        try link.setRate(kbit: 3000)
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let clip = try Self.grainyClip(in: dir)

        let serveCommand = link.command(in: link.serverNamespace, CLI.liveline,
                                        ["serve", "--rtmp", "\(link.serverAddress):1935", "--http", "\(link.serverAddress):8080", "--no-auth"])
        let serve = try Background(serveCommand.0, serveCommand.1)
        defer { serve.stop() }
        _ = try serve.waitForLine(prefix: "ready")
        let url = "rtmp://\(link.serverAddress):1935/live/shaped"
        let bufferMs = 300, keyframeSeconds = 2.0
        let latencyLog = dir.appendingPathComponent("latency.log")
        let guest = try Self.start(link.command(in: link.serverNamespace, CLI.liveline, [
            "guest", url, "--stats", "json", "--buffer-ms", "\(bufferMs)", "--latency-log", latencyLog.path,
            "--timeout", "20", "--duration", "40",
        ]), stdout: dir.appendingPathComponent("guest.out"))
        defer { if guest.isRunning { guest.terminate() } }
        Thread.sleep(forTimeInterval: 1)

        let hostOut = dir.appendingPathComponent("host.out")
        let hostStarted = Date().timeIntervalSince1970
        let host = try Self.start(link.command(in: link.hosterNamespace, CLI.liveline, [
            "host", url, "--source", "file:\(clip)", "--size", "640x360", "--bitrate", "1500", "--keyint", "\(keyframeSeconds)",
            "--stats", "json", "--duration", "30",
        ]), stdout: hostOut)
        defer { if host.isRunning { host.terminate() } }
        // The schedule: 10 s at 3 Mbit/s, 10 s at 800 kbit/s, then 3 Mbit/s again.
        Thread.sleep(forTimeInterval: 10)
        let dipStart = Date().timeIntervalSince1970
        try link.setRate(kbit: 800)
        Thread.sleep(forTimeInterval: 10)
        let dipEnd = Date().timeIntervalSince1970
        try link.setRate(kbit: 3000)
        host.waitUntilExit()
        guest.waitUntilExit()
        let hostErrors = (try? String(contentsOfFile: hostOut.path + ".err", encoding: .utf8)) ?? ""
        #expect(host.terminationStatus == 0, "host: \(hostErrors)")

        let stats = try Self.hostStats(hostOut, started: hostStarted)
        func target(_ range: ClosedRange<Double>) -> [Int] {
            stats.filter { range.contains($0.wall) }.compactMap { $0.fields["targetKbps"] as? Int }
        }
        // Settled phases: a second for the change to show in the once-a-second figures.
        let before = try #require(target((dipStart - 4)...dipStart).max(), "host stats: \(stats.map(\.fields))")
        let during = try #require(target((dipStart + 2)...dipEnd).min(), "host stats: \(stats.map(\.fields))")
        let after = try #require(target((dipEnd + 3)...(hostStarted + 31)).max(), "host stats: \(stats.map(\.fields))")
        #expect(during < before, "target before the dip \(before) kbit/s, in it \(during)")
        #expect(during <= 800, "in an 800 kbit/s dip the target stayed at \(during) kbit/s")
        #expect(after > during && after > 800, "target in the dip \(during) kbit/s, after it at most \(after)")

        let frames = try Self.latencies(latencyLog)
        let bound = Double(bufferMs) + keyframeSeconds * 1000
        let oldest = try #require(frames.max { $0.ms < $1.ms }, "the guest showed no frame")
        #expect(oldest.ms <= bound, "a frame \(oldest.ms) ms old was shown \(oldest.wall - dipStart) s after the drop (bound \(bound) ms)")
        // The picture went on in every phase (a stream that stalled would show nothing old).
        for (name, range) in [("before", hostStarted...dipStart), ("during", dipStart...dipEnd), ("after", dipEnd...(dipEnd + 8))] {
            #expect(frames.contains { range.contains($0.wall) }, "no frame shown \(name) the dip")
        }
    }
}
