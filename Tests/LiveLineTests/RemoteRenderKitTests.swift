import LiveSignal
import Foundation
import LiveCore
import LiveLine
import LiveNet
import LiveRTMP
import LiveServer
import LiveTestSupport
import Testing

@Suite("A guest plays another co-host's own stream (setRemoteVideoRender)", .serialized)
struct RemoteRenderKitTests {
    @Test("co-host red plays co-host blue's stream by the pubId cohostOpened gave it: blue frames; nil stops them, and so does blue leaving")
    func remoteRender() throws {
        let (relay, server, hoster, hosterLog) = try Self.line("pair")
        defer { relay.shutdown() }
        defer { hoster.stopPush() }
        func cohost(_ user: String, colour: String) throws -> (Guest, LineEventLog) {
            try Self.cohost(user, colour: colour, server: server, liveId: "pair", hoster: hoster, hosterLog: hosterLog)
        }
        let (red, redLog) = try cohost("red", colour: "color:red")
        defer { red.leaveLine() }
        let (blue, _) = try cohost("blue", colour: "color:blue")
        defer { blue.leaveLine() }

        // Red, on the line, is told blue's stream name.
        let bluePubId = try #require(redLog.wait { event -> String? in
            if case .cohostOpened(_, let pubId, "blue", _) = event { return pubId }; return nil
        })
        let frames = Locked<[YUVColor]>([])
        try red.setRemoteVideoRender(pubId: bluePubId) { frame in
            let centre = frame.pixel(x: frame.width / 2, y: frame.height / 2)
            frames.update { $0.append(centre) }
        }
        #expect(eventually { frames.value.count >= 10 }, "frames of blue's stream: \(frames.value.count)")
        let blueish = frames.value.filter { $0.v < 128 && $0.u > 160 }
        #expect(blueish.count == frames.value.count, "not blue: \(frames.value.prefix(5))")

        // nil stops the play.
        try red.setRemoteVideoRender(pubId: bluePubId, render: nil)
        Thread.sleep(forTimeInterval: 0.5)
        let afterStop = frames.value.count
        Thread.sleep(forTimeInterval: 0.5)
        #expect(frames.value.count == afterStop, "frames kept coming after nil")

        // Played again, it stops by itself when blue leaves the line.
        try red.setRemoteVideoRender(pubId: bluePubId) { _ in frames.update { $0.append(.black) } }
        #expect(eventually { frames.value.count >= afterStop + 5 })
        blue.hangupLine()
        #expect(redLog.wait { event -> Bool? in if case .cohostClosed(_, bluePubId, _, _) = event { return true }; return nil } == true)
        Thread.sleep(forTimeInterval: 0.5)
        let afterLeave = frames.value.count
        Thread.sleep(forTimeInterval: 0.5)
        #expect(frames.value.count == afterLeave, "frames kept coming after blue left")

        // Without a line there is nothing to play.
        let outsider = Guest(options: Guest.Options())
        #expect(throws: LiveError.self) { try outsider.setRemoteVideoRender(pubId: bluePubId) { _ in } }
    }

    @Test("the played co-host stream's first frame and its size change come on the guest's onLineEvent, by pubId (onRTCFirstRemoteVideoFrame, onRTCRemoteVideoViewChanged)")
    func renderEvents() throws {
        let dir = try Peers.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let segments = try GuestKitTests.twoSizes(in: dir)
        let (relay, server, hoster, hosterLog) = try Self.line("sizes")
        defer { relay.shutdown() }
        defer { hoster.stopPush() }
        let (red, redLog) = try Self.cohost("red", colour: "color:red", server: server, liveId: "sizes", hoster: hoster, hosterLog: hosterLog)
        defer { red.leaveLine() }

        // Blue speaks the protocol itself and pushes a stream whose size changes.
        let loop = try EventLoop(name: "blue")
        loop.start()
        defer { loop.shutdown() }
        let blue = LineClient(url: server.signalURL, loop: loop)
        defer { blue.disconnect() }
        let accepted = Locked<LineEvent?>(nil)
        blue.onEvent = { (event: LineEvent) in if event.event == .applicationResult { accepted.update { $0 = event } } }
        blue.connect()
        blue.join(liveId: "sizes", userId: "blue")
        blue.apply()
        let peer = try #require(hosterLog.wait { event -> String? in if case .application(let p, "blue", _) = event { return p }; return nil })
        hoster.acceptLine(peerId: peer)
        #expect(eventually { accepted.value != nil })
        let pubId = try #require(accepted.value?.pubId)
        #expect(redLog.wait { event -> Bool? in if case .cohostOpened(_, pubId, "blue", _) = event { return true }; return nil } == true)
        try red.setRemoteVideoRender(pubId: pubId) { _ in }
        let query = try #require(accepted.value?.publishQuery)
        let url = "rtmp://127.0.0.1:\(relay.rtmpPort)/live/\(pubId)?\(query)"
        let ffmpeg = try Peers.Background("/usr/bin/ffmpeg", ["-nostdin", "-v", "error", "-re", "-i", segments, "-c", "copy", "-f", "flv", url])
        defer { ffmpeg.stop() }
        #expect(redLog.wait(timeout: 10) { event -> Bool? in if case .renderViewChanged = event { return true }; return nil } == true)
        let sizes = redLog.all.filter { ["renderFirstFrame", "renderViewChanged"].contains($0.name) }
        #expect(sizes == [.renderFirstFrame(pubId: pubId, width: 320, height: 240), .renderViewChanged(pubId: pubId, width: 480, height: 270)],
                "\(sizes)")
    }

    /// A relay with lines, and a hoster pushing 320x180 white with line `liveId` open.
    static func line(_ liveId: String) throws -> (RelayServer, LineServer, Hoster, LineEventLog) {
        var configuration = RelayServer.Configuration(rtmp: RTMPServer.Configuration(port: 0), httpPort: 0, loops: 2)
        configuration.line = LineLimits()
        let relay = try RelayServer(configuration: configuration)
        let rtmp = LineServer.hosterPushURL(try RTMPURL(parsing: "rtmp://127.0.0.1:\(relay.rtmpPort)/live/\(liveId)"))
        let server = LineServer(signalURL: "ws://127.0.0.1:\(relay.httpPort)/line", rtmp: rtmp)
        var options = Hoster.Options()
        options.configuration.source = "color:white"
        options.configuration.audioSource = "none"
        (options.configuration.width, options.configuration.height) = (320, 180)
        let hoster = try Hoster(options: options)
        let hosterLog = LineEventLog()
        hoster.onLineEvent = { hosterLog.append($0) }
        try hoster.startPush(url: rtmp)
        try hoster.createLine(server: server, liveId: liveId, userId: "host")
        #expect(hosterLog.wait { event -> LiveCode? in if case .lineResult(let code, _) = event { return code }; return nil } == .ok)
        return (relay, server, hoster, hosterLog)
    }

    /// A guest kit that joins `liveId`, applies and is accepted, pushing 160x90 `colour`.
    static func cohost(_ user: String, colour: String, server: LineServer, liveId: String, hoster: Hoster,
                       hosterLog: LineEventLog) throws -> (Guest, LineEventLog) {
        var guestOptions = Guest.Options()
        guestOptions.cohost.source = colour
        guestOptions.cohost.audioSource = "none"
        (guestOptions.cohost.width, guestOptions.cohost.height) = (160, 90)
        let guest = Guest(options: guestOptions)
        let log = LineEventLog()
        guest.onLineEvent = { log.append($0) }
        try guest.joinLine(server: server, liveId: liveId, userId: user)
        #expect(log.wait { event -> Bool? in if case .liveStart = event { return true }; return nil } == true)
        guest.applyLine()
        let peer = try #require(hosterLog.wait { event -> String? in if case .application(let p, user, _) = event { return p }; return nil })
        hoster.acceptLine(peerId: peer)
        #expect(log.wait(timeout: 10) { event -> Bool? in if case .cohostPush(.ok) = event { return true }; return nil } == true)
        return (guest, log)
    }
}
