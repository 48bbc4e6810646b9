import Foundation
import LiveCore
import LiveLine
import LiveMix
import LiveNet
import LiveRTMP
import LiveServer
import LiveSignal
import LiveTestSupport
import Testing

/// The line as a user meets it beyond the happy path: the server restarting under it,
/// more co-hosts than the mix can show, a signaling address found from the RTMP URL.
@Suite("The co-host line: server restarts, mix capacity, finding the signaling", .serialized)
struct LineRecoveryTests {
    /// A quick backoff so a restart is over in seconds (the default starts at 2 s).
    static let quick = ReconnectBackoff(baseSeconds: 0.3, factor: 1.5, capSeconds: 1.5, jitter: 0.2, maxTries: 30)

    static func relay(rtmpPort: UInt16 = 0, httpPort: UInt16 = 0, maxCohosts: Int = 3) throws -> RelayServer {
        var configuration = RelayServer.Configuration(rtmp: RTMPServer.Configuration(port: rtmpPort), httpPort: httpPort, loops: 2)
        configuration.line = LineLimits(maxCohosts: maxCohosts)
        return try RelayServer(configuration: configuration)
    }

    /// A hoster pushing white 320x180 that accepts every applicant, with a quick backoff.
    static func hoster(_ log: LineEventLog) throws -> Hoster {
        var options = Hoster.Options()
        options.configuration.source = "color:white"
        (options.configuration.width, options.configuration.height) = (320, 180)
        options.push.backoff = quick
        let hoster = try Hoster(options: options)
        hoster.onLineEvent = { [weak hoster] event in
            log.append(event)
            if case .application(let peerId, _, _) = event { hoster?.acceptLine(peerId: peerId) }
        }
        return hoster
    }

    static func guest(_ colour: String) -> Guest {
        var options = Guest.Options()
        options.cohost.source = "color:" + colour
        (options.cohost.width, options.cohost.height) = (160, 90)
        options.reconnect = quick
        options.cohostPush.backoff = quick
        return Guest(options: options)
    }

    static func count(_ log: LineEventLog, _ match: (LineSessionEvent) -> Bool) -> Int { log.all.filter(match).count }

    /// Waits until `log` holds `n` events `match` accepts.
    /// A hoster (events in `log`) pushing rtmp://127.0.0.1:RTMPPORT/live/LIVEID with its
    /// line LIVEID created on the relay's signaling; the caller closes the line and stops the push.
    static func openLine(_ liveId: String, rtmpPort: UInt16, httpPort: UInt16,
                         log: LineEventLog) throws -> (hoster: Hoster, server: LineServer) {
        let rtmp = LineServer.hosterPushURL(try RTMPURL(parsing: "rtmp://127.0.0.1:\(rtmpPort)/live/\(liveId)"))
        let server = LineServer(signalURL: "ws://127.0.0.1:\(httpPort)/line", rtmp: rtmp)
        let hoster = try hoster(log)
        try hoster.startPush(url: rtmp)
        do {
            try hoster.createLine(server: server, liveId: liveId, userId: "host")
        } catch {
            hoster.stopPush()
            throw error
        }
        return (hoster, server)
    }

    static func waitForCount(_ n: Int, in log: LineEventLog, timeout: Double = 10, _ match: @escaping (LineSessionEvent) -> Bool) -> Bool {
        log.wait(timeout: timeout) { _ in count(log, match) >= n ? true : nil } == true
    }

    static func lineOK(_ event: LineSessionEvent) -> Bool { if case .lineResult(.ok, _) = event { true } else { false } }
    static func accepted(_ event: LineSessionEvent) -> Bool { if case .applicationResult(.ok, _, _) = event { true } else { false } }
    static func reconnecting(_ event: LineSessionEvent) -> Bool { if case .reconnecting = event { true } else { false } }

    // MARK: item: the server restarts

    @Test("serve restarts under a running line: the line reconnects with the push's backoff and re-creates its room; the guest rejoins and is accepted again, and so is a newcomer")
    func serverRestart() throws {
        let first = try Self.relay()
        let (rtmpPort, httpPort) = (first.rtmpPort, first.httpPort)
        var stopFirst = true
        defer { if stopFirst { first.shutdown() } }
        let hosterLog = LineEventLog()
        let (hoster, server) = try Self.openLine("again", rtmpPort: rtmpPort, httpPort: httpPort, log: hosterLog)
        defer { hoster.stopPush() }
        defer { hoster.closeLine() }
        #expect(Self.waitForCount(1, in: hosterLog, Self.lineOK))

        let guestLog = LineEventLog()
        let guest = Self.guest("red")
        guest.onLineEvent = { guestLog.append($0) }
        try guest.joinLine(server: server, liveId: "again", userId: "g1")
        defer { guest.leaveLine() }
        #expect(Self.waitForCount(1, in: guestLog, Self.lineOK))
        guest.applyLine()
        #expect(Self.waitForCount(1, in: guestLog, Self.accepted))
        #expect(eventually { guest.isCohosting && hoster.mixedCohosts.count == 1 })

        // The server goes away: both sides hear it and retry; co-hosting ends with it.
        first.shutdown()
        stopFirst = false
        #expect(Self.waitForCount(1, in: hosterLog, Self.reconnecting))
        #expect(Self.waitForCount(1, in: guestLog, Self.reconnecting))
        #expect(eventually { !guest.isCohosting && hoster.mixedCohosts.isEmpty })

        // It comes back on the same ports: the push republishes, the line is created
        // again (with the push's lineKey), the guest joins again.
        let second = try Self.relay(rtmpPort: rtmpPort, httpPort: httpPort)
        defer { second.shutdown() }
        #expect(Self.waitForCount(2, in: hosterLog, timeout: 20, Self.lineOK), "hoster: \(hosterLog.all)")
        #expect(Self.waitForCount(2, in: guestLog, timeout: 20, Self.lineOK), "guest: \(guestLog.all)")
        #expect(!hosterLog.all.contains { if case .lineClosed = $0 { true } else { false } })

        // The guest applies again and is a co-host again; a newcomer is accepted too.
        guest.applyLine()
        #expect(Self.waitForCount(2, in: guestLog, Self.accepted), "guest: \(guestLog.all)")
        let newcomerLog = LineEventLog()
        let newcomer = Self.guest("green")
        newcomer.onLineEvent = { newcomerLog.append($0) }
        try newcomer.joinLine(server: server, liveId: "again", userId: "g2")
        defer { newcomer.leaveLine() }
        #expect(Self.waitForCount(1, in: newcomerLog, Self.lineOK), "newcomer: \(newcomerLog.all)")
        newcomer.applyLine()
        #expect(Self.waitForCount(1, in: newcomerLog, Self.accepted), "newcomer: \(newcomerLog.all)")
        #expect(eventually(10) { hoster.mixedCohosts.count == 2 })
    }

    @Test("the server shuts down for good: the reconnect tries run out and the line ends with lineClosed 204 (the server went away), once")
    func triesRunOut() throws {
        let relay = try Self.relay()
        let server = LineServer(signalURL: "ws://127.0.0.1:\(relay.httpPort)/line",
                                rtmp: try RTMPURL(parsing: "rtmp://127.0.0.1:\(relay.rtmpPort)/live/gone"))
        var options = Guest.Options()
        options.reconnect = ReconnectBackoff(baseSeconds: 0.1, factor: 1, capSeconds: 0.1, jitter: 0, maxTries: 2)
        let guest = Guest(options: options)
        let log = LineEventLog()
        guest.onLineEvent = { log.append($0) }
        try guest.joinLine(server: server, liveId: "gone", userId: "g")
        defer { guest.leaveLine() }
        #expect(log.wait { event -> LiveCode? in if case .lineResult(let code, _) = event { return code }; return nil } == .lineNotStarted)
        relay.shutdown()
        let reason = log.wait { event -> String? in if case .lineClosed(.serverError, let reason) = event { return reason }; return nil }
        #expect(reason?.contains("the server shut down") == true, "\(log.all)")
        #expect(Self.count(log, Self.reconnecting) == 2)
        Thread.sleep(forTimeInterval: 0.5)
        #expect(Self.count(log) { if case .lineClosed = $0 { true } else { false } } == 1)
    }

    // MARK: item: the mix's capacity

    @Test("serve --max-cohosts 6 with the full mix: four co-hosts are accepted and all shown; the fifth applicant gets 602")
    func mixCapacityCapsTheLine() throws {
        let relay = try Self.relay(maxCohosts: 6)
        defer { relay.shutdown() }
        let hosterLog = LineEventLog()
        let (hoster, server) = try Self.openLine("cap", rtmpPort: relay.rtmpPort, httpPort: relay.httpPort, log: hosterLog)
        defer { hoster.stopPush() }
        defer { hoster.closeLine() }
        #expect(Self.waitForCount(1, in: hosterLog, Self.lineOK))

        // Applicants speak the protocol directly: accepted ones need not push for this.
        let loop = try EventLoop(name: "applicants")
        loop.start()
        defer { loop.shutdown() }
        var clients: [LineClient] = []
        defer { clients.forEach { $0.disconnect() } }
        var results: [LiveCode?] = []
        for n in 1...5 {
            let client = LineClient(url: server.signalURL, loop: loop)
            let answer = Locked<LiveCode?>(nil)
            client.onEvent = { event in
                if event.event == .applicationResult { answer.update { $0 = event.liveCode } }
            }
            client.connect()
            client.join(liveId: "cap", userId: "g\(n)")
            client.apply()
            clients.append(client)
            _ = eventually { answer.value != nil }
            results.append(answer.value)
        }
        #expect(results == [.ok, .ok, .ok, .ok, .lineFull])
        #expect(eventually { hoster.mixedCohosts.count == 4 })
        #expect(hosterLog.all.contains { if case .refused("accept", .lineFull, _) = $0 { true } else { false } })
    }

    @Test("after a live template change that shows fewer co-hosts the line takes fewer: the next applicant gets 602, none is left unseen")
    func templateChangeLowersTheLimit() throws {
        let relay = try Self.relay()
        defer { relay.shutdown() }
        let hosterLog = LineEventLog()
        let (hoster, server) = try Self.openLine("tight", rtmpPort: relay.rtmpPort, httpPort: relay.httpPort, log: hosterLog)
        defer { hoster.stopPush() }
        defer { hoster.closeLine() }
        #expect(Self.waitForCount(1, in: hosterLog, Self.lineOK))

        let loop = try EventLoop(name: "applicants")
        loop.start()
        defer { loop.shutdown() }
        let first = LineClient(url: server.signalURL, loop: loop)
        first.connect()
        first.join(liveId: "tight", userId: "g1")
        first.apply()
        defer { first.disconnect() }
        #expect(eventually { hoster.mixedCohosts.count == 1 })
        // 320x180 with 60-pixel pads and 20-pixel borders: one tile fits, two do not.
        // The new limit goes out on the hoster's connection before any later accept.
        try hoster.setVideoTemplate(.full, options: MixOptions(verPad: 60, borderWidth: 20))
        let second = LineClient(url: server.signalURL, loop: loop)
        let answer = Locked<LiveCode?>(nil)
        second.onEvent = { event in
            if event.event == .applicationResult || event.event == .hungUp { answer.update { $0 = event.event == .hungUp ? .unknown : event.liveCode } }
        }
        second.connect()
        second.join(liveId: "tight", userId: "g2")
        second.apply()
        defer { second.disconnect() }
        #expect(eventually { answer.value != nil })
        #expect(answer.value == .lineFull)
        #expect(hosterLog.wait { event -> LiveCode? in if case .refused("accept", let code, _) = event { return code }; return nil } == .lineFull)
        #expect(hoster.mixedCohosts.count == 1)
    }

    // MARK: item: the signaling is found from the RTMP URL

    @Test("LineServer.discover: the relay names its line in connect's answer; another signaling URL is a mismatch; nginx-rtmp names none")
    func discover() throws {
        let relay = try Self.relay()
        defer { relay.shutdown() }
        let url = try RTMPURL(parsing: "rtmp://127.0.0.1:\(relay.rtmpPort)/live/found?lineKey=k")
        let found = try LineServer.discover(rtmp: url)
        #expect(found.signalURL == "ws://127.0.0.1:\(relay.httpPort)/line")
        #expect(found.rtmp == url)
        // The same place under a loopback name agrees; a line on another port does not.
        #expect(try LineServer.discover(rtmp: url, signalURL: "ws://localhost:\(relay.httpPort)/line").signalURL
                == "ws://localhost:\(relay.httpPort)/line")
        let server = "rtmp://127.0.0.1:\(relay.rtmpPort)"
        let error = try #require(throws: LineServer.DiscoveryError.self) {
            try LineServer.discover(rtmp: url, signalURL: "ws://127.0.0.1:8080/line")
        }
        #expect(error == .mismatch(rtmp: server, given: "ws://127.0.0.1:8080/line", announced: found.signalURL))
        #expect(error.announcedURL == found.signalURL)
        // Nothing listening: unreachable, said so.
        let closed = try RTMPURL(parsing: "rtmp://127.0.0.1:\(try Peers.freePort())/live/x")
        let unreachable = try #require(throws: LineServer.DiscoveryError.self) { try LineServer.discover(rtmp: closed) }
        #expect(unreachable.description.contains("cannot ask"))

        let nginx = try Peers.NginxRTMP()
        defer { nginx.stop() }
        let other = try RTMPURL(parsing: nginx.url("x"))
        #expect(throws: LineServer.DiscoveryError.notAnnounced(rtmp: "rtmp://127.0.0.1:\(nginx.port)")) {
            try LineServer.discover(rtmp: other)
        }
        #expect(try LineServer.discover(rtmp: other, signalURL: "ws://127.0.0.1:9/line").signalURL == "ws://127.0.0.1:9/line")
    }
}
