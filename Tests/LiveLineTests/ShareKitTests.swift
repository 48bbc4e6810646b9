import LiveSignal
import Foundation
import LiveCore
import LiveLine
import LiveMix
import LiveRTMP
import LiveServer
import LiveTestSupport
import Testing

/// Every share event a hoster reported, in order.
final class ShareEventLog: @unchecked Sendable {
    // @unchecked: `events` under `lock`.
    private let lock = NSLock()
    private var events: [ShareEvent] = []

    func append(_ event: ShareEvent) {
        lock.lock()
        events.append(event)
        lock.unlock()
    }

    /// The first event `match` accepts, waiting up to `timeout` seconds.
    func wait<T>(timeout: Double = 5, _ match: (ShareEvent) -> T?) -> T? {
        let deadline = Date().addingTimeInterval(timeout)
        repeat {
            lock.lock()
            let hit = events.lazy.compactMap(match).first
            lock.unlock()
            if let hit { return hit }
            Thread.sleep(forTimeInterval: 0.02)
        } while Date() < deadline
        return nil
    }
}

/// A player's view that keeps, for each frame, the mean colour of a few rectangles.
final class ColorProbe: GuestVideoSink, @unchecked Sendable {
    // @unchecked: `latest` under `lock`; `rects` is immutable.
    let size: (width: Int, height: Int)? = nil
    private let rects: [MixRect]
    private let lock = NSLock()
    private var latest: [YUVColor] = []

    init(_ rects: [MixRect]) { self.rects = rects }

    func render(_ frame: VideoFrame) {
        let colors = rects.map { meanColor(frame, x: $0.x, y: $0.y, width: $0.w, height: $0.h) }
        lock.lock()
        latest = colors
        lock.unlock()
    }

    /// Waits up to `timeout` seconds for a frame whose rectangles have `colors`.
    func wait(for colors: [YUVColor], timeout: Double = 6) -> [YUVColor] {
        let deadline = Date().addingTimeInterval(timeout)
        var seen: [YUVColor] = []
        repeat {
            lock.lock()
            seen = latest
            lock.unlock()
            if seen.count == colors.count, zip(seen, colors).allSatisfy({ near($0, $1, tolerance: 14) }) { return seen }
            Thread.sleep(forTimeInterval: 0.05)
        } while Date() < deadline
        return seen
    }
}

@Suite("Hoster kit: sharing a screen (Xvfb) into the program", .serialized,
       .enabled(if: VirtualDisplay.isAvailable, "Xvfb and xsetroot are not installed (scripts/setup)"))
struct ShareKitTests {
    static let red = YUVColor(r: 255, g: 0, b: 0)
    static let blue = YUVColor(r: 0, g: 0, b: 255)
    static let green = YUVColor(r: 0, g: 255, b: 0)

    @Test("startShare(screen:) puts the live screen in the program with the camera in a tile; the line's guest hears shareOpen / shareClose; stopShare brings the camera back")
    func sharesTheScreen() throws {
        let display = try VirtualDisplay(width: 320, height: 180)
        defer { display.stop() }
        try display.paint("#ff0000")

        var configuration = RelayServer.Configuration(rtmp: RTMPServer.Configuration(port: 0), httpPort: 0, loops: 2)
        configuration.line = LineLimits()
        let relay = try RelayServer(configuration: configuration)
        defer { relay.shutdown() }
        let program = try RTMPURL(parsing: "rtmp://127.0.0.1:\(relay.rtmpPort)/live/share")
        let rtmp = LineServer.hosterPushURL(program)
        let server = LineServer(signalURL: "ws://127.0.0.1:\(relay.httpPort)/line", rtmp: rtmp)

        var options = Hoster.Options()
        options.configuration.source = "color:#00ff00"
        (options.configuration.width, options.configuration.height, options.configuration.fps) = (320, 180, 15)
        options.configuration.keyframeIntervalSeconds = 1
        let hoster = try Hoster(options: options)
        let shareLog = ShareEventLog()
        hoster.onShareEvent = { shareLog.append($0) }
        let hosterLog = LineEventLog()
        hoster.onLineEvent = { hosterLog.append($0) }
        try hoster.startPush(url: rtmp)
        defer { hoster.stopPush() }
        try hoster.createLine(server: server, liveId: "share", userId: "host", userData: "the host")
        #expect(hosterLog.wait { event -> LiveCode? in if case .lineResult(let code, _) = event { return code }; return nil } == .ok)

        let guest = Guest(options: Guest.Options())
        let guestLog = LineEventLog()
        guest.onLineEvent = { guestLog.append($0) }
        try guest.joinLine(server: server, liveId: "share", userId: "g1")
        defer { guest.leaveLine() }
        #expect(guestLog.wait { event -> Bool? in if case .liveStart = event { return true }; return nil } == true)

        // The camera's tile is the first small tile of the template; the shared picture fills
        // the rest: sampled in its top-left corner, away from the pointer x11grab draws.
        let tile = try MixLayout(canvasWidth: 320, canvasHeight: 180, template: .full, cohosts: 1, options: MixOptions()).rects[1].inner
        let shared = MixRect(x: 16, y: 16, w: 64, h: 40)
        let cameraArea = MixRect(x: tile.x + 8, y: tile.y + 8, w: tile.w - 16, h: tile.h - 16)
        let probe = ColorProbe([shared, cameraArea])
        let player = Guest(options: Guest.Options())
        try player.startPlay(url: program, sink: probe)
        defer { player.stopPlay() }
        // Before the share: the camera everywhere.
        var seen = probe.wait(for: [Self.green, Self.green], timeout: 10)
        #expect(seen.count == 2 && seen.allSatisfy { near($0, Self.green, tolerance: 14) }, "before the share: \(seen)")

        try hoster.startShare(source: "screen:\(display.name)", type: 1, shareInfo: "deck")
        #expect(shareLog.wait { event -> Bool? in if case .enable(let enabled, _) = event { return enabled }; return nil } == true)
        #expect(hoster.sharedSource == "screen:\(display.name)")
        let opened = guestLog.wait { event -> ShareEvent? in if case .share(let share) = event { return share }; return nil }
        #expect(opened == .opened(type: 1, shareInfo: "deck", userId: "host", userData: "the host"))
        seen = probe.wait(for: [Self.red, Self.green])
        #expect(near(seen[0], Self.red, tolerance: 14) && near(seen[1], Self.green, tolerance: 14), "shared area, camera tile: \(seen)")

        // The screen is live: a new colour reaches the player.
        try display.paint("#0000ff")
        seen = probe.wait(for: [Self.blue, Self.green])
        #expect(near(seen[0], Self.blue, tolerance: 14), "after repainting: \(seen)")

        // A second share while one is on is turned down; the first goes on.
        try hoster.startShare(source: "color:white")
        #expect(shareLog.wait { event -> String? in if case .enable(false, let reason) = event { return reason }; return nil }?
            .contains("already shared") == true)

        hoster.stopShare()
        #expect(shareLog.wait { event -> String? in if case .closed(_, let reason) = event { return reason }; return nil } == "stopped")
        #expect(guestLog.wait { event -> String? in if case .share(.closed(let userId, _)) = event { return userId }; return nil } == "host")
        #expect(hoster.sharedSource == nil)
        seen = probe.wait(for: [Self.green, Self.green])
        #expect(near(seen[0], Self.green, tolerance: 14), "after stopShare: \(seen)")

        // The X server goes away mid-share: the share ends by itself, saying why, and the room hears it.
        try hoster.startShare(source: "screen:\(display.name)")
        #expect(shareLog.wait { event -> Int? in if case .enable(true, _) = event { return 1 }; return nil } == 1)
        display.stop()
        let lost = shareLog.wait { event -> String? in
            if case .closed(_, let reason) = event, reason != "stopped" { return reason }
            return nil
        }
        #expect(lost?.contains("capturing the screen of display \(display.name) failed") == true, "\(lost ?? "no close")")
        #expect(eventually { hoster.sharedSource == nil })
        seen = probe.wait(for: [Self.green, Self.green])
        #expect(near(seen[0], Self.green, tolerance: 14), "after the screen was lost: \(seen)")
    }

    @Test("a share started before the line is told to the room once the line opens; a guest joining later hears it; the push's end ends it")
    func shareBeforeTheLine() throws {
        var configuration = RelayServer.Configuration(rtmp: RTMPServer.Configuration(port: 0), httpPort: 0, loops: 1)
        configuration.line = LineLimits()
        let relay = try RelayServer(configuration: configuration)
        defer { relay.shutdown() }
        let rtmp = LineServer.hosterPushURL(try RTMPURL(parsing: "rtmp://127.0.0.1:\(relay.rtmpPort)/live/early"))
        let server = LineServer(signalURL: "ws://127.0.0.1:\(relay.httpPort)/line", rtmp: rtmp)
        var options = Hoster.Options()
        options.configuration.source = "color:green"
        (options.configuration.width, options.configuration.height, options.configuration.fps) = (320, 180, 10)
        let hoster = try Hoster(options: options)
        let shareLog = ShareEventLog()
        hoster.onShareEvent = { shareLog.append($0) }
        // Before the push and the line: the share is in the mix at once.
        try hoster.startShare(source: "color:white", type: 3, shareInfo: "whiteboard")
        #expect(shareLog.wait { event -> Bool? in if case .enable(let enabled, _) = event { return enabled }; return nil } == true)
        try hoster.startPush(url: rtmp)
        defer { hoster.stopPush() }
        let hosterLog = LineEventLog()
        hoster.onLineEvent = { hosterLog.append($0) }
        try hoster.createLine(server: server, liveId: "early", userId: "host")
        #expect(hosterLog.wait { event -> LiveCode? in if case .lineResult(let code, _) = event { return code }; return nil } == .ok)

        let guest = Guest(options: Guest.Options())
        let guestLog = LineEventLog()
        guest.onLineEvent = { guestLog.append($0) }
        try guest.joinLine(server: server, liveId: "early", userId: "late")
        defer { guest.leaveLine() }
        let opened = guestLog.wait { event -> ShareEvent? in if case .share(let share) = event { return share }; return nil }
        #expect(opened == .opened(type: 3, shareInfo: "whiteboard", userId: "host", userData: ""))
        // The push's end ends the share.
        hoster.stopPush()
        #expect(shareLog.wait { event -> String? in if case .closed(_, let reason) = event { return reason }; return nil } == "pushEnded")
        #expect(guestLog.wait { event -> Bool? in if case .share(.closed) = event { return true }; return nil } == true)
        #expect(hoster.sharedSource == nil)
    }

    @Test("startShare refuses clearly: a bad spec throws; no X server, an audio-only live and a full mix report shareEnable false")
    func refusals() throws {
        var options = Hoster.Options()
        options.configuration.source = "color:green"
        (options.configuration.width, options.configuration.height) = (320, 180)
        let hoster = try Hoster(options: options)
        let log = ShareEventLog()
        hoster.onShareEvent = { log.append($0) }
        let badSpec = #expect(throws: LiveError.self) { try hoster.startShare(source: "screen:99") }
        #expect(badSpec?.code == .invalidParams)
        #expect(throws: LiveError.self) { try hoster.startShare(source: "test", shareInfo: String(repeating: "x", count: 1025)) }

        let unused = try #require(VirtualDisplay.unusedNumber())
        try hoster.startShare(source: "screen::\(unused)")
        let noServer = log.wait { event -> String? in if case .enable(false, let reason) = event { return reason }; return nil }
        #expect(noServer?.contains("is an X server running on :\(unused)?") == true, "\(noServer ?? "")")
        #expect(hoster.sharedSource == nil)

        // Four test co-hosts fill every tile: no room for the camera.
        options.configuration.mixTestCohosts = 4
        let full = try Hoster(options: options)
        let fullLog = ShareEventLog()
        full.onShareEvent = { fullLog.append($0) }
        try full.startPush(url: nil)  // its end stops the test co-hosts
        defer { full.stopPush() }
        try full.startShare(source: "color:white")
        #expect(fullLog.wait { event -> String? in if case .enable(false, let reason) = event { return reason }; return nil }?
            .contains("no room") == true)

        var audio = Hoster.Options()
        audio.livingMediaMode = .audio
        let audioOnly = try Hoster(options: audio)
        let audioLog = ShareEventLog()
        audioOnly.onShareEvent = { audioLog.append($0) }
        try audioOnly.startShare(source: "color:white")
        #expect(audioLog.wait { event -> String? in if case .enable(false, let reason) = event { return reason }; return nil }?
            .contains("audio-only") == true)
    }
}
