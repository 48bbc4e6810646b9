import Foundation
import LiveCodec
import LiveCore
import LiveTestSupport
import Testing
@testable import LiveLine

@Suite("Recording sinks on a full disk")
struct RecordingSinkTests {
    /// 30 frames of 160x120, each padded with a 64 KiB filler NAL unit so every packet
    /// reaches the disk (libavformat buffers 32 KiB).
    static func packets() throws -> (VideoStreamInfo, [EncodedVideoPacket]) {
        let encoder = try H264Encoder(config: H264EncoderConfig(width: 160, height: 120, fps: 30, bitrateKbps: 300))
        let frame = VideoFrame(width: 160, height: 120)
        let filler: [UInt8] = [0, 0, 0, 1, 0x0C] + [UInt8](repeating: 0xFF, count: 64 << 10)
        var packets: [EncodedVideoPacket] = []
        for i in 0..<30 {
            frame.pts = MediaTime(frame: Int64(i), fps: 30)
            packets += try encoder.encode(frame).map {
                EncodedVideoPacket(data: $0.data + filler, pts: $0.pts, dts: $0.dts, isKeyframe: $0.isKeyframe,
                                   captureTimeMicros: 0)
            }
        }
        return (encoder.streamInfo, packets)
    }

    @Test("a hoster's recording to a full disk stops with the error kept; the sink goes on taking packets")
    func hosterRecordingOnFullDisk() throws {
        let directory = try makeTemporaryDirectory(prefix: "liveline-record-")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("full.flv").path
        try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: "/dev/full")
        let (stream, packets) = try Self.packets()
        let sink = try RecordingSink(path: path)
        try sink.open(stream: stream)
        // Before: the first failed write threw out of the encode thread and ended the push.
        for packet in packets { try sink.write(packet) }
        let failure = try #require(sink.failure as? FFmpegError)
        #expect(failure.code == -ENOSPC)
        try sink.close()
    }
}
