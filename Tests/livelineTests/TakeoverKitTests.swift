import Foundation
import Testing

/// Stream ownership with auth off, through the real hoster: a name is taken over only
/// from a publisher that has gone silent.
@Suite("hoster reconnect after a dead link", .serialized)
struct TakeoverKitTests {
    @Test("the hoster's link dies without the relay noticing: its reconnects are let in once the old connection has been silent 2 s, it never gives up, and its target bitrate is the one before (a takeover is not congestion)")
    func deadLinkReconnect() throws {
        let server = try Server()
        defer { server.background.stop() }
        let proxy = try TroubleProxy(upstreamPort: server.rtmpPort)
        defer { proxy.close() }
        let url = "rtmp://127.0.0.1:\(proxy.port)/live/dead"
        let host = try KitProcess(["host", url, "--size", "320x240", "--keyint", "1", "--stats", "json"])
        defer { host.stop() }
        #expect(host.waitFor(timeout: 10) { $0["event"] as? String == "ok" } != nil)
        let targets = { (since: Date) in
            host.events.filter { $0.time > since && $0.object["event"] as? String == "stats" }
                .compactMap { ($0.object["targetKbps"] as? Int) ?? ($0.object["targetKbps"] as? Double).map { Int($0) } }
        }
        let stats = host.waitFor(timeout: 5) { $0["event"] as? String == "stats" }
        let before = try #require(stats.flatMap { _ in targets(.distantPast).last })
        // The relay's side of the connection stays open: to it the hoster just went quiet.
        proxy.cutClients()
        let cut = Date()
        var back: Date?
        while back == nil, Date().timeIntervalSince(cut) < 15 {
            back = host.events.first { $0.time > cut && $0.object["event"] as? String == "ok" }?.time
            Thread.sleep(forTimeInterval: 0.05)
        }
        let after = try #require(back, "the hoster did not get back on air: \(host.names)").timeIntervalSince(cut)
        print("dead link: the hoster was back on air \(String(format: "%.1f", after)) s after the cut")
        #expect(after < 12)
        #expect(host.names.contains("reconnecting"))
        #expect(!host.names.contains("failed"), "\(host.names)")
        let backAt = cut.addingTimeInterval(after)
        let deadline = Date().addingTimeInterval(5)
        while targets(backAt).count < 3, Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        let resumed = targets(backAt)
        print("dead link: target \(before) kbit/s before the cut, \(resumed) after the takeover")
        #expect(!resumed.isEmpty && resumed.allSatisfy { abs($0 - before) * 10 <= before }, "before \(before), after \(resumed)")
    }
}
