import Foundation
import LiveCodec
import LiveCore
import LiveRTMP
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

@Suite("GuestRecorder")
struct GuestRecorderTests {
    @Test("a malformed packet is left out and counted; the recording goes on and stays readable")
    func malformedPacketSkipped() throws {
        let directory = try makeTemporaryDirectory(prefix: "liveline-record-")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("guest.flv").path
        let encoder = try H264Encoder(config: H264EncoderConfig(width: 160, height: 120, fps: 30, bitrateKbps: 300))
        let record = try H264Bitstream.avcDecoderConfigurationRecord(fromAnnexB: encoder.streamInfo.extradata)
        let recorder = try GuestRecorder(path: path)
        recorder.setConfiguration(try H264Bitstream.parseAVCDecoderConfigurationRecord(record))
        let frame = VideoFrame(width: 160, height: 120)
        for i in 0..<20 {
            frame.pts = MediaTime(frame: Int64(i), fps: 30)
            for packet in try encoder.encode(frame) {
                let avcc = try H264Bitstream.avcc(fromAnnexB: packet.data)
                try recorder.write(RTMPVideoPacket(avcc: avcc, dts: packet.dts, pts: packet.pts, isKeyframe: packet.isKeyframe,
                                                   receivedMicros: 0), width: 160, height: 120, fps: 30)
            }
            if i == 10 {
                // A NAL length of 0x7FFFFFFF with three bytes after it. Before: the error
                // ended the guest.
                try recorder.write(RTMPVideoPacket(avcc: [0x7F, 0xFF, 0xFF, 0xFF, 0x41, 0, 0], dts: frame.pts, pts: frame.pts,
                                                   isKeyframe: false, receivedMicros: 0), width: 160, height: 120, fps: 30)
            }
        }
        try recorder.finish()
        #expect(recorder.packetsSkipped == 1)
        #expect(recorder.packetsWritten == 20)
        #expect(try Peers.probe(path).frames == 20)
    }
}
