import Foundation
import Testing
@testable import LiveRTMP
@testable import LiveServer

/// The attacks of issue 11 that reach the relay over RTMP, each on loopback against a
/// relay on free ports.
@Suite("The relay against hostile RTMP clients", .serialized)
struct HostileRTMPClientTests {
    /// A connection that finished the handshake and nothing else.
    func handshaken(_ port: UInt16) throws -> TestSocket {
        let socket = try TestSocket(port: port)
        var handshake = RTMPHandshakeClient()
        socket.send(handshake.start())
        while !handshake.isDone {
            guard case .bytes(let bytes) = socket.receive(timeout: 5) else {
                throw TestSocket.Failure(description: "no handshake answer")
            }
            socket.send(try handshake.feed(bytes).output)
        }
        return socket
    }

    /// Set Chunk Size 65536, then on each chunk stream `count` 64 KiB chunks of a 1 MiB
    /// video message that never finishes.
    func parkedPartials(chunkStreams: Range<Int>, chunks: Int = 1) -> [UInt8] {
        var bytes: [UInt8] = [0x02, 0, 0, 0, 0, 0, 4, 1, 0, 0, 0, 0, 0, 1, 0, 0]
        for index in chunkStreams {
            // A 3-byte basic header: chunk stream 320 + index.
            let csid = 320 + index - 64
            bytes += [0x01, UInt8(csid & 0xFF), UInt8(csid >> 8), 0, 0, 0, 0x10, 0, 0, 9, 1, 0, 0, 0]
            bytes += [UInt8](repeating: 0x27, count: 65536)
            for _ in 1..<chunks { bytes += [0xC1, UInt8(csid & 0xFF), UInt8(csid >> 8)] + [UInt8](repeating: 0x27, count: 65536) }
        }
        return bytes
    }

    func startPublisher(_ port: UInt16, _ path: String, metadata: RTMPStreamMetadata? = nil) throws -> TestRTMPClient {
        let publisher = try TestRTMPClient(port: port, path: path, mode: .publish)
        guard case .publishing = try publisher.start() else {
            throw TestSocket.Failure(description: "publish of \(path) did not start")
        }
        try publisher.sendMetadata(metadata ?? RTMPStreamMetadata(width: 1280, height: 720, framerate: 30, videoDataRateKbps: 600))
        try publisher.sendVideo(SyntheticVideo.sequenceHeader, timestamp: 0)
        return publisher
    }

    @Test("1 MB parked on each of 200 chunk streams closes the connection at its budget; its bytes are given back")
    func parkedChunkStreams() throws {
        let relay = try startRelay()
        defer { relay.shutdown() }
        let attacker = try handshaken(relay.rtmpPort)
        attacker.send(parkedPartials(chunkStreams: 0..<200))
        #expect(attacker.closesWithin(5))
        #expect(eventually(2) { relay.rtmp.counters.protocolErrors.load(ordering: .relaxed) == 1 })
        #expect(eventually(2) { relay.rtmp.unfinishedBudget.usedBytes == 0 })
    }

    @Test("memory parked by 20 connections is given back to the system once they close",
          .disabled(if: addressSanitizerIsOn, "AddressSanitizer's allocator holds freed memory in quarantine; the plain run checks this"))
    func memoryReturnsAfterClose() throws {
        let relay = try startRelay()
        defer { relay.shutdown() }
        let before = residentKilobytes()
        // 20 × 8 chunk streams × 960 KiB of 1 MiB messages (1 MiB reserved each): 160 MiB,
        // each connection under its 12 MiB budget.
        let attackers = try (0..<20).map { _ in try handshaken(relay.rtmpPort) }
        for attacker in attackers { attacker.send(parkedPartials(chunkStreams: 0..<8, chunks: 15)) }
        #expect(eventually(5) { relay.rtmp.unfinishedBudget.usedBytes >= 150 << 20 })
        let during = residentKilobytes()
        #expect(during - before > 100_000)
        for attacker in attackers { attacker.close() }
        #expect(eventually(3) { relay.rtmp.unfinishedBudget.usedBytes == 0 })
        #expect(eventually(3) { residentKilobytes() - before < 80_000 }, "RSS \(before) → \(during) → \(residentKilobytes()) kB")
    }

    @Test("past the server-wide budget of unfinished messages the connection that asks is closed; the others stay")
    func serverWideUnfinishedBudget() throws {
        let relay = try startRelay { $0.maxUnfinishedBytesTotal = 3 << 19 }
        defer { relay.shutdown() }
        let first = try handshaken(relay.rtmpPort)
        // 640 KiB of a 1 MiB message: its reservation has doubled to the whole 1 MiB.
        first.send(parkedPartials(chunkStreams: 0..<1, chunks: 10))
        #expect(eventually(2) { relay.rtmp.unfinishedBudget.usedBytes >= 1 << 20 })
        let second = try handshaken(relay.rtmpPort)
        second.send(parkedPartials(chunkStreams: 0..<1, chunks: 10))
        #expect(second.closesWithin(5))
        #expect(!first.closesWithin(0.3))
        #expect(relay.rtmp.unfinishedBudget.refusedCount == 1)
        #expect(relay.rtmp.unfinishedBudget.usedBytes <= 3 << 19)
        first.close()
        #expect(eventually(2) { relay.rtmp.unfinishedBudget.usedBytes == 0 })
    }

    @Test("a play whose command claims 8 MB is refused on its header; a 300-byte name gets NetStream.Play.Failed")
    func longPlayNames() throws {
        let relay = try startRelay()
        defer { relay.shutdown() }
        let attacker = try handshaken(relay.rtmpPort)
        var encoder = RTMPChunkEncoder()
        attacker.send(try encoder.encode(try RTMPMessage.command(.connect(transactionID: 1,
            RTMPConnectParameters(app: "live", tcUrl: "rtmp://127.0.0.1/live"))).raw()))
        // A play command (type 20) on chunk stream 5 announcing 8 MB, and its first chunk.
        let length = 8_000_000
        attacker.send([0x05, 0, 0, 0, UInt8(length >> 16), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF), 20, 1, 0, 0, 0]
                      + [0x02, 0x00, 0x04] + Array("play".utf8) + [UInt8](repeating: 0, count: 121))
        #expect(attacker.closesWithin(5))

        let player = try TestRTMPClient(port: relay.rtmpPort, path: "live/" + String(repeating: "n", count: 300), mode: .play)
        guard case .failed(let status) = try player.start() else {
            Issue.record("a 300-byte name was not refused")
            return
        }
        #expect(status.code == RTMPStatus.Code.playFailed)
        #expect(try apiStreams(relay).isEmpty)
    }

    @Test("a query on the app (a token) never reaches the stream's key or the listings")
    func appQueryStaysOut() throws {
        let relay = try startRelay()
        defer { relay.shutdown() }
        let publisher = try handshaken(relay.rtmpPort)
        var encoder = RTMPChunkEncoder()
        var bytes = try encoder.encode(try RTMPMessage.command(.connect(transactionID: 1,
            RTMPConnectParameters(app: "live?token=secret", tcUrl: "rtmp://127.0.0.1/live?token=secret"))).raw())
        bytes += try encoder.encode(try RTMPMessage.command(.createStream(transactionID: 2)).raw())
        bytes += try encoder.encode(try RTMPMessage.command(.publish(transactionID: 3, streamName: "cam", type: .live))
            .raw(messageStreamID: 1))
        publisher.send(bytes)
        #expect(try eventually(3) { try apiStreams(relay).first?.publisher != nil })
        let stream = try #require(try apiStreams(relay).first)
        #expect(stream.app == "live")
        #expect(!(try httpGet(port: relay.httpPort, "/metrics").body.contains("secret")))
    }

    @Test("co-host streams (line-…) are left out of /api/streams and the per-stream metrics, and counted as hidden")
    func cohostStreamsHidden() throws {
        let relay = try startRelay()
        defer { relay.shutdown() }
        let host = try startPublisher(relay.rtmpPort, "live/cam")
        // Only the line's co-host may publish there; the hoster waiting to play it makes the stream.
        let cohost = try TestRTMPClient(port: relay.rtmpPort, path: "live/line-3f9a0c7d2b1e4a56", mode: .play)
        #expect(try cohost.start().map { if case .playing = $0 { true } else { false } } == true)
        #expect(eventually(3) { relay.rtmp.streams().count == 2 })
        #expect(try apiStreams(relay).map(\.name) == ["cam"])
        let metrics = try httpGet(port: relay.httpPort, "/metrics").body
        #expect(!metrics.contains("line-3f9a0c7d2b1e4a56"))
        #expect(metrics.contains("liveline_stream_players{app=\"live\",name=\"cam\"} 0"))
        #expect(metrics.contains("liveline_hidden_streams 1\n"))
        #expect(metrics.contains("liveline_players 1\n"))
        _ = (host, cohost)
    }

    @Test("onMetaData with NaN, negative and huge numbers: the stream's stats leave them out")
    func hostileMetadata() throws {
        let relay = try startRelay()
        defer { relay.shutdown() }
        let publisher = try startPublisher(relay.rtmpPort, "live/meta", metadata: RTMPStreamMetadata([
            "width": .number(-1280), "height": .number(1e300), "framerate": .number(.nan), "videodatarate": .number(.infinity),
        ]))
        try publisher.sendVideo(SyntheticVideo.frame(index: 0, keyframe: true), timestamp: 0)
        #expect(try eventually(3) { try apiStreams(relay).first?.frames == 1 })
        let stream = try #require(try apiStreams(relay).first)
        #expect(stream.width == nil)
        #expect(stream.height == nil)
        // A player gets the metadata as sent (the relay does not rewrite it) and stays up.
        let player = try TestRTMPClient(port: relay.rtmpPort, path: "live/meta", mode: .play)
        guard case .playing = try player.start() else {
            Issue.record("play did not start")
            return
        }
        #expect(try player.pump(timeout: 3) { if case .metadata = $0 { true } else { false } } != nil)
    }

    @Test("GOP caches of all streams stay within the server-wide budget; the stream that passes it keeps only headers")
    func serverWideGOPBudget() throws {
        let relay = try startRelay { $0.maxGOPCacheBytesTotal = 100_000 }
        defer { relay.shutdown() }
        let a = try startPublisher(relay.rtmpPort, "live/a")
        for index in 0..<4 { try a.sendVideo(SyntheticVideo.frame(index: index, keyframe: index == 0, size: 10_000), timestamp: UInt32(index * 33)) }
        #expect(try eventually(3) { try apiStreams(relay).first?.frames == 4 })
        let b = try startPublisher(relay.rtmpPort, "live/b")
        try b.sendVideo(SyntheticVideo.frame(index: 0, keyframe: true, size: 30_000), timestamp: 0)
        #expect(try eventually(3) { try apiStreams(relay).first { $0.name == "b" }?.frames == 1 })
        #expect(relay.rtmp.gopBudget.usedBytes <= 100_000)
        #expect(try apiStreams(relay).first { $0.name == "b" }?.cachedBytes == 0)
        let metrics = try httpGet(port: relay.httpPort, "/metrics").body
        #expect(metrics.contains("liveline_gop_cache_budget_drops_total 1\n"))
    }
}
