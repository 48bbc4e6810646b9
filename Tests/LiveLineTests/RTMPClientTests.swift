import Foundation
import Glibc
import LiveCore
import LiveNet
import LiveRTMP
import Testing
@testable import LiveLine

@Suite("RTMP publisher and player against closed ports and nginx-rtmp", .serialized)
struct RTMPClientTests {
    @Test("a publisher to a port where nothing listens fails fast with connection refused")
    func publisherRefused() throws {
        let port = try Peers.freePort()
        let loop = try EventLoop(name: "test-publisher")
        loop.start()
        defer { loop.shutdown() }
        let url = try RTMPURL(parsing: "rtmp://127.0.0.1:\(port)/live/x")
        let publisher = RTMPPublisher(url: url, loop: loop)
        let started = Clock.monotonicMicros()
        publisher.start()
        let error = try #require(throws: RTMPClientError.self) { try publisher.waitUntilPublished() }
        #expect(Clock.monotonicMicros() - started < 1_000_000)
        guard case .connectFailed(let failedURL, let netError) = error else {
            Issue.record("expected connectFailed, got \(error)")
            return
        }
        #expect(failedURL == url.description)
        #expect(netError.errno == ECONNREFUSED)
        #expect("\(error)".contains("rtmp://127.0.0.1:\(port)/live/x"))
        #expect(publisher.stats.state == .failed)
    }

    @Test("RTMPPublishSink.open throws a LiveError naming the URL when nobody listens")
    func sinkRefused() throws {
        let port = try Peers.freePort()
        let sink = RTMPPublishSink(url: try RTMPURL(parsing: "rtmp://127.0.0.1:\(port)/live/y"))
        let started = Clock.monotonicMicros()
        let error = try #require(throws: LiveError.self) {
            try sink.open(stream: VideoStreamInfo(width: 64, height: 64, fps: 30, bitrate: 100_000, extradata: []))
        }
        #expect(Clock.monotonicMicros() - started < 1_000_000)
        #expect(error.code == .networkError)
        #expect(error.detail.contains("127.0.0.1:\(port)/live/y"))
        #expect(error.detail.contains("refused"))
    }

    @Test("a player to a closed port reports connection refused")
    func playerRefused() throws {
        let port = try Peers.freePort()
        let loop = try EventLoop(name: "test-player")
        loop.start()
        defer { loop.shutdown() }
        let player = RTMPPlayer(url: try RTMPURL(parsing: "rtmp://127.0.0.1:\(port)/live/z"), loop: loop)
        player.start()
        #expect(player.waitUntilClosed(timeout: .seconds(2)))
        let error = try #require(player.error)
        #expect(error.url.contains("\(port)"))
        guard case .connectFailed(_, let netError) = error else {
            Issue.record("expected connectFailed, got \(error)")
            return
        }
        #expect(netError.errno == ECONNREFUSED)
    }

    @Test("a publisher whose server stops reading stays bounded: it drops frames to the next keyframe")
    func congestedPublisherDrops() throws {
        let nginx = try Peers.NginxRTMP()
        defer { nginx.stop() }
        let loop = try EventLoop(name: "test-congestion")
        loop.start()
        defer { loop.shutdown() }
        var configuration = RTMPPublisher.Configuration()
        configuration.maxQueuedBytes = 1 << 20
        let publisher = RTMPPublisher(url: try RTMPURL(parsing: nginx.url("congested")), loop: loop,
                                      configuration: configuration)
        publisher.start()
        try publisher.waitUntilPublished()
        try publisher.send(sequenceHeader: [0, 0, 0, 1, 0x67, 0x42, 0xC0, 0x1E, 0xDA, 0, 0, 0, 1, 0x68, 0xCE, 0x3C, 0x80])

        // Freeze every nginx process: the socket fills, then the publisher's queue.
        let pids = try nginx.processes()
        #expect(!pids.isEmpty)
        for pid in pids { kill(pid, SIGSTOP) }
        defer { for pid in pids { kill(pid, SIGCONT) } }

        let slice = [UInt8](repeating: 0x5A, count: 100_000)
        for index in 0..<300 {
            let key = index % 30 == 0
            let data = [0, 0, 0, 1, key ? 0x65 : 0x41] + slice
            let time = MediaTime(milliseconds: Int64(index) * 33)
            publisher.send(EncodedVideoPacket(data: data, pts: time, dts: time, isKeyframe: key, captureTimeMicros: 0))
        }
        // Let the loop take everything in.
        var stats = publisher.stats
        for _ in 0..<100 {
            usleep(50_000)
            stats = publisher.stats
            if stats.droppedFrames + stats.sentFrames + stats.queuedFrames >= 300 { break }
        }
        #expect(stats.droppedFrames > 0, "\(stats)")
        #expect(stats.sentFrames + stats.droppedFrames + stats.queuedFrames == 300)
        // The cap plus the socket queue's watermark and one message in flight.
        #expect(stats.queuedBytes <= configuration.maxQueuedBytes + configuration.connectionOptions.highWatermark + 200_000,
                "\(stats)")
        #expect(stats.state == .publishing)
        publisher.abort()
        #expect(publisher.waitUntilClosed(timeout: .seconds(2)))
    }
}
