import Foundation
import LiveCore
import LiveLine
import LiveMix
import LiveRTMP
import LiveServer
import Testing

/// Every line event a kit reported, in order.
final class LineEventLog: @unchecked Sendable {
    // @unchecked: `events` under `lock`.
    private let lock = NSLock()
    private var events: [LineSessionEvent] = []

    func append(_ event: LineSessionEvent) {
        lock.lock()
        events.append(event)
        lock.unlock()
    }

    var all: [LineSessionEvent] {
        lock.lock()
        defer { lock.unlock() }
        return events
    }

    /// The first event `match` accepts, waiting up to `timeout` seconds.
    func wait<T>(timeout: Double = 5, _ match: (LineSessionEvent) -> T?) -> T? {
        let deadline = Date().addingTimeInterval(timeout)
        repeat {
            if let hit = all.lazy.compactMap(match).first { return hit }
            Thread.sleep(forTimeInterval: 0.02)
        } while Date() < deadline
        return nil
    }
}

@Suite("Hoster and Guest kits on the co-host line", .serialized)
struct LineKitTests {
    @Test("LineServer: the signal address defaults to the RTMP host on 8080; co-host streams sit beside the live stream")
    func lineServer() throws {
        let server = LineServer(rtmp: try RTMPURL(parsing: "rtmp://example.org:1936/live/room"))
        #expect(server.signalURL == "ws://example.org:8080/line")
        #expect(server.streamURL(pubId: "line-abc", query: "line=s3cret").description == "rtmp://example.org:1936/live/line-abc?line=s3cret")
        #expect(LineServer(rtmp: try RTMPURL(parsing: "rtmp://[::1]/live/x"), httpPort: 9000).signalURL == "ws://[::1]:9000/line")
    }

    @Test("LineSessionEvent: each server event maps to its kit event with the seed's code")
    func eventMapping() {
        #expect(LineSessionEvent(LineEvent(.reply, id: 1, op: "apply", code: .ok)) == nil)
        #expect(LineSessionEvent(LineEvent(.applicationResult, code: .lineFull, reason: "lineFull", peerId: "p"))
            == .applicationResult(code: .lineFull, peerId: "p", reason: "lineFull"))
        #expect(LineSessionEvent(LineEvent(.cohostOpened, peerId: "p", pubId: "line-x", userId: "u", userData: "d"))
            == .cohostOpened(peerId: "p", pubId: "line-x", userId: "u", userData: "d"))
        #expect(LineSessionEvent(LineEvent(.memberCount, total: 4)) == .memberCount(total: 4))
        #expect(LineSessionEvent(LineEvent(.liveStop)) == .liveStop)
        #expect(LineSessionEvent.refused(op: "accept", code: .lineFull, message: "full").fields.map(\.key) == ["op", "code", "message"])
    }

    @Test("hoster kit + guest kit through a relay: apply, accept, the co-host's frames reach the mix, messages, AV status, live template change, hangup, close")
    func kitsEndToEnd() throws {
        var configuration = RelayServer.Configuration(rtmp: RTMPServer.Configuration(port: 0), httpPort: 0, loops: 2)
        configuration.line = LineLimits()
        let relay = try RelayServer(configuration: configuration)
        defer { relay.shutdown() }
        let rtmp = try RTMPURL(parsing: "rtmp://127.0.0.1:\(relay.rtmpPort)/live/kits")
        let server = LineServer(signalURL: "ws://127.0.0.1:\(relay.httpPort)/line", rtmp: rtmp)

        var options = Hoster.Options()
        options.configuration.source = "color:white"
        (options.configuration.width, options.configuration.height) = (320, 180)
        let hoster = try Hoster(options: options)
        let hosterLog = LineEventLog()
        hoster.onLineEvent = { hosterLog.append($0) }
        // Before a line exists a line call is answered, not dropped.
        hoster.acceptLine(peerId: "nobody")
        #expect(hosterLog.wait { event -> LiveCode? in if case .refused(_, let code, _) = event { return code }; return nil } == .lineNotStarted)
        try hoster.startPush(url: rtmp)
        defer { hoster.stopPush() }
        try hoster.createLine(server: server, liveId: "kits", userId: "host", liveInfo: "{\"liveTopic\":\"kits\"}")
        #expect(hosterLog.wait { event -> LiveCode? in if case .lineResult(let code, _) = event { return code }; return nil } == .ok)

        var guestOptions = Guest.Options()
        guestOptions.cohost.source = "color:red"
        (guestOptions.cohost.width, guestOptions.cohost.height) = (160, 90)
        let guest = Guest(options: guestOptions)
        let guestLog = LineEventLog()
        guest.onLineEvent = { guestLog.append($0) }
        try guest.joinLine(server: server, liveId: "kits", userId: "g1", userData: "hello")
        defer { guest.leaveLine() }
        #expect(guestLog.wait { event -> Bool? in if case .liveStart = event { return true }; return nil } == true)
        guest.applyLine()
        let peerId = try #require(hosterLog.wait { event -> String? in if case .application(let peer, "g1", "hello") = event { return peer }; return nil })
        hoster.acceptLine(peerId: peerId)
        #expect(guestLog.wait { event -> LiveCode? in if case .applicationResult(let code, peerId, _) = event { return code }; return nil } == .ok)
        #expect(guestLog.wait { event -> Bool? in if case .cohostPush(.ok) = event { return true }; return nil } == true)
        #expect(guest.isCohosting)
        let size = hosterLog.wait(timeout: 10) { event -> (Int, Int)? in if case .cohostFirstFrame(peerId, let w, let h) = event { return (w, h) }; return nil }
        #expect(size?.0 == 160 && size?.1 == 90)
        #expect(hoster.mixedCohosts == [peerId])

        // Messages both ways; the guest's video switch reaches the hoster.
        hoster.sendMessage(type: "barrage", userName: "Host", content: "welcome")
        #expect(guestLog.wait { event -> String? in if case .message("barrage", "host", "Host", _, let content) = event { return content }; return nil } == "welcome")
        guest.sendMessage(userName: "G1", content: "hi")
        #expect(hosterLog.wait { event -> String? in if case .message(_, "g1", _, _, let content) = event { return content }; return nil } == "hi")
        guest.setLocalVideoEnable(false)
        #expect(hosterLog.wait { event -> Bool? in if case .remoteAVStatus(_, _, let video) = event { return video }; return nil } == false)

        // The template changes live; one that does not fit is refused and the old one stays.
        try hoster.setMixVideoModel(.equal)
        var tight = MixOptions()
        tight.horPad = 1000
        #expect(throws: (any Error).self) { try hoster.setVideoTemplate(.full, options: tight) }

        // The guest hangs up: the hoster hears the co-host close and the mix drops it.
        guest.hangupLine()
        #expect(hosterLog.wait { event -> String? in if case .cohostClosed(peerId, _, _, let reason) = event { return reason }; return nil } == "hungUpByGuest")
        #expect(eventually { hoster.mixedCohosts.isEmpty })
        #expect(eventually { !guest.isCohosting })

        hoster.closeLine()
        #expect(guestLog.wait { event -> LiveCode? in if case .lineLeave(let code, _) = event { return code }; return nil } == .ok)
    }

    private func eventually(_ seconds: Double = 5, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        repeat {
            if condition() { return true }
            Thread.sleep(forTimeInterval: 0.02)
        } while Date() < deadline
        return false
    }
}
