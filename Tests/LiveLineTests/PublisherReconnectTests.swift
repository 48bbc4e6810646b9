import Foundation
import LiveCodec
import LiveCore
import LiveRTMP
import Testing
@testable import LiveLine

@Suite("RTMP publisher reconnect through a proxy that drops only its connection")
struct PublisherReconnectTests {
    /// The RTMP messages a client sent on one connection: handshake skipped (C0 C1 C2),
    /// chunks reassembled (the client's Set Chunk Size applied by the decoder).
    static func messages(_ bytes: [UInt8]) throws -> [RTMPRawMessage] {
        let handshake = 1 + 2 * RTMPHandshake.packetSize
        guard bytes.count > handshake else { return [] }
        var decoder = RTMPChunkDecoder()
        decoder.feed(bytes[handshake...])
        var messages: [RTMPRawMessage] = []
        while let message = try decoder.nextMessage() { messages.append(message) }
        return messages
    }

    /// What a relay (and a player joining through it) sees of a connection, in order.
    enum Media: Equatable {
        case metadata, sequenceHeader, keyframe, interFrame
    }

    static func media(_ messages: [RTMPRawMessage]) -> [Media] {
        messages.compactMap { message in
            switch message.typeID {
            case RTMPMessage.TypeID.dataAMF0:
                return String(decoding: message.payload, as: UTF8.self).contains("onMetaData") ? .metadata : nil
            case RTMPMessage.TypeID.video where message.payload.count >= 2:
                if message.payload[1] == 0 { return .sequenceHeader }
                return message.payload[0] >> 4 == 1 ? .keyframe : .interFrame
            default:
                return nil
            }
        }
    }

    @Test("after the connection drops, metadata, the sequence header and an IDR come before any inter frame")
    func reconnectStartsWithHeadersAndIDR() throws {
        let nginx = try Peers.NginxRTMP()
        defer { nginx.stop() }
        let proxy = try CutProxy(upstreamPort: nginx.port, cutFirstAfter: 40_000)
        defer { proxy.stop() }

        var options = RTMPPublishSink.Options()
        options.backoff = ReconnectBackoff(baseSeconds: 0.2, factor: 1, capSeconds: 0.2, jitter: 0, maxTries: 5)
        let sink = RTMPPublishSink(url: try RTMPURL(parsing: "rtmp://127.0.0.1:\(proxy.port)/live/reconnect"),
                                   options: options)
        // A long GOP: after the drop, only the sink's IDR request makes a keyframe soon.
        let encoder = try H264Encoder(config: H264EncoderConfig(width: 160, height: 120, fps: 30, bitrateKbps: 400,
                                                                keyframeIntervalSeconds: 60))
        sink.encoder = encoder
        try sink.open(stream: encoder.streamInfo)

        // Frames keep coming while the connection drops and comes back, as from a camera.
        let frame = VideoFrame(width: 160, height: 120)
        var index = 0
        let deadline = Date().addingTimeInterval(15)
        func secondConnectionFrames() throws -> Int {
            let sent = proxy.clientBytes
            guard sent.count >= 2 else { return 0 }
            return Self.media(try Self.messages(sent[1])).filter { $0 == .keyframe || $0 == .interFrame }.count
        }
        while Date() < deadline, try secondConnectionFrames() < 20 {
            let y = frame.plane(0)
            for i in 0..<(frame.stride(0) * 120) { y[i] = UInt8(truncatingIfNeeded: i &* 7 &+ index &* 13) }
            frame.pts = MediaTime(frame: Int64(index), fps: 30)
            for packet in try encoder.encode(frame) { try sink.write(packet) }
            index += 1
            usleep(5_000)
        }
        try sink.close()

        let sent = proxy.clientBytes
        try #require(sent.count >= 2, "the publisher did not reconnect (\(sent.count) connection(s))")
        let first = Self.media(try Self.messages(sent[0]))
        #expect(first.prefix(3) == [.metadata, .sequenceHeader, .keyframe], "first connection: \(first.prefix(6))")
        let second = Self.media(try Self.messages(sent[1]))
        #expect(second.count >= 20, "second connection: \(second.count) media messages")
        // Nothing before the headers, and the first frame is an IDR.
        #expect(Array(second.prefix(3)) == [.metadata, .sequenceHeader, .keyframe], "second connection: \(second.prefix(6))")
        #expect(sink.status.reconnects == 1)
    }
}
