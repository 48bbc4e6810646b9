import Foundation
import LiveAuth
import LiveCodec
import LiveCore
import LiveRTMP
import LiveTestSupport
import Testing
@testable import LiveLine

/// A sink of its own size that keeps the last frame it was given (decode thread).
private final class RecordingSink: GuestVideoSink {
    // `last` and `count` are under `lock`: render runs on the decode thread.
    let size: (width: Int, height: Int)?
    private let lock = NSLock()
    private var last: VideoFrame?
    private var count = 0

    init(size: (width: Int, height: Int)?) { self.size = size }

    func render(_ frame: VideoFrame) {
        // The frame is reused after render: keep a copy.
        let copy = VideoFrame(width: frame.width, height: frame.height)
        copy.copy(from: frame)
        lock.lock()
        last = copy
        count += 1
        lock.unlock()
    }

    var frame: VideoFrame? {
        lock.lock()
        defer { lock.unlock() }
        return last
    }

    var frames: Int {
        lock.lock()
        defer { lock.unlock() }
        return count
    }
}

/// The guest kit's player through its public controls (the anyRTC SDK's ARRtmpGuestKit:
/// startRtmpPlay, stopRtmpPlay, updatePlayerRenderModel, the player delegate).
@Suite("Guest kit player", .serialized)
struct GuestKitTests {
    /// ffmpeg pushing `seconds` of a 320x240 testsrc2 with a 440 Hz tone to `url`.
    private static func push(_ url: String, seconds: Int = 20, size: String = "320x240") throws -> Peers.Background {
        try Peers.Background("/usr/bin/ffmpeg", [
            "-nostdin", "-v", "error", "-re", "-f", "lavfi", "-i", "testsrc2=size=\(size):rate=30",
            "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000", "-t", "\(seconds)",
            "-c:v", "libx264", "-preset", "ultrafast", "-tune", "zerolatency", "-g", "30", "-c:a", "aac",
            "-f", "flv", url,
        ])
    }

    private static func names(_ events: Locked<[GuestEvent]>) -> [String] { events.value.map(\.name) }

    @Test("startPlay returns at once; ok, firstFrame with the size, status; stats; isPlaying; a second startPlay is refused (604); stopPlay ends with closed(0) and playEnd .stopped")
    func playAndStop() throws {
        let nginx = try Peers.NginxRTMP()
        defer { nginx.stop() }
        let ffmpeg = try Self.push(nginx.url("kit"))
        defer { ffmpeg.stop() }
        Thread.sleep(forTimeInterval: 0.5)
        let guest = Guest()
        let events = Locked<[GuestEvent]>([])
        guest.onEvent = { event in events.update { $0.append(event) } }
        #expect(!guest.isPlaying && guest.playEnd == nil && guest.stats == GuestStats())
        let started = Date()
        try guest.startPlay(url: nginx.url("kit"), sink: nil)
        #expect(Date().timeIntervalSince(started) < 0.5)
        #expect(guest.isPlaying)
        let again = #expect(throws: LiveError.self) { try guest.startPlay(url: nginx.url("kit"), sink: nil) }
        #expect(again?.code == .alreadyOpen)
        #expect(eventually(8) { events.value.contains { if case .status = $0 { true } else { false } } })
        let names = Self.names(events)
        #expect(names.first == "ok", "\(names)")
        #expect(events.value.contains(.firstFrame(width: 320, height: 240)), "\(names)")
        // onRtmpPlayerStatus: what is buffered, the byte rate, the frame rate.
        let status = try #require(events.value.compactMap { event -> GuestStatus? in
            if case .status(let status) = event { status } else { nil }
        }.first)
        #expect(status.bytesPerSecond > 1000 && status.fps > 10 && status.cacheMilliseconds >= 0, "\(status)")
        let stats = guest.stats
        #expect(stats.frames > 10 && stats.width == 320 && stats.height == 240)
        #expect(stats.audioFrames > 10 && stats.audioSampleRate == 48000)
        #expect(stats.bytesReceived > 10_000 && stats.receiveBytesPerSecond > 0)
        // A handler set while playing takes the next events.
        let later = Locked<[GuestEvent]>([])
        guest.onEvent = { event in later.update { $0.append(event) } }
        #expect(eventually(3) { later.value.contains { $0.name == "status" } })
        guest.onEvent = { event in events.update { $0.append(event) } }
        guest.stopPlay()
        #expect(!guest.isPlaying)
        #expect(events.value.last == .closed(.ok))
        #expect(guest.playEnd?.reason == .stopped && guest.playEnd?.error == nil)
        // The last play's figures stay readable after its end; a new play may start.
        #expect(guest.stats.frames >= stats.frames)
        try guest.startPlay(url: nginx.url("kit"), sink: nil)
        #expect(guest.isPlaying && guest.playEnd == nil)
        let ended = Locked(false)
        guest.stopPlay { ended.update { $0 = true } }
        #expect(eventually(5) { ended.value })
        #expect(!guest.isPlaying && guest.playEnd?.reason == .stopped)
        // stopPlay from the play's own handler asks and returns (it would otherwise wait
        // for its own thread).
        try guest.startPlay(url: nginx.url("kit"), sink: nil)
        guest.onEvent = { [weak guest] event in if case .firstFrame = event { guest?.stopPlay() } }
        #expect(eventually(8) { !guest.isPlaying })
        #expect(guest.playEnd?.reason == .stopped)
    }

    @Test("the hoster stops: closed(0) and playEnd .streamEnded (onRtmpPlayerClosed)")
    func hosterStops() throws {
        let nginx = try Peers.NginxRTMP()
        defer { nginx.stop() }
        let guest = Guest()
        let events = Locked<[GuestEvent]>([])
        guest.onEvent = { event in events.update { $0.append(event) } }
        try guest.startPlay(url: nginx.url("short"), sink: nil)
        let ffmpeg = try Self.push(nginx.url("short"), seconds: 2)
        defer { ffmpeg.stop() }
        #expect(eventually(10) { !guest.isPlaying })
        #expect(events.value.last == .closed(.ok), "\(Self.names(events))")
        #expect(guest.playEnd?.reason == .streamEnded && guest.playEnd?.error == nil)
        #expect(guest.stats.frames > 20)
    }

    @Test("an audio-only stream is live too: status once a second (bytes, no frames) from the first audio")
    func audioOnlyStatus() throws {
        let nginx = try Peers.NginxRTMP()
        defer { nginx.stop() }
        let ffmpeg = try Peers.Background("/usr/bin/ffmpeg", [
            "-nostdin", "-v", "error", "-re", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000", "-t", "10",
            "-c:a", "aac", "-f", "flv", nginx.url("radio"),
        ])
        defer { ffmpeg.stop() }
        let guest = Guest()
        let statuses = Locked<[GuestStatus]>([])
        guest.onEvent = { event in if case .status(let status) = event { statuses.update { $0.append(status) } } }
        try guest.startPlay(url: nginx.url("radio"), sink: nil)
        defer { guest.stopPlay() }
        #expect(eventually(6) { statuses.value.count >= 2 })
        #expect(statuses.value.allSatisfy { $0.fps == 0 } && statuses.value.last.map { $0.bytesPerSecond > 1000 } == true,
                "\(statuses.value)")
        #expect(guest.stats.audioOnly && guest.stats.frames == 0)
    }

    @Test("a kit let go while it plays stops its play")
    func releasedKitStops() throws {
        let nginx = try Peers.NginxRTMP()
        defer { nginx.stop() }
        let ffmpeg = try Self.push(nginx.url("gone"))
        defer { ffmpeg.stop() }
        var guest: Guest? = Guest()
        try guest?.startPlay(url: nginx.url("gone"), sink: nil)
        let pipeline = try #require(guest?.playingPipeline)
        #expect(eventually(8) { pipeline.stats.frames > 5 })
        guest = nil
        #expect(eventually(5) { pipeline.endReason == .stopped })
    }

    @Test("PlayOptions: the frame limit ends the play (.frameLimit) and the y4m, wav and recording it asked for are written; a snapshot path without .png is refused at startPlay")
    func playOptions() throws {
        let nginx = try Peers.NginxRTMP()
        defer { nginx.stop() }
        let ffmpeg = try Self.push(nginx.url("out"))
        defer { ffmpeg.stop() }
        let dir = try Peers.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let guest = Guest()
        var bad = Guest.PlayOptions()
        bad.snapshotPath = dir.appendingPathComponent("shot.jpg").path
        #expect(throws: LiveError.self) { try guest.startPlay(url: nginx.url("out"), sink: nil, play: bad) }
        #expect(!guest.isPlaying)
        // An output that fails to open when the play starts: refused, and no later play is.
        var unopenable = Guest.PlayOptions()
        unopenable.y4mPath = dir.appendingPathComponent("missing/out.y4m").path
        #expect(throws: (any Error).self) { try guest.startPlay(url: nginx.url("out"), sink: nil, play: unopenable) }
        #expect(!guest.isPlaying)

        var play = Guest.PlayOptions()
        play.frameLimit = 45
        play.y4mPath = dir.appendingPathComponent("out.y4m").path
        play.wavPath = dir.appendingPathComponent("out.wav").path
        play.recordPath = dir.appendingPathComponent("out.flv").path
        play.snapshotPath = dir.appendingPathComponent("last.png").path
        let closed = Locked<LiveCode?>(nil)
        guest.onEvent = { event in if case .closed(let code) = event { closed.update { $0 = code } } }
        try guest.startPlay(url: nginx.url("out"), sink: nil, play: play)
        #expect(eventually(10) { closed.value != nil })
        #expect(closed.value == .ok)
        #expect(guest.playEnd?.reason == .frameLimit)
        let stats = guest.stats
        #expect(stats.frames == 45 && stats.y4mFrames == 45 && stats.wavBytes > 0 && stats.recordedPackets > 0)
        #expect(stats.snapshotWritten)
        let y4m = try Peers.probe(play.y4mPath!)
        #expect(y4m.width == 320 && y4m.height == 240 && y4m.frames == 45)
        let recorded = try Peers.probe(play.recordPath!)
        #expect(recorded.codec == "h264" && recorded.frames > 0)
        #expect(FileManager.default.fileExists(atPath: play.snapshotPath!))
    }

    @Test("Options: timeout — a name nobody publishes ends in closed(102) with playEnd's error; audioLevelShowTimeMilliseconds nil — no level events")
    func optionsTimeout() throws {
        let nginx = try Peers.NginxRTMP()
        defer { nginx.stop() }
        var options = Guest.Options()
        options.timeout = .seconds(1)
        options.audioLevelShowTimeMilliseconds = nil
        let guest = Guest(options: options)
        let events = Locked<[GuestEvent]>([])
        guest.onEvent = { event in events.update { $0.append(event) } }
        try guest.startPlay(url: nginx.url("nobody"), sink: nil)
        #expect(eventually(5) { !guest.isPlaying })
        #expect(events.value.last == .closed(.liveError))
        let end = try #require(guest.playEnd)
        #expect(end.reason == .failed)
        #expect("\(end.error.map { "\($0)" } ?? "")".contains("no video or audio within 1 s"))

        let ffmpeg = try Self.push(nginx.url("quiet"), seconds: 4)
        defer { ffmpeg.stop() }
        events.update { $0.removeAll() }
        var play = Guest.PlayOptions()
        play.duration = 2
        try guest.startPlay(url: nginx.url("quiet"), sink: nil, play: play)
        #expect(eventually(6) { !guest.isPlaying })
        #expect(guest.playEnd?.reason == .duration && guest.stats.audioFrames > 0)
        #expect(!Self.names(events).contains("hosterAudioActive"), "\(Self.names(events))")
    }

    @Test("a token provider that answers late does not hold startPlay; one that fails ends the play with its code (202), never playing without a token")
    func tokenProviderDoesNotBlock() throws {
        let nginx = try Peers.NginxRTMP()
        defer { nginx.stop() }
        let ffmpeg = try Self.push(nginx.url("tok"))
        defer { ffmpeg.stop() }
        var options = Guest.Options()
        options.tokenProvider = {
            try await Task.sleep(for: .seconds(1))
            return IssuedToken(token: "t", uid: "viewer", expiresAt: Int64(Date().timeIntervalSince1970) + 60)
        }
        let guest = Guest(options: options)
        let events = Locked<[GuestEvent]>([])
        guest.onEvent = { event in events.update { $0.append(event) } }
        let started = Date()
        try guest.startPlay(url: nginx.url("tok"), sink: nil)
        #expect(Date().timeIntervalSince(started) < 0.5)
        // nginx-rtmp takes any query: the play goes on once the token came.
        #expect(eventually(8) { guest.stats.frames > 0 })
        guest.stopPlay()

        var failing = Guest.Options()
        failing.tokenProvider = { throw LiveError(.authFailed, "no token for you") }
        let refused = Guest(options: failing)
        let closed = Locked<LiveCode?>(nil)
        refused.onEvent = { event in if case .closed(let code) = event { closed.update { $0 = code } } }
        try refused.startPlay(url: nginx.url("tok"), sink: nil)
        #expect(eventually(5) { closed.value != nil })
        #expect(closed.value == .authFailed)
        #expect(refused.playEnd?.reason == .failed)
        // It never played without a token (nginx-rtmp would have served it).
        #expect(refused.stats.frames == 0 && refused.stats.audioFrames == 0)
    }

    @Test("setRenderMode at run time: a 320x240 stream into a 240x240 sink fills it (aspect-fill, the default), then leaves bars (aspect-fit)")
    func renderMode() throws {
        let nginx = try Peers.NginxRTMP()
        defer { nginx.stop() }
        let ffmpeg = try Self.push(nginx.url("fit"))
        defer { ffmpeg.stop() }
        let guest = Guest()
        #expect(guest.renderMode == .aspectFill)
        let sink = RecordingSink(size: (240, 240))
        try guest.startPlay(url: nginx.url("fit"), sink: sink)
        defer { guest.stopPlay() }
        #expect(eventually(8) { sink.frames > 5 })
        let filled = try #require(sink.frame)
        #expect(filled.width == 240 && filled.height == 240)
        // testsrc2's top rows are bright: no bar at the top.
        #expect(Self.meanLuma(filled, rows: 0..<10) > 40)
        guest.setRenderMode(.aspectFit)
        #expect(guest.renderMode == .aspectFit)
        let seen = sink.frames
        #expect(eventually(5) { sink.frames > seen + 5 })
        let fitted = try #require(sink.frame)
        // 320x240 fitted into 240x240: 240x180, a 30-row black bar above and below.
        #expect(Self.meanLuma(fitted, rows: 0..<25) < 20)
        #expect(Self.meanLuma(fitted, rows: 215..<240) < 20)
        #expect(Self.meanLuma(fitted, rows: 100..<140) > 40)
    }

    private static func meanLuma(_ frame: VideoFrame, rows: Range<Int>) -> Double {
        var sum = 0
        for row in rows {
            for column in 0..<frame.width { sum += Int(frame.sample(plane: 0, x: column, y: row)) }
        }
        return Double(sum) / Double(max(1, rows.count * frame.width))
    }

    /// Two 2 s segments of testsrc2, 320x240 then 480x270, as one ffmpeg input (as when
    /// a hoster's mix changes its resolution): the `concat:` URL of both.
    static func twoSizes(in dir: URL) throws -> String {
        var paths: [String] = []
        for (name, size) in [("a", "320x240"), ("b", "480x270")] {
            let path = dir.appendingPathComponent("\(name).ts").path
            let made = try Peers.run("/usr/bin/ffmpeg", [
                "-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=\(size):rate=30", "-t", "2",
                "-c:v", "libx264", "-preset", "ultrafast", "-g", "30", "-bsf:v", "h264_mp4toannexb", "-f", "mpegts", path,
            ])
            #expect(made.status == 0, "\(made.stderr)")
            paths.append(path)
        }
        return "concat:" + paths.joined(separator: "|")
    }

    @Test("a stream whose picture size changes mid-stream: firstFrame with the first size, then sizeChanged with the second, once")
    func sizeChanged() throws {
        let dir = try Peers.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let segments = try Self.twoSizes(in: dir)
        let nginx = try Peers.NginxRTMP()
        defer { nginx.stop() }
        let guest = Guest()
        let events = Locked<[GuestEvent]>([])
        guest.onEvent = { event in events.update { $0.append(event) } }
        try guest.startPlay(url: nginx.url("sizes"), sink: nil)
        defer { guest.stopPlay() }
        let ffmpeg = try Peers.Background("/usr/bin/ffmpeg", [
            "-nostdin", "-v", "error", "-re", "-i", segments, "-c", "copy", "-f", "flv", nginx.url("sizes"),
        ])
        defer { ffmpeg.stop() }
        #expect(eventually(10) { events.value.contains { if case .sizeChanged = $0 { true } else { false } } })
        Thread.sleep(forTimeInterval: 0.5)
        let sizes = events.value.filter { ["firstFrame", "sizeChanged"].contains($0.name) }
        #expect(sizes == [.firstFrame(width: 320, height: 240), .sizeChanged(width: 480, height: 270)], "\(sizes)")
        #expect(guest.stats.width == 480 && guest.stats.height == 270)
    }

    @Test("a stall: buffering(0), then percents rising as the buffer refills to its target, then 100 once, and the picture moves again")
    func bufferingProgress() throws {
        let nginx = try Peers.NginxRTMP()
        defer { nginx.stop() }
        let ffmpeg = try Self.push(nginx.url("stall"))
        defer { ffmpeg.stop() }
        var options = Guest.Options()
        options.bufferTargetMilliseconds = 300
        let guest = Guest(options: options)
        let events = Locked<[GuestEvent]>([])
        guest.onEvent = { event in events.update { $0.append(event) } }
        try guest.startPlay(url: nginx.url("stall"), sink: nil)
        defer { guest.stopPlay() }
        #expect(eventually(8) { guest.stats.frames > 30 })
        // The publisher stops for a second and then catches up (ffmpeg -re).
        kill(ffmpeg.pid, SIGSTOP)
        Thread.sleep(forTimeInterval: 1.2)
        kill(ffmpeg.pid, SIGCONT)
        #expect(eventually(5) { events.value.contains(.buffering(percent: 100)) })
        let frames = guest.stats.frames
        #expect(eventually(3) { guest.stats.frames > frames + 10 })
        let percents = events.value.compactMap { event -> Int? in if case .buffering(let percent) = event { percent } else { nil } }
        print("buffering after a 1.2 s stall: \(percents)")
        #expect(percents.first == 0 && percents.last == 100, "\(percents)")
        #expect(Set(percents).count >= 4, "several distinct values: \(percents)")
        #expect(zip(percents, percents.dropFirst()).allSatisfy { $0 < $1 }, "rising: \(percents)")
    }

    @Test("Options reach the play: timeout, reconnect, tokens, the buffer target (0: no latency control, so no refill)")
    func optionsReachThePlay() throws {
        var options = Guest.Options()
        options.timeout = .seconds(3)
        options.reconnect.maxTries = 2
        options.bufferTargetMilliseconds = 0
        options.tokenProvider = IssuedToken.fixedProvider("t")
        let url = try RTMPURL(parsing: "rtmp://127.0.0.1/live/x")
        let configuration = Guest(options: options).playConfiguration(url: url)
        #expect(configuration.timeout == .seconds(3) && configuration.reconnect.maxTries == 2)
        #expect(configuration.bufferTargetMilliseconds == nil && configuration.tokenProvider != nil)
        #expect(Guest().playConfiguration(url: url).bufferTargetMilliseconds == 150)
    }

    @Test("the refill's percents: each held picture's share of the target, capped at 100 (pure)")
    func refillPercents() {
        let control = GuestLatencyControl(targetMilliseconds: 150)
        #expect(control.refillPercents([]) == [])
        #expect(control.refillPercents([1000, 1033, 1066, 1100, 1133, 1166, 1200]) == [0, 22, 44, 66, 88, 100, 100])
        #expect(control.refillPercents([5000]) == [0])
        // A dts going back (a new publisher) counts as nothing filled, not a negative share.
        #expect(control.refillPercents([5000, 4000]) == [0, 0])
    }
}
