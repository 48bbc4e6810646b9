import LiveSignal
import Foundation
import LiveCore
import LiveLine
import LiveRTMP
import LiveServer
import LiveTestSupport
import Testing

/// A player's view of a stream: the colour of the left and right quarters of each frame.
final class QuarterSink: GuestVideoSink, @unchecked Sendable {
    // @unchecked: `seen` is a Locked.
    let seen = Locked<[(left: String, right: String)]>([])
    var size: (width: Int, height: Int)? { nil }

    func render(_ frame: VideoFrame) {
        let row = frame.height / 2
        let sample = (Self.name(frame.pixel(x: frame.width / 8, y: row)), Self.name(frame.pixel(x: frame.width * 7 / 8, y: row)))
        seen.update { $0.append(sample) }
    }

    /// The last `count` frames all show `left` and `right`.
    func shows(_ left: String, _ right: String, count: Int = 5) -> Bool {
        let last = seen.value.suffix(count)
        return last.count == count && last.allSatisfy { $0.left == left && $0.right == right }
    }

    /// The nearest of red, green, blue and white.
    static func name(_ colour: YUVColor) -> String {
        let named: [(String, YUVColor)] = [("red", YUVColor(r: 255, g: 0, b: 0)), ("green", YUVColor(r: 0, g: 255, b: 0)),
                                           ("blue", YUVColor(r: 0, g: 0, b: 255)), ("white", .white)]
        func distance(_ a: YUVColor, _ b: YUVColor) -> Int {
            [Int(a.y) - Int(b.y), Int(a.u) - Int(b.u), Int(a.v) - Int(b.v)].reduce(0) { $0 + $1 * $1 }
        }
        return named.min { distance($0.1, colour) < distance($1.1, colour) }!.0
    }
}

/// Paints the left quarter of `frame` in `colour`, in place.
func paintLeftQuarter(_ frame: VideoFrame, _ colour: YUVColor) {
    let values = [colour.y, colour.u, colour.v]
    for p in 0..<3 {
        for row in 0..<frame.planeHeight(p) {
            (frame.plane(p) + row * frame.stride(p)).update(repeating: values[p], count: frame.planeWidth(p) / 4)
        }
    }
}

@Suite("The co-hosting guest's camera through the kit, seen by a player of its stream", .serialized)
struct CohostCameraKitTests {
    /// A relay, a hoster whose line is open (pushing white), and a guest co-hosting with
    /// `options`; returns the co-host's pubId.
    static func cohosting(_ liveId: String, _ guestOptions: Guest.Options, prepare: (Guest) -> Void = { _ in })
        throws -> (relay: RelayServer, hoster: Hoster, hosterLog: LineEventLog, guest: Guest, pubId: String, server: LineServer,
                   guestLog: LineEventLog) {
        var configuration = RelayServer.Configuration(rtmp: RTMPServer.Configuration(port: 0), httpPort: 0, loops: 2)
        configuration.line = LineLimits()
        let relay = try RelayServer(configuration: configuration)
        let rtmp = LineServer.hosterPushURL(try RTMPURL(parsing: "rtmp://127.0.0.1:\(relay.rtmpPort)/live/\(liveId)"))
        let server = LineServer(signalURL: "ws://127.0.0.1:\(relay.httpPort)/line", rtmp: rtmp)
        var options = Hoster.Options()
        options.configuration.source = "color:white"
        options.configuration.audioSource = "none"
        options.configuration.fps = 15
        (options.configuration.width, options.configuration.height) = (320, 180)
        let hoster = try Hoster(options: options)
        let hosterLog = LineEventLog()
        hoster.onLineEvent = { hosterLog.append($0) }
        try hoster.startPush(url: rtmp)
        try hoster.createLine(server: server, liveId: liveId, userId: "host")
        #expect(hosterLog.wait { event -> LiveCode? in if case .lineResult(let code, _) = event { return code }; return nil } == .ok)

        let guest = Guest(options: guestOptions)
        let guestLog = LineEventLog()
        guest.onLineEvent = { guestLog.append($0) }
        prepare(guest)
        try guest.joinLine(server: server, liveId: liveId, userId: "co")
        guest.applyLine()
        let peer = try #require(hosterLog.wait { event -> String? in if case .application(let p, "co", _) = event { return p }; return nil })
        hoster.acceptLine(peerId: peer)
        #expect(guestLog.wait(timeout: 10) { event -> Bool? in if case .cohostPush(.ok) = event { return true }; return nil } == true)
        let pubId = try #require(hosterLog.wait { event -> String? in if case .cohostOpened(peer, let pubId, _, _) = event { return pubId }; return nil })
        return (relay, hoster, hosterLog, guest, pubId, server, guestLog)
    }

    static func guestOptions() -> Guest.Options {
        var options = Guest.Options()
        options.cohost.source = "color:red"
        options.cohost.audioSource = "none"
        options.cohost.fps = 15
        (options.cohost.width, options.cohost.height) = (160, 90)
        return options
    }

    @Test("the raw-frame hook and the preview from the first frame; mirror, zoom and switchCamera on the running push: the player of the co-host's stream sees each")
    func cameraAtRunTime() throws {
        let previews = Locked<[String]>([])
        let line = try Self.cohosting("cam", Self.guestOptions()) { guest in
            // Set before co-hosting: they apply from the push's first frame.
            guest.setRawFrameHook { frame in
                paintLeftQuarter(frame, YUVColor(r: 0, g: 255, b: 0))
                return frame
            }
            guest.setLocalVideoCapturer { frame in
                previews.update { $0.append(QuarterSink.name(frame.pixel(x: frame.width / 8, y: frame.height / 2))) }
            }
            guest.cohostOtherSources = ["color:blue"]
        }
        defer {
            line.guest.leaveLine()
            line.hoster.closeLine()
            line.hoster.stopPush()
            line.relay.shutdown()
        }
        let viewer = Guest()
        let sink = QuarterSink()
        try viewer.startPlay(url: line.server.streamURL(pubId: line.pubId), sink: sink)
        defer { viewer.stopPlay() }

        #expect(eventually(10) { sink.shows("green", "red") }, "\(sink.seen.value.suffix(3))")
        #expect(previews.value.count >= 5 && previews.value.suffix(5).allSatisfy { $0 == "green" }, "\(previews.value.suffix(5))")

        line.guest.setMirror(true)
        #expect(line.guest.isMirrored)
        #expect(eventually(5) { sink.shows("red", "green") }, "mirror: \(sink.seen.value.suffix(3))")
        line.guest.setMirror(false)

        // Zoom 2 crops the middle half: the hook's green quarter falls outside it.
        line.guest.setCameraZoom(2)
        #expect(line.guest.cameraZoom == 2)
        #expect(eventually(5) { sink.shows("red", "red") }, "zoom: \(sink.seen.value.suffix(3))")
        line.guest.setCameraZoom(1)

        try line.guest.switchCamera()
        #expect(line.guest.cameraIndex == 1)
        #expect(eventually(5) { sink.shows("green", "blue") }, "switchCamera: \(sink.seen.value.suffix(3))")

        // nil takes the hook and the preview away.
        line.guest.setRawFrameHook(nil)
        line.guest.setLocalVideoCapturer(nil)
        #expect(eventually(5) { sink.shows("blue", "blue") }, "no hook: \(sink.seen.value.suffix(3))")
        let previewed = previews.value.count
        Thread.sleep(forTimeInterval: 0.3)
        #expect(previews.value.count == previewed)
    }

    @Test("the co-host push reports its local picture and sound as the hoster's push does: firstLocalVideoFrame at the camera's size, localAudioActive at its showTime")
    func localEvents() throws {
        var options = Self.guestOptions()
        options.cohost.audioSource = "tone"
        options.cohost.audioLevelIntervalMilliseconds = 200
        let line = try Self.cohosting("local", options)
        defer {
            line.guest.leaveLine()
            line.hoster.closeLine()
            line.hoster.stopPush()
            line.relay.shutdown()
        }
        #expect(line.guestLog.wait { event -> [Int]? in
            if case .cohostPush(.firstLocalVideoFrame(let w, let h)) = event { return [w, h] }; return nil
        } == [160, 90])
        let level = line.guestLog.wait { event -> [Int]? in
            if case .cohostPush(.localAudioActive(let level, let showTime)) = event { return [level, showTime] }; return nil
        }
        #expect(level?.last == 200 && (level?.first ?? 0) > 0, "\(String(describing: level))")
        #expect(LineSessionEvent.cohostPush(.firstLocalVideoFrame(width: 160, height: 90)).name == "cohostPush.firstLocalVideoFrame")
        // One first frame per push: the same size again is no event.
        Thread.sleep(forTimeInterval: 0.3)
        #expect(line.guestLog.all.filter { if case .cohostPush(.firstLocalVideoFrame) = $0 { true } else { false } }.count == 1)
        #expect(!line.guestLog.all.contains { if case .cohostPush(.localVideoViewChanged) = $0 { true } else { false } })
    }

    @Test("linkMediaMode audio: the co-host publishes sound only (a player gets audio and no picture) and the room hears its video off")
    func audioLink() throws {
        var options = Self.guestOptions()
        options.cohost.audioSource = "tone:440"
        options.linkMediaMode = .audio
        #expect(options.cohost.livingMediaMode == .audio)
        let line = try Self.cohosting("voice", options)
        defer {
            line.guest.leaveLine()
            line.hoster.closeLine()
            line.hoster.stopPush()
            line.relay.shutdown()
        }
        #expect(line.hosterLog.wait { event -> Bool? in if case .remoteAVStatus(_, true, let video) = event { return video }; return nil } == false)
        let viewer = Guest()
        let audioFrames = Locked(0)
        viewer.onAudio = { _ in audioFrames.update { $0 += 1 } }
        let sink = QuarterSink()
        try viewer.startPlay(url: line.server.streamURL(pubId: line.pubId), sink: sink)
        defer { viewer.stopPlay() }
        #expect(eventually(10) { audioFrames.value >= 20 }, "audio frames: \(audioFrames.value)")
        #expect(sink.seen.value.isEmpty)
    }
}
