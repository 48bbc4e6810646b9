import LiveSignal
import Foundation
import Glibc
import LiveCapture
import LiveCodec
import LiveCore
@testable import LiveLine
import LiveMix
import LiveRTMP
import LiveServer
import Synchronization
import Testing

/// Every event a kit reported, in order (any thread).
final class KitEventLog<Event: Sendable>: Sendable {
    private let events = Mutex<[Event]>([])

    func append(_ event: Event) { events.withLock { $0.append(event) } }

    var all: [Event] { events.withLock { $0 } }

    /// The first event `match` accepts, waiting up to `timeout` seconds.
    func wait<T>(timeout: Double = 5, _ match: (Event) -> T?) -> T? {
        let deadline = Date().addingTimeInterval(timeout)
        repeat {
            if let hit = all.lazy.compactMap(match).first { return hit }
            Thread.sleep(forTimeInterval: 0.02)
        } while Date() < deadline
        return nil
    }

    func count(_ match: (Event) -> Bool) -> Int { all.filter(match).count }
}

/// A TCP listener on 127.0.0.1 that never accepts or answers: a connect succeeds (the
/// kernel completes it) and then nothing comes back, as from a hung server.
final class SilentServer {
    let port: Int
    private let fd: Int32

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.fd = fd
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        try #require(bound == 0 && listen(fd, 16) == 0, "bind/listen: errno \(errno)")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit { close(fd) }
}

/// The hoster kit through its public API: the push's lifecycle and calling style, its
/// events (first local frame, picture size, failed first connect, live start/stop on the
/// line), the hoster's own video switch inside the mix, the co-hosts' fill image, the
/// link media mode, the camera controls and the SDK-wide settings.
@Suite("Hoster kit: push lifecycle, events and controls", .serialized)
struct HosterKitTests {
    static func options(source: String = "color:white", width: Int = 320, height: Int = 180, fps: Int = 15) -> Hoster.Options {
        var options = Hoster.Options()
        options.configuration.source = source
        (options.configuration.width, options.configuration.height) = (width, height)
        options.configuration.fps = fps
        options.configuration.bitrateKbps = 300
        // Players start at the relay's last keyframe: a short interval keeps what they
        // decode close to now.
        options.configuration.keyframeIntervalSeconds = 0.5
        options.configuration.audioSource = "none"
        options.push.backoff.maxTries = 0
        return options
    }

    static func relay() throws -> RelayServer {
        var configuration = RelayServer.Configuration(rtmp: RTMPServer.Configuration(port: 0), httpPort: 0, loops: 2)
        configuration.line = LineLimits()
        return try RelayServer(configuration: configuration)
    }

    /// Seconds `body` took.
    static func seconds(_ body: () throws -> Void) rethrows -> Double {
        let start = Date()
        try body()
        return Date().timeIntervalSince(start)
    }

    /// What a player decodes from `url` over `seconds` of stream time: luma planes of
    /// `width`×`height`, every frame as sent (no rate conversion).
    static func playerFrames(_ url: String, seconds: Double, width: Int, height: Int) throws -> [[UInt8]] {
        let output = try Peers.run("/usr/bin/ffmpeg", ["-nostdin", "-v", "error",
                                                       // The FLV header promises audio: do not wait the default 5 s for it.
                                                       "-analyzeduration", "500000", "-i", url, "-t", String(seconds),
                                                       "-fps_mode", "passthrough", "-f", "rawvideo", "-pix_fmt", "gray", "-"])
        let size = width * height
        let bytes = [UInt8](output.stdout)
        return stride(from: 0, to: bytes.count - size + 1, by: size).map { Array(bytes[$0..<$0 + size]) }
    }

    /// The mean luma of `rect` in a `width`-wide luma plane.
    static func meanLuma(_ plane: [UInt8], width: Int, _ rect: MixRect) -> Int {
        var sum = 0
        for y in rect.y..<rect.y + rect.h {
            for x in rect.x..<rect.x + rect.w { sum += Int(plane[y * width + x]) }
        }
        return sum / max(1, rect.w * rect.h)
    }

    /// The middle half of `rect` (away from borders and scaling edges).
    static func inner(_ rect: MixRect) -> MixRect {
        MixRect(x: rect.x + rect.w / 4, y: rect.y + rect.h / 4, w: max(1, rect.w / 2), h: max(1, rect.h / 2))
    }

    // MARK: - calling style

    @Test("startPush twice is refused with alreadyPushing (no second pipeline); after the push has ended a new one starts")
    func startPushTwice() throws {
        let hoster = try Hoster(options: Self.options())
        let log = KitEventLog<HosterEvent>()
        hoster.onEvent = { log.append($0) }
        try hoster.startPush(url: nil)
        #expect(hoster.isPushing)
        let error = #expect(throws: Hoster.Error.self) { try hoster.startPush(url: nil) }
        #expect(error == .alreadyPushing)
        #expect(error?.description.contains("already running") == true)
        #expect(eventually { hoster.pipelineStats.encoded > 3 })
        hoster.stopPush()
        #expect(try hoster.wait(seconds: 5))
        #expect(!hoster.isPushing)
        // One capture ran: one first frame.
        #expect(log.count { if case .firstLocalVideoFrame = $0 { true } else { false } } == 1)
        try hoster.startPush(url: nil)
        defer { hoster.stopPush() }
        #expect(eventually { log.count { if case .firstLocalVideoFrame = $0 { true } else { false } } == 2 })
    }

    @Test("startPush, createLine, closeLine and stopPush return at once against servers that never answer (connect timeout 10 s)")
    func promptAgainstSilentServers() throws {
        let rtmp = try SilentServer()
        let signal = try SilentServer()
        var options = Self.options()
        options.push.publisher.connectTimeout = .seconds(10)
        let hoster = try Hoster(options: options)
        let log = KitEventLog<HosterEvent>()
        hoster.onEvent = { log.append($0) }
        let url = try RTMPURL(parsing: "rtmp://127.0.0.1:\(rtmp.port)/live/silent")
        let server = LineServer(signalURL: "ws://127.0.0.1:\(signal.port)/line", rtmp: url)
        // Each call well under the connect timeout it would otherwise wait out.
        #expect(try Self.seconds { try hoster.startPush(url: url) } < 3)
        #expect(hoster.isPushing)
        #expect(try Self.seconds { try hoster.createLine(server: server, liveId: "silent") } < 3)
        #expect(Self.seconds { hoster.closeLine() } < 3)
        #expect(Self.seconds { hoster.stopPush() } < 3)
        // Nothing was published: no ok, and the live never started.
        #expect(!log.all.contains(.ok))
        #expect(!hoster.isLive)
    }

    @Test("a first connect that fails reports failed with its code (100), wait throws it; no ok, no closed")
    func firstConnectFails() throws {
        let hoster = try Hoster(options: Self.options())
        let log = KitEventLog<HosterEvent>()
        hoster.onEvent = { log.append($0) }
        let port = try Peers.freePort()
        try hoster.startPush(url: try RTMPURL(parsing: "rtmp://127.0.0.1:\(port)/live/nobody"))
        #expect(log.wait(timeout: 10) { event -> LiveCode? in if case .failed(let code) = event { return code }; return nil } == .networkError)
        #expect(eventually(10) { !hoster.isPushing })
        let error = #expect(throws: LiveError.self) { _ = try hoster.wait(seconds: 1) }
        #expect(error?.code == .networkError)
        #expect(!log.all.contains(.ok) && !log.all.contains(.closed))
        #expect(hoster.pipelineStats.encoded == 0)
    }

    // MARK: - local picture, camera controls

    /// Cameras the kit makes from `v4l2:` specs: simulated, offering one size each.
    static func simulatedCameras(sizes: [String: (Int, Int)], controls: [UInt32: V4L2ControlRange]) -> Hoster.SourceMaker {
        { spec, c in
            guard spec.hasPrefix("v4l2:"), let size = sizes[spec] else {
                return try SourceSpec(parsing: spec).makeSource(width: c.width, height: c.height, fps: c.fps)
            }
            let path = String(spec.dropFirst(5))
            let device = SimulatedV4L2Device(path: path, offers: [.init(pixelFormat: .yuyv, sizes: [size])], controls: controls)
            return try V4L2Camera(path: path, width: c.width, height: c.height, fps: c.fps, device: device)
        }
    }

    @Test("the first captured frame comes with its size; a camera of another resolution reports localVideoViewChanged; focus goes through the camera's V4L2 controls")
    func localPictureAndFocus() throws {
        var options = Self.options(source: "test")
        options.otherSources = ["v4l2:/dev/video-sim-a", "v4l2:/dev/video-sim-b"]
        var controls = SimulatedV4L2Device.defaultControls
        controls[V4L2Control.focusAutomatic.id] = V4L2ControlRange(name: "Focus, Automatic Continuous", minimum: 0, maximum: 1,
                                                                   step: 1, defaultValue: 1)
        let simulated = Self.simulatedCameras(sizes: ["v4l2:/dev/video-sim-a": (640, 480), "v4l2:/dev/video-sim-b": (320, 240)],
                                              controls: controls)
        let hoster = try Hoster(options: options, makeSource: simulated)
        let log = KitEventLog<HosterEvent>()
        hoster.onEvent = { log.append($0) }
        // Before the push there is no camera to focus.
        #expect(throws: Hoster.Error.self) { try hoster.setCameraFocus(.automatic) }
        try hoster.startPush(url: nil)
        defer { hoster.stopPush() }
        #expect(log.wait { event -> [Int]? in if case .firstLocalVideoFrame(let w, let h) = event { return [w, h] }; return nil } == [320, 180])
        // The test pattern is no camera: a clear refusal, not a silent no-op.
        let refused = #expect(throws: Hoster.Error.self) { try hoster.setCameraFocus(.absolute(10)) }
        #expect(refused?.description.contains("no focus control") == true)
        #expect(hoster.cameraFocusRange == nil)

        try hoster.switchCamera()
        #expect(hoster.cameraIndex == 1)
        #expect(log.wait { event -> [Int]? in if case .localVideoViewChanged(let w, let h) = event { return [w, h] }; return nil } == [640, 480])
        // The stream keeps its size: the camera's picture is fitted into it.
        #expect(eventually { hoster.pipelineStats.encoded > 5 })
        #expect(hoster.cameraFocusRange?.maximum == 250)
        try hoster.setCameraFocus(.absolute(100))
        let camera = try #require(hoster.state.withLock { $0.camera }?.camera)
        #expect(try camera.value(of: .focus) == 100)
        #expect(try camera.value(of: .focusAutomatic) == 0)
        try hoster.setCameraFocus(.automatic)
        #expect(try camera.value(of: .focusAutomatic) == 1)
        // Outside the camera's range: the camera's own error.
        #expect(throws: (any Error).self) { try hoster.setCameraFocus(.absolute(9999)) }

        try hoster.switchCamera()
        #expect(log.wait { event -> [Int]? in if case .localVideoViewChanged(320, 240) = event { return [320, 240] }; return nil } == [320, 240])
        #expect(log.count { if case .firstLocalVideoFrame = $0 { true } else { false } } == 1)
    }

    @Test("the local-picture events the hoster's and the co-host's pushes share: the first frame's size, a camera's own size, a change only when it differs")
    func localPictureSize() throws {
        let cameras = Self.simulatedCameras(sizes: ["v4l2:/dev/video-sim-a": (640, 480)], controls: SimulatedV4L2Device.defaultControls)
        var c = HosterConfiguration()
        (c.width, c.height) = (320, 180)
        let pattern = try cameras("test", c)
        let camera = try cameras("v4l2:/dev/video-sim-a", c)
        defer { camera.stop() }
        let frame = VideoFrame(width: 320, height: 180)
        let picture = LocalPictureSize()
        #expect(picture.event(frame, from: pattern) == .firstLocalVideoFrame(width: 320, height: 180))
        #expect(picture.event(frame, from: pattern) == nil)
        #expect(picture.event(frame, from: camera) == .localVideoViewChanged(width: 640, height: 480))
        #expect(picture.event(frame, from: pattern) == .localVideoViewChanged(width: 320, height: 180))
    }

    @Test("a camera without an automatic focus control: .automatic is refused by name; .absolute still works")
    func focusWithoutAutomatic() throws {
        var options = Self.options(source: "v4l2:/dev/video-sim")
        options.configuration.fps = 15
        let hoster = try Hoster(options: options, makeSource: Self.simulatedCameras(sizes: ["v4l2:/dev/video-sim": (320, 180)],
                                                                                    controls: SimulatedV4L2Device.defaultControls))
        try hoster.startPush(url: nil)
        defer { hoster.stopPush() }
        let error = #expect(throws: Hoster.Error.self) { try hoster.setCameraFocus(.automatic) }
        #expect(error?.description.contains("focus_automatic_continuous") == true)
        try hoster.setCameraFocus(.absolute(50))
        let camera = try #require(hoster.state.withLock { $0.camera }?.camera)
        #expect(try camera.value(of: .focus) == 50)
    }

    @Test("the preview, raw hook, zoom, mirror, logo, filter and camera switch each change what the preview sees")
    func pictureControls() throws {
        var options = Self.options()
        options.cameraType = .thirdFilter
        options.otherSources = ["color:blue"]
        let hoster = try Hoster(options: options)
        let previews = KitEventLog<[UInt8]>()
        let (width, height) = (320, 180)
        hoster.setLocalVideoCapturer { frame in
            previews.append((0..<frame.height).flatMap { y in (0..<frame.width).map { x in frame.sample(plane: 0, x: x, y: y) } })
        }
        // The app's own processing: the left quarter black.
        hoster.setRawFrameHook { frame in
            for y in 0..<frame.height { memset(frame.y + y * frame.stride(0), 16, frame.width / 4) }
            return frame
        }
        try hoster.startPush(url: nil)
        defer { hoster.stopPush() }
        /// The luma at (x, y) of the preview two frames from now (the first may have been
        /// under way when a control changed).
        func luma(_ x: Int, _ y: Int) -> Int {
            let seen = previews.all.count
            _ = eventually { previews.all.count >= seen + 2 }
            return Int(previews.all.last?[y * width + x] ?? 0)
        }
        #expect(luma(width / 10, height / 2) < 40)
        #expect(luma(width / 2, height / 2) > 200)
        // Zoom 2: the middle half of the picture, so the black quarter is cropped away.
        hoster.setCameraZoom(2)
        #expect(hoster.cameraZoom == 2)
        #expect(luma(width / 10, height / 2) > 200)
        hoster.cameraZoom = 1
        // Mirror: the black quarter moves to the right.
        hoster.setMirror(true)
        #expect(hoster.isMirrored)
        #expect(luma(width - width / 10, height / 2) < 40)
        #expect(luma(width / 10, height / 2) > 200)
        // A red logo at the top left.
        hoster.setLogo(RGBAImage(width: 16, height: 16, r: 255, g: 0, b: 0, a: 255), x: 0, y: 0)
        #expect((60...100).contains(luma(4, 4)))
        hoster.setLogo(nil, x: 0, y: 0)
        #expect(luma(4, 4) > 200)
        // Blur softens the black/white edge (at 3/4 of the width, mirrored).
        let edge = width - width / 4
        hoster.setCameraFilter(.gaussianBlur)
        #expect(hoster.cameraFilter == .gaussianBlur)
        let soft = [luma(edge - 1, height / 2), luma(edge, height / 2)]
        #expect(soft.contains { (40...210).contains($0) }, "\(soft)")
        hoster.setCameraFilter(.original)
        #expect(hoster.cameraFilter == .original)
        // The next source: blue.
        try hoster.switchCamera()
        #expect(hoster.cameraIndex == 1)
        #expect(eventually { (30...55).contains(luma(width / 2, height / 2)) })
        hoster.setMirror(false)
        #expect(!hoster.isMirrored)
    }

    // MARK: - the line: live start / stop, the hoster's video switch, fill image, link mode

    /// A hoster pushing to `relay` with line `liveId` created, and a guest joined to it.
    static func line(_ relay: RelayServer, liveId: String, options: Hoster.Options,
                     guestOptions: Guest.Options = Guest.Options()) throws
        -> (hoster: Hoster, hosterLog: KitEventLog<LineSessionEvent>, guest: Guest, guestLog: KitEventLog<LineSessionEvent>, rtmp: RTMPURL, server: LineServer) {
        let rtmp = LineServer.hosterPushURL(try RTMPURL(parsing: "rtmp://127.0.0.1:\(relay.rtmpPort)/live/\(liveId)"))
        let server = LineServer(signalURL: "ws://127.0.0.1:\(relay.httpPort)/line", rtmp: rtmp)
        let hoster = try Hoster(options: options)
        let hosterLog = KitEventLog<LineSessionEvent>()
        hoster.onLineEvent = { hosterLog.append($0) }
        try hoster.startPush(url: rtmp)
        try hoster.createLine(server: server, liveId: liveId, userId: "host")
        try #require(hosterLog.wait(timeout: 10) { event -> LiveCode? in if case .lineResult(let code, _) = event { return code }; return nil } == .ok)
        let guest = Guest(options: guestOptions)
        let guestLog = KitEventLog<LineSessionEvent>()
        guest.onLineEvent = { guestLog.append($0) }
        try guest.joinLine(server: server, liveId: liveId, userId: "g1")
        try #require(guestLog.wait { event -> Bool? in if case .lineResult(.ok, _) = event { return true }; return nil } == true)
        return (hoster, hosterLog, guest, guestLog, rtmp, server)
    }

    static func isLiveStart(_ event: LineSessionEvent) -> Bool { if case .liveStart = event { true } else { false } }
    static func isLiveStop(_ event: LineSessionEvent) -> Bool { if case .liveStop = event { true } else { false } }

    @Test("the line's guests hear liveStart while the push is published and liveStop when it stops; a new push starts the live again")
    func liveStartStop() throws {
        let relay = try Self.relay()
        defer { relay.shutdown() }
        let (hoster, _, guest, guestLog, rtmp, server) = try Self.line(relay, liveId: "livesw", options: Self.options())
        defer { guest.leaveLine() }
        let pushLog = KitEventLog<HosterEvent>()
        hoster.onEvent = { pushLog.append($0) }
        #expect(hoster.isLive)
        #expect(guestLog.wait { Self.isLiveStart($0) ? true : nil } == true)
        hoster.stopPush()
        #expect(guestLog.wait(timeout: 10) { Self.isLiveStop($0) ? true : nil } == true)
        #expect(eventually { !hoster.isLive })
        #expect(pushLog.wait { $0 == .closed ? true : nil } == true)
        // A guest joining while the live is off hears no liveStart.
        let late = Guest(options: Guest.Options())
        let lateLog = KitEventLog<LineSessionEvent>()
        late.onLineEvent = { lateLog.append($0) }
        try late.joinLine(server: server, liveId: "livesw", userId: "g2")
        defer { late.leaveLine() }
        #expect(lateLog.wait { event -> Bool? in if case .lineResult(.ok, _) = event { return true }; return nil } == true)
        #expect(try hoster.wait(seconds: 5))
        try hoster.startPush(url: rtmp)
        #expect(guestLog.wait(timeout: 10) { _ in guestLog.count(Self.isLiveStart) == 2 ? true : nil } == true)
        #expect(lateLog.wait(timeout: 10) { Self.isLiveStart($0) ? true : nil } == true)
        #expect(lateLog.count(Self.isLiveStart) == 1)
        // Closing the line: the live was on, so liveStop, then lineLeave.
        hoster.closeLine()
        #expect(guestLog.wait { event -> Bool? in if case .lineLeave = event { return true }; return nil } == true)
        #expect(guestLog.count(Self.isLiveStop) == 2)
        hoster.stopPush()
    }

    @Test("setLocalVideoEnable(false): the hoster's own cell is black at the normal frame rate, the co-hosts stay; the room hears it", arguments: [0, 1])
    func localVideoOff(testCohosts: Int) throws {
        let relay = try Self.relay()
        defer { relay.shutdown() }
        var options = Self.options()
        options.configuration.mixTestCohosts = testCohosts  // red
        let liveId = "videooff\(testCohosts)"
        let (hoster, _, guest, guestLog, _, _) = try Self.line(relay, liveId: liveId, options: options)
        defer {
            guest.leaveLine()
            hoster.clear()
        }
        hoster.setLocalVideoEnable(false)
        #expect(!hoster.isLocalVideoEnabled)
        #expect(guestLog.wait { event -> Bool? in if case .remoteAVStatus("hoster", true, let video) = event { return video }; return nil } == false)
        Thread.sleep(forTimeInterval: 0.3)
        let (width, height) = (320, 180)
        let frames = try Self.playerFrames("rtmp://127.0.0.1:\(relay.rtmpPort)/live/\(liveId)", seconds: 2, width: width, height: height)
        // 2 s at 15 fps (the player starts at the relay's last keyframe, so a few more may come).
        #expect(frames.count >= 24, "\(frames.count) frames in 2 s")
        let layout = try MixLayout(canvasWidth: width, canvasHeight: height, template: .full, cohosts: testCohosts)
        let hostArea = testCohosts == 0 ? Self.inner(layout.rects[0]) : MixRect(x: 4, y: 4, w: 20, h: 20)
        if testCohosts > 0 {
            let tile = layout.rects[1]
            #expect(tile.x > hostArea.x + hostArea.w || tile.y > hostArea.y + hostArea.h, "the sampled corner is the hoster's")
        }
        let last = try #require(frames.last)
        #expect(Self.meanLuma(last, width: width, hostArea) < 30)
        if testCohosts > 0 {
            #expect((60...100).contains(Self.meanLuma(last, width: width, Self.inner(layout.rects[1]))), "the red co-host stays")
        }
        // On again: the hoster's white is back.
        hoster.setLocalVideoEnable(true)
        #expect(guestLog.wait { event -> Bool? in if case .remoteAVStatus("hoster", true, true) = event { return true }; return nil } == true)
        Thread.sleep(forTimeInterval: 0.5)
        let after = try Self.playerFrames("rtmp://127.0.0.1:\(relay.rtmpPort)/live/\(liveId)", seconds: 1, width: width, height: height)
        #expect(Self.meanLuma(try #require(after.last), width: width, hostArea) > 200)
    }

    @Test("setVideoSubBackground: a co-host that turns its video off shows the fill image in its tile; on again, its picture")
    func subBackground() throws {
        let relay = try Self.relay()
        defer { relay.shutdown() }
        var guestOptions = Guest.Options()
        guestOptions.cohost.source = "color:red"
        (guestOptions.cohost.width, guestOptions.cohost.height) = (160, 90)
        guestOptions.cohost.audioSource = "none"
        let (hoster, hosterLog, guest, guestLog, _, _) = try Self.line(relay, liveId: "subbg", options: Self.options(),
                                                                       guestOptions: guestOptions)
        defer {
            guest.leaveLine()
            hoster.clear()
        }
        let directory = try Peers.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("fill.png").path
        try ImageFile.writePNG(RGBAImage(width: 32, height: 18, r: 0, g: 0, b: 255, a: 255), path: path)
        try hoster.setVideoSubBackground(path: path)
        #expect(throws: (any Error).self) { try hoster.setVideoSubBackground(path: directory.appendingPathComponent("none.png").path) }

        guest.applyLine()
        let peerId = try #require(hosterLog.wait { event -> String? in if case .application(let peer, _, _) = event { return peer }; return nil })
        hoster.acceptLine(peerId: peerId)
        #expect(hosterLog.wait(timeout: 10) { event -> Bool? in if case .cohostFirstFrame(peerId, _, _) = event { return true }; return nil } == true)
        let (width, height) = (320, 180)
        let tile = Self.inner(try MixLayout(canvasWidth: width, canvasHeight: height, template: .full, cohosts: 1).rects[1])
        let url = "rtmp://127.0.0.1:\(relay.rtmpPort)/live/subbg"
        Thread.sleep(forTimeInterval: 0.5)
        let red = Self.meanLuma(try #require(Self.playerFrames(url, seconds: 1.5, width: width, height: height).last), width: width, tile)
        #expect((60...100).contains(red), "the co-host's red: \(red)")

        guest.setLocalVideoEnable(false)
        #expect(hosterLog.wait { event -> Bool? in if case .remoteAVStatus(peerId, _, false) = event { return true }; return nil } == true)
        Thread.sleep(forTimeInterval: 0.5)
        let blue = Self.meanLuma(try #require(Self.playerFrames(url, seconds: 1.5, width: width, height: height).last), width: width, tile)
        #expect((25...55).contains(blue), "the fill image's blue: \(blue)")
        guest.setLocalVideoEnable(true)
        #expect(hosterLog.wait { event -> Bool? in if case .remoteAVStatus(peerId, _, true) = event { return true }; return nil } == true)
        #expect(eventually(5) {
            let frames = (try? Self.playerFrames(url, seconds: 0.5, width: width, height: height)) ?? []
            return frames.last.map { (60...100).contains(Self.meanLuma($0, width: width, tile)) } ?? false
        })
        _ = guestLog
    }

    @Test("before a co-host's first frame its tile shows the fill image (the mix a co-host stream that does not exist yet)")
    func fillBeforeFirstFrame() throws {
        let mix = try HosterMix(width: 320, height: 180, template: .full, options: MixOptions())
        mix.setSubBackground(RGBAImage(width: 8, height: 8, r: 0, g: 0, b: 255, a: 255))
        let port = try Peers.freePort()
        try mix.addCohost(key: "p1", stream: try RTMPURL(parsing: "rtmp://127.0.0.1:\(port)/live/none"))
        defer { mix.stop() }
        let host = VideoFrame(width: 320, height: 180)
        host.fill(.white)
        let out = mix.process(host)
        let tile = Self.inner(try MixLayout(canvasWidth: 320, canvasHeight: 180, template: .full, cohosts: 1).rects[1])
        let blue = Int(out.sample(plane: 0, x: tile.x + tile.w / 2, y: tile.y + tile.h / 2))
        #expect((25...55).contains(blue), "\(blue)")
        #expect(Int(out.sample(plane: 0, x: 4, y: 4)) > 200)
    }

    @Test("rejectLine, hangupLine, setLineAVStatus, pushStatus, the capture clock, renewLineToken without a line, clear and requestStop through the kit")
    func lineControls() throws {
        let relay = try Self.relay()
        defer { relay.shutdown() }
        var guestOptions = Guest.Options()
        guestOptions.cohost.source = "color:red"
        (guestOptions.cohost.width, guestOptions.cohost.height) = (160, 90)
        guestOptions.cohost.audioSource = "none"
        let (hoster, hosterLog, guest, guestLog, _, _) = try Self.line(relay, liveId: "controls", options: Self.options(),
                                                                       guestOptions: guestOptions)
        defer { guest.leaveLine() }
        #expect(hoster.captureClockZeroWallMicros.map { $0 > 1_600_000_000_000_000 } == true)
        // Turned down: the guest hears 601.
        guest.applyLine()
        let first = try #require(hosterLog.wait { event -> String? in if case .application(let peer, _, _) = event { return peer }; return nil })
        hoster.rejectLine(peerId: first)
        #expect(guestLog.wait { event -> LiveCode? in if case .applicationResult(let code, first, _) = event { return code }; return nil } == .hosterRejected)
        // Taken, then hung up by the hoster: the guest hears it and the mix drops it.
        guest.applyLine()
        let second = try #require(hosterLog.wait { event -> String? in
            if case .application(let peer, _, _) = event, peer != first { return peer }
            return nil
        })
        hoster.acceptLine(peerId: second)
        #expect(eventually(10) { hoster.mixedCohosts == [second] })
        hoster.hangupLine(peerId: second)
        #expect(guestLog.wait { event -> Bool? in if case .hungUp = event { return true }; return nil } == true)
        #expect(eventually { hoster.mixedCohosts.isEmpty })
        // The room hears the hoster's own status as given.
        hoster.setLineAVStatus(audio: false, video: true)
        #expect(guestLog.wait { event -> Bool? in if case .remoteAVStatus("hoster", false, true) = event { return true }; return nil } == true)
        // The push's figures: bytes went out.
        #expect(eventually(5) { hoster.pushStatus.upstreamBytesPerSecond > 0 })
        // clear: the line closes for the guests and the push stops.
        hoster.clear()
        #expect(guestLog.wait { event -> Bool? in if case .lineLeave = event { return true }; return nil } == true)
        #expect(try hoster.wait(seconds: 5))
        #expect(!hoster.isPushing && !hoster.isLive)
        // Without a line a line call is answered, not dropped.
        hoster.renewLineToken("t")
        #expect(hosterLog.wait { event -> LiveCode? in if case .refused("renewToken", let code, _) = event { return code }; return nil } == .lineNotStarted)
        // requestStop ends a push from any thread.
        try hoster.startPush(url: nil)
        DispatchQueue.global().async { hoster.requestStop() }
        #expect(try hoster.wait(seconds: 5))
    }

    @Test("a co-host stream that comes back at another size: the feed reports its first size, then the new one (onRTCRemoteVideoViewChanged)")
    func remoteSizeChange() throws {
        let relay = try Self.relay()
        defer { relay.shutdown() }
        let url = "rtmp://127.0.0.1:\(relay.rtmpPort)/live/resized"
        let sizes = KitEventLog<String>()
        let feed = CohostStreamFeed(url: try RTMPURL(parsing: url), deliver: { _ in },
                                    firstFrame: { w, h in sizes.append("first \(w)x\(h)") },
                                    resized: { w, h in sizes.append("resized \(w)x\(h)") })
        feed.start()
        defer { feed.stop() }
        func push(_ size: String, seconds: Int) throws -> Peers.Background {
            try Peers.Background("/usr/bin/ffmpeg", [
                "-nostdin", "-v", "error", "-re", "-f", "lavfi", "-i", "testsrc2=size=\(size):rate=15", "-t", String(seconds),
                "-c:v", "libx264", "-preset", "veryfast", "-tune", "zerolatency", "-g", "15", "-f", "flv", url,
            ])
        }
        let small = try push("160x90", seconds: 2)
        #expect(sizes.wait(timeout: 10) { $0.hasPrefix("first") ? $0 : nil } == "first 160x90")
        #expect(eventually(5) { !small.isRunning })
        small.stop()
        let large = try push("320x180", seconds: 4)
        defer { large.stop() }
        #expect(sizes.wait(timeout: 10) { $0.hasPrefix("resized") ? $0 : nil } == "resized 320x180")
        #expect(sizes.all.filter { $0.hasPrefix("first") }.count == 1)
    }

    @Test("linkMediaMode .audio: a video live opens an audio line; the co-host is a voice in the mix without a tile")
    func audioLink() throws {
        let relay = try Self.relay()
        defer { relay.shutdown() }
        var options = Self.options()
        options.linkMediaMode = .audio
        options.configuration.audioSource = "tone"
        var guestOptions = Guest.Options()
        (guestOptions.cohost.width, guestOptions.cohost.height) = (160, 90)
        let (hoster, hosterLog, guest, _, _, _) = try Self.line(relay, liveId: "audiolink", options: options, guestOptions: guestOptions)
        defer {
            guest.leaveLine()
            hoster.clear()
        }
        guest.applyLine()
        let peerId = try #require(hosterLog.wait { event -> String? in if case .application(let peer, _, _) = event { return peer }; return nil })
        hoster.acceptLine(peerId: peerId)
        #expect(hosterLog.wait(timeout: 10) { event -> Bool? in if case .audioLineOpened(peerId, _, _, _) = event { return true }; return nil } == true)
        #expect(eventually { hoster.mixedCohosts == [peerId] })
        #expect(hoster.currentMix?.cohostCount == 0, "no tile for a voice")
        #expect(!hosterLog.all.contains { if case .cohostOpened = $0 { true } else { false } })
    }

    // MARK: - SDK-wide

    @Test("LiveLineSDK: the version; a URL without a server goes to the default server (configServerForPriCloud); one with a server as given")
    func sdkWide() throws {
        #expect(LiveLineSDK.getSDKVersion() == LiveLineSDK.version)
        #expect(LiveLineSDK.version.split(separator: ".").count == 3)
        LiveLineSDK.defaultServer = nil
        #expect(throws: (any Error).self) { try LiveLineSDK.pushURL("live/room") }
        LiveLineSDK.configServerForPriCloud(address: "relay.example", port: 1940)
        defer { LiveLineSDK.defaultServer = nil }
        let url = try LiveLineSDK.pushURL("live/room?token=x")
        #expect(url.host == "relay.example" && url.port == 1940 && url.app == "live" && url.streamName == "room")
        #expect(try LiveLineSDK.pushURL("rtmp:///live/room").host == "relay.example")
        #expect(try LiveLineSDK.pushURL("rtmp://other:1935/live/room").host == "other")
        LiveLineSDK.configServerForPriCloud(address: "::1", port: 1935)
        #expect(try LiveLineSDK.pushURL("/live/room").host == "::1")
    }

    @Test("while pushing, status comes about once a second with plausible figures: bytes taken, the target bitrate, a small delay, no drops")
    func statusEvents() throws {
        let relay = try Self.relay()
        defer { relay.shutdown() }
        let hoster = try Hoster(options: Self.options())
        let log = KitEventLog<HosterEvent>()
        hoster.onEvent = { log.append($0) }
        try hoster.startPush(url: try RTMPURL(parsing: "rtmp://127.0.0.1:\(relay.rtmpPort)/live/status"))
        defer { hoster.stopPush() }
        #expect(log.wait(timeout: 10) { event -> Bool? in if case .ok = event { return true }; return nil } == true)
        // The first second's figures may predate the connection: the second status is a full second's.
        #expect(eventually(5) { log.count { if case .status = $0 { true } else { false } } >= 2 })
        let statuses = log.all.compactMap { event -> HosterStatus? in if case .status(let status) = event { return status }; return nil }
        let status = try #require(statuses.last)
        #expect(status.upstreamBytesPerSecond > 1_000 && status.upstreamBytesPerSecond < 200_000, "\(status)")
        #expect(status.bitrateKbps > 0 && status.bitrateKbps <= 300, "\(status)")
        #expect(status.delayMilliseconds >= 0 && status.delayMilliseconds < 1_000, "\(status)")
        #expect(status.droppedFrames == 0 && status.reconnects == 0, "\(status)")
    }

    @Test("the default server serves a play given without a server as it serves a push: the guest kit plays live/room from it")
    func defaultServerPlays() throws {
        let relay = try Self.relay()
        defer { relay.shutdown() }
        LiveLineSDK.configServerForPriCloud(address: "127.0.0.1", port: Int(relay.rtmpPort))
        defer { LiveLineSDK.defaultServer = nil }
        let hoster = try Hoster(options: Self.options())
        try hoster.startPush(url: "live/room")
        defer { hoster.stopPush() }
        let guest = Guest()
        let events = KitEventLog<GuestEvent>()
        guest.onEvent = { events.append($0) }
        try guest.startPlay(url: "live/room", sink: nil)
        defer { guest.stopPlay() }
        #expect(events.wait(timeout: 10) { event -> [Int]? in if case .firstFrame(let w, let h) = event { return [w, h] }; return nil } == [320, 180])
        LiveLineSDK.defaultServer = nil
        guest.stopPlay()
        #expect(throws: (any Error).self) { try guest.startPlay(url: "live/room", sink: nil) }
    }
}
