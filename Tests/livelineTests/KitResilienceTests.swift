import Foundation
import Testing

/// The kits under trouble, as real processes on loopback: the server restarting, a
/// narrow uplink, a stalled downlink; and the event order of a normal session.
@Suite("hoster and guest kits: reconnect, congestion, latency control, events", .serialized)
struct KitResilienceTests {
    private static func int(_ value: Any?) -> Int? { (value as? Int) ?? (value as? Double).map { Int($0) } }

    @Test("a normal session reports ok → status… → closed on both sides, in that order")
    func eventOrder() throws {
        let server = try Server()
        defer { server.background.stop() }
        let host = try KitProcess(["host", server.url("order"), "--size", "320x240", "--duration", "6", "--stats", "json"])
        defer { host.stop() }
        #expect(host.waitFor(timeout: 10) { $0["event"] as? String == "ok" } != nil)
        let guest = try KitProcess(["guest", server.url("order"), "--duration", "3", "--stats", "json"])
        guest.process.waitUntilExit()
        host.process.waitUntilExit()
        Thread.sleep(forTimeInterval: 0.3)
        let hostNames = host.names.filter { ["ok", "stats", "closed", "summary"].contains($0) }
        #expect(hostNames.first == "ok", "\(host.names)")
        #expect(hostNames.dropFirst().prefix { $0 == "stats" }.count >= 3, "\(host.names)")
        #expect(Array(hostNames.suffix(2)) == ["closed", "summary"], "\(host.names)")
        let guestNames = guest.names
        #expect(Array(guestNames.prefix(2)) == ["ok", "firstFrame"], "\(guestNames)")
        #expect(guestNames.contains("stats"))
        let closed = try #require(guest.events.first { $0.object["event"] as? String == "closed" })
        #expect(Self.int(closed.object["code"]) == 0)
        #expect(Array(guestNames.suffix(2)) == ["closed", "summary"], "\(guestNames)")
    }

    @Test("the server restarts on the same port: the hoster reconnects and the guest's frames resume within 3 s")
    func reconnect() throws {
        let server = try Server()
        let url = server.url("again")
        let host = try KitProcess(["host", url, "--size", "320x240", "--keyint", "1", "--stats", "json"])
        defer { host.stop() }
        #expect(host.waitFor(timeout: 10) { $0["event"] as? String == "ok" } != nil)
        let guest = try KitProcess(["guest", url, "--stats", "json"])
        defer { guest.stop() }
        #expect(guest.waitFor(timeout: 10) { $0["event"] as? String == "firstFrame" } != nil)
        Thread.sleep(forTimeInterval: 1)
        let restarted = try server.killAndRestart()
        defer { restarted.stop() }
        let back = Date()
        let framesAtRestart = guest.events.compactMap { Self.int($0.object["frames"]) }.last ?? 0
        let resumed = guest.waitFor(timeout: 6) { line in
            line["event"] as? String == "stats" && (Self.int(line["frames"]) ?? 0) > framesAtRestart + 5
        }
        let resumedAfter = try #require(resumed, "guest frames never resumed: \(guest.names.suffix(8))").timeIntervalSince(back)
        // Stats lines come once a second: the frames were back up to a second before the line.
        #expect(resumedAfter < 3 + 1, "resumed \(resumedAfter) s after the server came back")
        print("reconnect: guest frames resumed \(String(format: "%.2f", resumedAfter)) s after the server was back")
        let names = host.names
        let reconnecting = try #require(names.firstIndex(of: "reconnecting"), "\(names)")
        #expect(names[reconnecting...].contains("ok"), "\(names)")
        #expect(!names.contains("failed"))
    }

    @Test("after a 2 s server outage the target bitrate resumes at the rate before it (±10 %): a lost connection is not congestion")
    func bitrateAfterRestart() throws {
        let server = try Server()
        let host = try KitProcess(["host", server.url("steady"), "--size", "320x240", "--bitrate", "1200", "--keyint", "1",
                                   "--stats", "json"])
        defer { host.stop() }
        #expect(host.waitFor(timeout: 10) { $0["event"] as? String == "ok" } != nil)
        let targets = { (lines: ArraySlice<(time: Date, object: [String: Any])>) in
            lines.filter { $0.object["event"] as? String == "stats" }.compactMap { Self.int($0.object["targetKbps"]) }
        }
        // Two status seconds of a steady push (nothing congests loopback): the rate before the outage.
        #expect(waitUntil(timeout: 10) { targets(host.events[...]).count >= 2 })
        let before = try #require(targets(host.events[...]).last)
        let restarted = try server.killAndRestart(after: 2)
        defer { restarted.stop() }
        // Published again (an `ok` after `reconnecting`), then three status seconds.
        let afterReconnect = {
            let events = host.events
            guard let lost = events.firstIndex(where: { $0.object["event"] as? String == "reconnecting" }),
                  let back = events[lost...].firstIndex(where: { $0.object["event"] as? String == "ok" }) else { return [Int]() }
            return targets(events[back...])
        }
        #expect(waitUntil(timeout: 20) { afterReconnect().count >= 3 }, "\(host.names)")
        let after = afterReconnect()
        print("restart: target \(before) kbit/s before the outage, \(after) after the reconnect")
        #expect(!after.isEmpty && after.allSatisfy { abs($0 - before) * 10 <= before }, "before \(before), after \(after)")
        #expect(host.names.contains("reconnecting") && !host.names.contains("failed"), "\(host.names)")
        // The stats lines say what the push measured and what the controller did: a
        // throughput before the outage, offline or settling around it, no congestion drop.
        let stats = host.events.filter { $0.object["event"] as? String == "stats" }.map(\.object)
        #expect(stats.contains { (Self.int($0["throughputKbps"]) ?? 0) > 0 && $0["queueBytes"] != nil }, "\(stats.last ?? [:])")
        let phases = Set(stats.compactMap { $0["abr"] as? String })
        #expect(phases.contains("probing") && (phases.contains("offline") || phases.contains("settling")), "\(phases)")
        #expect(stats.allSatisfy { Self.int($0["congestionDropped"]) == 0 }, "\(stats.compactMap { $0["congestionDropped"] })")
    }

    /// Polls `condition` every 50 ms until it holds or `timeout` seconds passed.
    private func waitUntil(timeout: TimeInterval, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if condition() { return true }
            Thread.sleep(forTimeInterval: 0.05)
        }
        return condition()
    }

    @Test("through an 800 kbit/s uplink from a 2500 kbit/s start the bitrate falls below the limit within 10 s, the delay stays bounded, the guest decodes cleanly")
    func congestion() throws {
        let server = try Server()
        defer { server.background.stop() }
        let proxy = try TroubleProxy(upstreamPort: server.rtmpPort, upstreamBitsPerSecond: 800_000)
        defer { proxy.close() }
        let url = "rtmp://127.0.0.1:\(proxy.port)/live/narrow"
        // Noise keeps x264 at its target (a clean test pattern needs only ~150 kbit/s).
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let clip = directory.appendingPathComponent("noisy.mkv").path
        let made = try CLI.run("/usr/bin/ffmpeg", ["-loglevel", "error", "-y", "-f", "lavfi", "-i",
                                                   "testsrc2=size=640x360:rate=30,noise=alls=30:allf=t", "-t", "18",
                                                   "-c:v", "mjpeg", "-q:v", "4", clip])
        try #require(made.status == 0, "ffmpeg: \(made.stderr)")
        let host = try KitProcess(["host", url, "--source", "file:" + clip, "--size", "640x360", "--bitrate", "2500", "--min-bitrate", "150",
                                   "--keyint", "1", "--duration", "16", "--stats", "json"])
        defer { host.stop() }
        let started = try #require(host.waitFor(timeout: 10) { $0["event"] as? String == "ok" })
        let guest = try KitProcess(["guest", server.url("narrow"), "--duration", "12", "--stats", "json"])
        defer { guest.stop() }
        host.process.waitUntilExit()
        guest.process.waitUntilExit()
        let stats = host.events.filter { $0.object["event"] as? String == "stats" }
        let below = stats.first { (Self.int($0.object["targetKbps"]) ?? .max) < 800 }
        let belowAfter = try #require(below, "targets: \(stats.map { $0.object["targetKbps"] ?? "-" }), delays \(stats.map { $0.object["delayMs"] ?? "-" }), kbps \(stats.map { $0.object["bitrateKbps"] ?? "-" })").time.timeIntervalSince(started)
        #expect(belowAfter <= 10, "below the limit after \(belowAfter) s")
        let delays = stats.compactMap { Self.int($0.object["delayMs"]) }
        let lateDelays = stats.filter { $0.time.timeIntervalSince(started) > 6 }.compactMap { Self.int($0.object["delayMs"]) }
        #expect(!lateDelays.isEmpty && lateDelays.max()! < 2500, "delays \(delays)")
        print("congestion: target below 800 kbit/s after \(String(format: "%.1f", belowAfter)) s; targets \(stats.compactMap { Self.int($0.object["targetKbps"]) }); delays \(delays); sent kbit/s \(stats.compactMap { Self.int($0.object["bitrateKbps"]) }); throughput kbit/s \(stats.compactMap { Self.int($0.object["throughputKbps"]) }); congestion drops \(stats.compactMap { Self.int($0.object["congestionDropped"]) }); abr \(stats.compactMap { $0.object["abr"] as? String })")
        let summary = try #require(guest.events.last { $0.object["event"] as? String == "summary" }?.object)
        #expect(Self.int(summary["decodeErrors"]) == 0, "\(summary)")
        #expect((Self.int(summary["frames"]) ?? 0) > 60, "\(summary)")
    }

    @Test("after a 2 s stall and burst, the guest's cache is back at the target within 3 s")
    func latencyControl() throws {
        let server = try Server()
        defer { server.background.stop() }
        let proxy = try TroubleProxy(upstreamPort: server.rtmpPort)
        defer { proxy.close() }
        let host = try KitProcess(["host", server.url("burst"), "--size", "320x240", "--keyint", "1", "--duration", "14",
                                   "--stats", "json"])
        defer { host.stop() }
        #expect(host.waitFor(timeout: 10) { $0["event"] as? String == "ok" } != nil)
        let guest = try KitProcess(["guest", "rtmp://127.0.0.1:\(proxy.port)/live/burst", "--buffer-ms", "150",
                                    "--duration", "10", "--stats", "json"])
        defer { guest.stop() }
        #expect(guest.waitFor(timeout: 10) { $0["event"] as? String == "firstFrame" } != nil)
        Thread.sleep(forTimeInterval: 1.5)
        proxy.hold(seconds: 2)
        Thread.sleep(forTimeInterval: 2)
        let released = Date()
        guest.process.waitUntilExit()
        let after = guest.events.filter { $0.object["event"] as? String == "stats" && $0.time > released.addingTimeInterval(3) }
        let caches = after.compactMap { Self.int($0.object["cacheMs"]) }
        #expect(!caches.isEmpty && caches.allSatisfy { $0 <= 150 + 100 }, "caches after release: \(caches)")
        let summary = try #require(guest.events.last { $0.object["event"] as? String == "summary" }?.object)
        #expect((Self.int(summary["skipped"]) ?? 0) > 0, "latency control never skipped: \(summary)")
        #expect(Self.int(summary["decodeErrors"]) == 0, "\(summary)")
        #expect(guest.names.contains("buffering"), "\(guest.names)")
        let all = guest.events.filter { $0.object["event"] as? String == "stats" }.compactMap { Self.int($0.object["cacheMs"]) }
        print("latency control: cache per second \(all); summary skipped \(summary["skipped"] ?? 0)")
    }
}
