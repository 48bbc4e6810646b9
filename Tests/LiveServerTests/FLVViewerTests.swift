import Foundation
import LiveAuth
import LiveNet
import LiveTestSupport
import Testing
@testable import LiveRTMP
@testable import LiveServer

/// A publisher of synthetic media (metadata, AVC and AAC sequence headers, then frames).
private func startSyntheticPublisher(_ port: UInt16, _ path: String) throws -> TestRTMPClient {
    let publisher = try TestRTMPClient(port: port, path: path, mode: .publish)
    let started = try publisher.start()
    guard case .publishing = started else {
        throw TestSocket.Failure(description: "publish of \(path) did not start: \(String(describing: started))")
    }
    try publisher.sendMetadata(RTMPStreamMetadata(width: 1280, height: 720, framerate: 30, videoDataRateKbps: 600))
    try publisher.sendVideo(SyntheticVideo.sequenceHeader, timestamp: 0)
    try publisher.sendAudio(SyntheticAAC.sequenceHeader, timestamp: 0)
    return publisher
}

/// AAC payloads as FLV carries them: 48 kHz stereo LC.
private enum SyntheticAAC {
    static let sequenceHeader: [UInt8] = [0xAF, 0x00, 0x11, 0x90]
    static func frame(_ index: Int) -> [UInt8] { [0xAF, 0x01] + [UInt8](repeating: UInt8(index & 0xFF), count: 200) }
}

/// Frames `range` with audio between them; a keyframe every `gop`.
private func publishFrames(_ publisher: TestRTMPClient, _ range: Range<Int>, gop: Int = 15, size: Int = 2000) throws {
    for index in range {
        try publisher.sendVideo(SyntheticVideo.frame(index: index, keyframe: index % gop == 0, size: size), timestamp: UInt32(index * 33))
        try publisher.sendAudio(SyntheticAAC.frame(index), timestamp: UInt32(index * 33 + 10))
    }
}

@Suite("HTTP-FLV and the WebSocket FLV feed with LiveRTMP test publishers", .serialized)
struct FLVViewerTests {
    @Test("a stream nobody publishes is 404 (even while an RTMP player waits for it); a published one is 200 video/x-flv, chunked; HEAD gets the head alone")
    func notFoundThenFound() throws {
        let relay = try startRelay()
        defer { relay.shutdown() }
        #expect(try httpGet(port: relay.httpPort, "/live/nobody.flv").status == 404)
        let waiting = try TestRTMPClient(port: relay.rtmpPort, path: "live/later", mode: .play)
        #expect(try waiting.start().map { if case .playing = $0 { true } else { false } } == true)
        #expect(try httpGet(port: relay.httpPort, "/live/later.flv").status == 404)
        let socket = try TestWebSocketProbe(port: relay.httpPort, path: "/ws/live/later")
        #expect(socket.status == 404)

        let publisher = try startSyntheticPublisher(relay.rtmpPort, "live/later")
        try publishFrames(publisher, 0..<3)
        let viewer = try TestFLVViewer(port: relay.httpPort, path: "/live/later.flv")
        #expect(viewer.readHead())
        #expect(viewer.status == 200)
        #expect(viewer.header("Content-Type") == "video/x-flv")
        #expect(viewer.header("Transfer-Encoding") == "chunked")
        #expect(viewer.header("Content-Length") == nil)
        // The routes around it still answer.
        #expect(try httpGet(port: relay.httpPort, "/healthz").status == 200)
        #expect(try httpGet(port: relay.httpPort, "/live/later.flvx").status == 404)

        let headOnly = try TestSocket(port: relay.httpPort)
        headOnly.send(Array("HEAD /live/later.flv HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8))
        var answer: [UInt8] = []
        while case .bytes(let more) = headOnly.receive(timeout: 3) { answer += more }
        let text = String(decoding: answer, as: UTF8.self)
        #expect(text.hasPrefix("HTTP/1.1 200"))
        #expect(text.hasSuffix("\r\n\r\n"), "nothing after the head: \(text)")
    }

    @Test("co-host and call streams go through the relay's play rule, as RTMP plays do: 403 with its reason, counted")
    func playRule() throws {
        let relay = try startRelay()
        defer { relay.shutdown() }
        let refused = try httpGet(port: relay.httpPort, "/live/line-x.hear.flv")
        #expect(refused.status == 403)
        #expect(refused.body.contains("not the hear stream of a co-host"))
        #expect(try TestWebSocketProbe(port: relay.httpPort, path: "/ws/live/line-x.hear").status == 403)
        #expect(relay.rtmp.counters.refusedPlays.load(ordering: .relaxed) == 2)
    }

    @Test("HTTP-FLV: the FLV header, onMetaData, the sequence headers, the GOP from its keyframe, then live tags; unpublishing ends the chunked body")
    func httpBody() throws {
        let relay = try startRelay()
        defer { relay.shutdown() }
        let publisher = try startSyntheticPublisher(relay.rtmpPort, "live/cam")
        try publishFrames(publisher, 0..<20)
        #expect(try eventually(3) { try apiStreams(relay).first?.frames == 20 })
        let viewer = try TestFLVViewer(port: relay.httpPort, path: "/live/cam.flv")
        #expect(viewer.readHead())
        viewer.read(timeout: 3) { ((try? viewer.tags()) ?? []).contains { SyntheticVideo.index(of: $0.payload) == 19 } }
        try publishFrames(publisher, 20..<30)
        viewer.read(timeout: 3) { ((try? viewer.tags()) ?? []).contains { SyntheticVideo.index(of: $0.payload) == 29 } }

        let (flags, tags) = try TestFLV.parse(viewer.body)
        #expect(flags == 0x05, "audio and video announced")
        #expect(tags.first?.isScript == true)
        #expect(tags.dropFirst().prefix(2).allSatisfy { $0.isSequenceHeader })
        let videoIndexes = tags.filter { $0.isVideo && !$0.isSequenceHeader }.compactMap { SyntheticVideo.index(of: $0.payload) }
        // The GOP cache starts at the last keyframe (15), then every frame once, in order.
        #expect(videoIndexes == Array(15..<30))
        #expect(tags.first { $0.isVideo && !$0.isSequenceHeader }?.isKeyframe == true)
        #expect(tags.contains { $0.isAudio && !$0.isSequenceHeader })

        let listed = try #require(try apiStreams(relay).first)
        #expect(listed.players == 1)
        #expect(listed.playerDetails.map(\.transport) == [.httpFLV])
        let metrics = try httpGet(port: relay.httpPort, "/metrics").body
        #expect(metrics.contains("liveline_flv_players{transport=\"http-flv\"} 1"))
        #expect(metrics.contains("liveline_players 1"))

        try publisher.core.stop()
        publisher.socket.send(publisher.core.takeOutput())
        viewer.read(timeout: 3)
        #expect(viewer.sawLastChunk)
        #expect(try eventually(3) { try apiStreams(relay).first.map { $0.players == 0 } ?? true })
    }

    @Test("HTTP/1.0 gets the FLV until the connection closes, without chunks")
    func untilClose() throws {
        let relay = try startRelay()
        defer { relay.shutdown() }
        let publisher = try startSyntheticPublisher(relay.rtmpPort, "live/old")
        try publishFrames(publisher, 0..<5)
        let viewer = try TestFLVViewer(port: relay.httpPort, path: "/live/old.flv", version: "HTTP/1.0")
        #expect(viewer.readHead())
        #expect(viewer.header("Transfer-Encoding") == nil)
        #expect(viewer.header("Content-Length") == nil)
        viewer.read(timeout: 3) { ((try? viewer.tags()) ?? []).contains { SyntheticVideo.index(of: $0.payload) == 4 } }
        #expect(try viewer.tags().filter(\.isVideo).count == 6)
        try publisher.core.stop()
        publisher.socket.send(publisher.core.takeOutput())
        viewer.read(timeout: 3)
        #expect(viewer.ended)
    }

    @Test("the WebSocket feed: the FLV header as the first binary message, then one tag per message (onMetaData, sequence headers, a keyframe first); 1000 when the stream ends")
    func webSocketFeed() throws {
        let relay = try startRelay()
        defer { relay.shutdown() }
        let clients = try EventLoopGroup(count: 1, name: "ws-flv")
        defer { clients.shutdown() }
        let publisher = try startSyntheticPublisher(relay.rtmpPort, "live/ws")
        try publishFrames(publisher, 0..<10)
        #expect(try eventually(3) { try apiStreams(relay).first?.frames == 10 })
        let viewer = TestWebSocketViewer(url: "ws://127.0.0.1:\(relay.httpPort)/ws/live/ws", on: clients.loops[0])
        #expect(eventually(3) { viewer.messages.value.count >= 4 + 10 * 2 })
        try publishFrames(publisher, 10..<12)
        #expect(eventually(3) { viewer.messages.value.count >= 4 + 12 * 2 })

        let messages = viewer.messages.value
        let header = try #require(messages.first)
        #expect(header == FLVTagWriter.header(hasAudio: true, hasVideo: true))
        var tags: [TestFLVTag] = []
        for message in messages.dropFirst() {
            // Each message is exactly one tag with its PreviousTagSize.
            let parsed = try TestFLV.parse(header + message).tags
            #expect(parsed.count == 1)
            #expect(parsed.first.map { 11 + $0.payload.count + 4 } == message.count)
            tags += parsed
        }
        #expect(tags.first?.isScript == true)
        #expect(tags.first.map { String(decoding: $0.payload.prefix(13), as: UTF8.self).contains("onMetaData") } == true)
        #expect(tags[1].isVideo && tags[1].isSequenceHeader)
        #expect(tags[2].isAudio && tags[2].isSequenceHeader)
        #expect(tags[3].isKeyframe)
        #expect(tags.filter { $0.isVideo && !$0.isSequenceHeader }.compactMap { SyntheticVideo.index(of: $0.payload) } == Array(0..<12))
        #expect(try apiStreams(relay).first?.playerDetails.map(\.transport) == [.webSocketFLV])

        try publisher.core.stop()
        publisher.socket.send(publisher.core.takeOutput())
        #expect(eventually(3) { viewer.closeCode.value == 1000 })
    }

    @Test("a viewer that stops reading holds at most the high watermark; it skips to keyframes while an RTMP player keeps every frame")
    func slowReaderBounded() throws {
        let high = 256 << 10
        let relay = try startRelay {
            $0.playerHighWatermark = high
            $0.playerLowWatermark = 64 << 10
        }
        defer { relay.shutdown() }
        let frameSize = 60_000
        let frameCount = 120  // 4 s at 30 fps, 14 Mbit/s
        let publisher = try startSyntheticPublisher(relay.rtmpPort, "live/fast")
        let stalled = try TestFLVViewer(port: relay.httpPort, path: "/live/fast.flv", receiveBufferSize: 4096)
        #expect(stalled.readHead())
        let player = try TestRTMPClient(port: relay.rtmpPort, path: "live/fast", mode: .play)
        #expect(try player.start().map { if case .playing = $0 { true } else { false } } == true)

        let sent = Locked(false)
        let sender = Thread {
            defer { sent.update { $0 = true } }
            let start = Date()
            for index in 0..<frameCount {
                let due = start.addingTimeInterval(Double(index) / 30)
                if due > Date() { usleep(UInt32(due.timeIntervalSinceNow * 1_000_000)) }
                try? publisher.sendVideo(SyntheticVideo.frame(index: index, keyframe: index % 30 == 0, size: frameSize),
                                         timestamp: UInt32(index * 33))
                try? publisher.drain()
            }
        }
        sender.start()
        try player.pump(timeout: 10) { _ in player.videoMessages.count >= frameCount + 1 }
        #expect(player.videoMessages.count - 1 == frameCount)

        let stream = try #require(try apiStreams(relay).first)
        let slow = try #require(stream.playerDetails.first { $0.transport == .httpFLV })
        print("stalled HTTP-FLV viewer: peak queue \(slow.peakQueuedBytes) B (high watermark \(high) B), dropped \(slow.droppedFrames) frames")
        #expect(slow.droppedFrames > 0)
        #expect(slow.peakQueuedBytes < high + frameSize + 1024)
        #expect(stream.droppedFrames == slow.droppedFrames)

        // What it gets once it reads again is still a valid FLV stream: after every gap
        // the next frame is a keyframe.
        #expect(eventually(3) { sent.value })
        try publisher.core.stop()
        publisher.socket.send(publisher.core.takeOutput())
        stalled.read(timeout: 8)
        #expect(stalled.sawLastChunk)
        let frames = try stalled.tags().filter { $0.isVideo && !$0.isSequenceHeader }
        var previous: Int?
        for frame in frames {
            let index = try #require(SyntheticVideo.index(of: frame.payload))
            if let previous, index != previous + 1 { #expect(frame.isKeyframe, "frame \(index) after \(previous)") }
            previous = index
        }
        #expect(frames.count < frameCount)
    }

    @Test("a viewer that takes no byte for idleTimeout while some wait for it is closed and counted as a timeout; a reading one stays")
    func stalledViewerClosed() throws {
        let relay = try startRelay {
            $0.idleTimeout = .milliseconds(800)
            $0.pingInterval = .milliseconds(200)
            $0.playerHighWatermark = 128 << 10
            $0.playerLowWatermark = 32 << 10
        }
        defer { relay.shutdown() }
        let publisher = try startSyntheticPublisher(relay.rtmpPort, "live/stall")
        let stalled = try TestFLVViewer(port: relay.httpPort, path: "/live/stall.flv", receiveBufferSize: 4096)
        #expect(stalled.readHead())
        let reader = try TestFLVViewer(port: relay.httpPort, path: "/live/stall.flv")
        #expect(reader.readHead())
        #expect(try eventually(2) { try apiStreams(relay).first?.players == 2 })
        // 50 KB frames for 2.5 s: far more than the stalled viewer's socket and queue hold.
        for index in 0..<75 {
            try publisher.sendVideo(SyntheticVideo.frame(index: index, keyframe: index % 15 == 0, size: 50_000), timestamp: UInt32(index * 33))
            try publisher.drain()
            reader.read(timeout: 0.033)
        }
        #expect(try eventually(3) { try apiStreams(relay).first?.players == 1 })
        let left = try #require(try apiStreams(relay).first?.playerDetails.first)
        // The stalled one went (the publisher, silent from now, may time out too later).
        #expect(relay.rtmp.counters.timeouts.load(ordering: .relaxed) >= 1)
        #expect(left.bytesOut > 75 * 50_000)
        #expect(stalled.socket.closesWithin(3))
        #expect(!reader.ended)
    }

    @Test("a viewer whose publisher dropped (no unpublish) waits idleTimeout for it, then its body ends")
    func publisherGone() throws {
        let relay = try startRelay {
            $0.idleTimeout = .milliseconds(800)
            $0.pingInterval = .milliseconds(200)
        }
        defer { relay.shutdown() }
        let publisher = try startSyntheticPublisher(relay.rtmpPort, "live/drop")
        try publishFrames(publisher, 0..<3)
        let viewer = try TestFLVViewer(port: relay.httpPort, path: "/live/drop.flv")
        #expect(viewer.readHead())
        viewer.read(timeout: 2) { ((try? viewer.tags()) ?? []).contains { SyntheticVideo.index(of: $0.payload) == 2 } }
        publisher.socket.close()
        let dropped = Date()
        viewer.read(timeout: 5)
        let waited = Date().timeIntervalSince(dropped)
        #expect(viewer.sawLastChunk)
        #expect(waited >= 0.7 && waited < 3, "ended after \(waited) s")
    }
}

/// A WebSocket upgrade request sent by hand: the status the server answers it with.
struct TestWebSocketProbe {
    let status: Int
    let answer: String
    /// Open until the probe is dropped (a 101 keeps a viewer playing meanwhile).
    let socket: TestSocket

    init(port: UInt16, path: String, headers: [String] = []) throws {
        let socket = try TestSocket(port: port)
        self.socket = socket
        let fields = ["Host: 127.0.0.1", "Upgrade: websocket", "Connection: Upgrade", "Sec-WebSocket-Version: 13",
                      "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ=="] + headers
        socket.send(Array("GET \(path) HTTP/1.1\r\n\(fields.map { $0 + "\r\n" }.joined())\r\n".utf8))
        var bytes: [UInt8] = []
        while !bytes.contains(0x0A), case .bytes(let more) = socket.receive(timeout: 3) { bytes += more }
        while bytes.firstRange(of: [0x0D, 0x0A, 0x0D, 0x0A]) == nil, case .bytes(let more) = socket.receive(timeout: 1) { bytes += more }
        answer = String(decoding: bytes, as: UTF8.self)
        status = Int(answer.split(separator: " ").dropFirst().first ?? "") ?? 0
    }
}

@Suite("HTTP-FLV and the WebSocket FLV feed with auth on: play tokens", .serialized)
struct FLVAuthTests {
    @Test("without a token, with another stream's or an api token: 401 (counted as refused plays); a play token as ?token= or Bearer: 200, and 101 on the WebSocket")
    func playTokens() throws {
        let relay = try startAuthRelay()
        defer { relay.shutdown() }
        let publisher = try startSyntheticPublisher(relay.rtmpPort, "live/cam?token=\(TestTokens.publish("live/cam"))")
        try publishFrames(publisher, 0..<3)

        let refused = try httpGet(port: relay.httpPort, "/live/cam.flv")
        #expect(refused.status == 401)
        #expect(refused.body.contains("\"code\""))
        #expect(try httpGet(port: relay.httpPort, "/live/cam.flv?token=\(TestTokens.play("live/other"))").status == 401)
        #expect(try httpGet(port: relay.httpPort, "/live/cam.flv?token=\(TestTokens.api("*"))").status == 401)
        #expect(try TestWebSocketProbe(port: relay.httpPort, path: "/ws/live/cam").status == 401)
        // Without a token nobody learns which streams exist: 401 before 404.
        #expect(try httpGet(port: relay.httpPort, "/live/nobody.flv").status == 401)
        #expect(try httpGet(port: relay.httpPort, "/live/nobody.flv?token=\(TestTokens.play("live/*"))").status == 404)
        #expect(relay.rtmp.counters.refusedPlays.load(ordering: .relaxed) == 5)

        let byQuery = try TestFLVViewer(port: relay.httpPort, path: "/live/cam.flv?token=\(TestTokens.play("live/cam"))")
        #expect(byQuery.readHead())
        #expect(byQuery.status == 200)
        let byHeader = try TestFLVViewer(port: relay.httpPort, path: "/live/cam.flv",
                                         headers: ["Authorization: Bearer \(TestTokens.play("live/cam"))"])
        #expect(byHeader.readHead())
        #expect(byHeader.status == 200)
        let socket = try TestWebSocketProbe(port: relay.httpPort, path: "/ws/live/cam?token=\(TestTokens.play("live/cam"))")
        #expect(socket.status == 101)
        #expect(try eventually(3) { try authStreams(relay).first?.players == 3 })
        // The API itself still wants an api token.
        #expect(try httpGet(port: relay.httpPort, "/api/streams?token=\(TestTokens.play("live/cam"))").status == 401)
    }

    @Test("--on-expiry close ends an HTTP-FLV body and a WebSocket feed whose token expires, at the next tick")
    func expiry() throws {
        let relay = try startRelay {
            $0.auth = TokenVerifier(secret: TestTokens.secret, leewaySeconds: 0)
            $0.onExpiry = .close
            $0.pingInterval = .milliseconds(200)
        }
        defer { relay.shutdown() }
        let clients = try EventLoopGroup(count: 1, name: "flv-expiry")
        defer { clients.shutdown() }
        let publisher = try startSyntheticPublisher(relay.rtmpPort, "live/cam?token=\(TestTokens.publish("live/cam"))")
        try publishFrames(publisher, 0..<3)
        let token = TestTokens.play("live/cam", ttl: 2)
        let started = Date()
        let viewer = try TestFLVViewer(port: relay.httpPort, path: "/live/cam.flv?token=\(token)")
        let socket = TestWebSocketViewer(url: "ws://127.0.0.1:\(relay.httpPort)/ws/live/cam?token=\(token)", on: clients.loops[0])
        #expect(viewer.readHead())
        #expect(viewer.status == 200)
        viewer.read(timeout: 6)
        #expect(viewer.sawLastChunk)
        #expect(eventually(2) { socket.closeCode.value == 1000 })
        let after = Date().timeIntervalSince(started)
        #expect(after > 1 && after < 4.5, "ended \(after) s after the start of a 2 s token")
    }
}
