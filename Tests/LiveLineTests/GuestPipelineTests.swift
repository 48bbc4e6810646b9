import Foundation
import LiveCodec
import LiveCore
import LiveRTMP
import LiveTestSupport
import Testing
@testable import LiveLine

@Suite("Guest and hoster through nginx-rtmp", .serialized)
struct GuestPipelineTests {
    @Test("(c) LiveLine hoster → nginx-rtmp → LiveLine guest: right size, SEI latency survives the relay")
    func hosterThroughNginxToGuest() throws {
        let nginx = try Peers.NginxRTMP()
        defer { nginx.stop() }
        let url = try RTMPURL(parsing: nginx.url("hoster"))

        var guestConfiguration = GuestPipeline.Configuration(url: url)
        guestConfiguration.frameLimit = 60
        let guest = try GuestPipeline(configuration: guestConfiguration)
        try guest.start()

        var hosterConfiguration = HosterConfiguration()
        hosterConfiguration.width = 640
        hosterConfiguration.height = 360
        hosterConfiguration.bitrateKbps = 800
        hosterConfiguration.keyframeIntervalSeconds = 1
        let hoster = try HosterPipeline(configuration: hosterConfiguration)
        let sink = RTMPPublishSink(url: url)
        hoster.addSink(sink)
        try hoster.start(frameLimit: 30 * 8)

        let guestEnded = try guest.wait(seconds: 20)
        let publisherStats = sink.stats
        hoster.stop()
        try hoster.wait()

        #expect(guestEnded)
        let stats = guest.stats
        #expect(guest.endReason == .frameLimit)
        #expect(stats.frames >= 60)
        #expect(stats.width == 640 && stats.height == 360)
        #expect(stats.decodeErrors == 0)
        let p50 = try #require(stats.latencyP50Ms, "no capture-time SEI reached the guest")
        let p95 = try #require(stats.latencyP95Ms)
        #expect(p50 > 0 && p50 < 1000, "p50 \(p50) ms")
        #expect(p95 >= p50 && p95 < 1000, "p95 \(p95) ms")
        #expect(stats.latencySamples == stats.frames)
        print("hoster → nginx-rtmp → guest: \(stats.frames) frames, first frame \(stats.firstFrameMs ?? -1) ms, "
              + "latency p50 \(p50) ms p95 \(p95) ms")

        #expect(publisherStats.sentFrames > 0)
        #expect(publisherStats.droppedFrames == 0)
        #expect(publisherStats.bytesSent > 10_000)
        #expect(publisherStats.sendRate > 0)
    }

    @Test("(d) ffmpeg → nginx-rtmp → LiveLine guest: frames, no latency without SEI, PNG, y4m and recording readable")
    func ffmpegThroughNginxToGuest() throws {
        let nginx = try Peers.NginxRTMP()
        defer { nginx.stop() }
        let dir = try Peers.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let ffmpeg = try Peers.testPattern(to: nginx.url("x"))
        defer { ffmpeg.stop() }

        let snapshot = dir.appendingPathComponent("last.png").path
        let y4m = dir.appendingPathComponent("out.y4m").path
        let record = dir.appendingPathComponent("rec.flv").path
        var configuration = GuestPipeline.Configuration(url: try RTMPURL(parsing: nginx.url("x")))
        configuration.frameLimit = 45
        configuration.snapshotPath = snapshot
        configuration.y4mPath = y4m
        configuration.recordPath = record
        let guest = try GuestPipeline(configuration: configuration)
        try guest.start()
        #expect(try guest.wait(seconds: 20))

        let stats = guest.stats
        #expect(stats.frames >= 45)
        #expect(stats.width == 640 && stats.height == 360)
        #expect(stats.firstFrameMs != nil)
        #expect(stats.latencyP50Ms == nil && stats.latencyP95Ms == nil)
        #expect(stats.y4mFrames == stats.frames)

        let image = try ImageFile.read(path: snapshot)
        #expect(image.width == 640 && image.height == 360)

        let raw = try Peers.probe(y4m, format: "yuv4mpegpipe")
        #expect(raw.width == 640 && raw.height == 360)
        #expect(raw.frames == stats.frames)

        let recorded = try Peers.probe(record)
        #expect(recorded.codec == "h264" && recorded.width == 640 && recorded.height == 360)
        #expect(recorded.frames >= 30, "recorded \(recorded.frames) frames")
    }

    @Test("a guest recording to a full disk reports recordingFailed and plays on to its frame limit")
    func recordingToFullDisk() throws {
        let nginx = try Peers.NginxRTMP()
        defer { nginx.stop() }
        let dir = try Peers.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let ffmpeg = try Peers.testPattern(to: nginx.url("full"))
        defer { ffmpeg.stop() }
        // /dev/full: every write fails with ENOSPC, as on a full disk.
        let record = dir.appendingPathComponent("rec.flv").path
        try FileManager.default.createSymbolicLink(atPath: record, withDestinationPath: "/dev/full")
        var configuration = GuestPipeline.Configuration(url: try RTMPURL(parsing: nginx.url("full")))
        configuration.frameLimit = 60
        configuration.recordPath = record
        let guest = try GuestPipeline(configuration: configuration)
        let events = Locked<[GuestEvent]>([])
        guest.onEvent = { event in events.update { $0.append(event) } }
        try guest.start()
        // Before: the failed write ended the guest with an error.
        #expect(try guest.wait(seconds: 20))
        #expect(guest.endReason == .frameLimit)
        #expect(guest.stats.frames >= 60)
        let failure = try #require(guest.stats.recordingError)
        #expect(failure.contains("No space left on device"), "\(failure)")
        #expect(events.value.contains(.recordingFailed(message: failure)))
    }

    @Test("a guest of an unpublished name ends with an error naming the URL, not a hang, and closes with 102 (live error)")
    func unpublishedStream() throws {
        let nginx = try Peers.NginxRTMP()
        defer { nginx.stop() }
        var configuration = GuestPipeline.Configuration(url: try RTMPURL(parsing: nginx.url("nobody")))
        configuration.timeout = .milliseconds(500)
        let guest = try GuestPipeline(configuration: configuration)
        let events = Locked<[GuestEvent]>([])
        guest.onEvent = { event in events.update { $0.append(event) } }
        try guest.start()
        let error = try #require(throws: GuestPipeline.Error.self) { try guest.wait(seconds: 10) }
        #expect("\(error)".contains(nginx.url("nobody")))
        #expect("\(error)".contains("no video"))
        #expect(guest.endReason == .failed)
        // Connected (the server answers the play), then the missing stream, as the anyRTC
        // SDK's onRtmpPlayerClosed reports it. Before: 101, network disconnected.
        #expect(events.value == [.ok, .closed(.liveError)], "\(events.value)")
    }
}
