import Foundation
import LiveCore
import Testing
@testable import LiveCodec

@Suite struct H264EncoderTests {
    static let config = H264EncoderConfig(width: 1280, height: 720, fps: 30, bitrateKbps: 2500)

    @Test func encodeDecodeKeepsQualityAndCaptureTimes() throws {
        let encoder = try H264Encoder(config: Self.config)
        let decoder = try H264Decoder(extradata: encoder.streamInfo.extradata)
        let source = VideoFrame(width: 1280, height: 720)
        var originals: [Int64: VideoFrame] = [:]
        var decoded: [VideoFrame] = []
        var packetCaptureTimes: [UInt64] = []
        let baseCapture: UInt64 = 1_767_225_600_000_000
        for i in 0..<60 {
            TestPictures.drawMoving(source, index: i)
            source.pts = MediaTime(frame: Int64(i), fps: 30)
            // Every 7th time holds 00 00 0x bytes that need emulation prevention.
            source.captureTimeMicros = i % 7 == 0 ? 0x0000_0100_0000_0001 + UInt64(i) : baseCapture + UInt64(i) * 33_333
            let copy = VideoFrame(width: 1280, height: 720)
            copy.copy(from: source)
            originals[source.pts.micros] = copy
            for packet in try encoder.encode(source) {
                packetCaptureTimes.append(packet.captureTimeMicros)
                #expect(CaptureTimeSEI.find(annexB: packet.data) == packet.captureTimeMicros)
                decoded += try decoder.decode(annexB: packet.data, pts: packet.pts)
            }
        }
        for packet in try encoder.flush() {
            decoded += try decoder.decode(annexB: packet.data, pts: packet.pts)
        }
        decoded += try decoder.flush()
        #expect(decoded.count == 60)
        var psnrSum = 0.0
        for frame in decoded {
            let original = try #require(originals[frame.pts.micros])
            #expect(frame.captureTimeMicros == original.captureTimeMicros)
            psnrSum += TestPictures.psnrY(original, frame)
        }
        let psnr = psnrSum / Double(decoded.count)
        print("average Y PSNR at 2500 kbit/s: \(psnr) dB")
        #expect(psnr >= 35)
    }

    @Test func requestKeyframeMakesTheNextPacketAnIDRWithParameterSets() throws {
        let encoder = try H264Encoder(config: H264EncoderConfig(width: 320, height: 240, fps: 30, bitrateKbps: 500))
        let frame = VideoFrame(width: 320, height: 240)
        var packets: [EncodedVideoPacket] = []
        for i in 0..<20 {
            TestPictures.drawMoving(frame, index: i)
            frame.pts = MediaTime(frame: Int64(i), fps: 30)
            if i == 10 { encoder.requestKeyframe() }
            packets += try encoder.encode(frame)
        }
        #expect(packets.count == 20)
        // (x264 may add scene-cut keyframes later; the moving box wraps around at frame 18.)
        #expect(packets[0].isKeyframe && packets[10].isKeyframe)
        #expect(!packets[1..<10].contains { $0.isKeyframe })
        for index in [0, 10] {
            let types = H264Bitstream.annexBUnits(packets[index].data).map { H264Bitstream.nalType($0.first!) }
            #expect(types.contains(H264Bitstream.NALType.sps))
            #expect(types.contains(H264Bitstream.NALType.pps))
            #expect(types.contains(H264Bitstream.NALType.idrSlice))
        }
        // A player joining at the requested IDR decodes it without the global header.
        let decoder = try H264Decoder()
        let frames = try decoder.decode(annexB: packets[10].data, pts: packets[10].pts)
        #expect(frames.count == 1)
    }

    @Test func lowerBitrateLowersBytesPerSecond() throws {
        let encoder = try H264Encoder(config: H264EncoderConfig(width: 640, height: 360, fps: 30, bitrateKbps: 2500))
        let frame = VideoFrame(width: 640, height: 360)
        var before = 0, after = 0
        for i in 0..<120 {
            TestPictures.drawNoise(frame, index: i)
            frame.pts = MediaTime(frame: Int64(i), fps: 30)
            if i == 60 { encoder.setBitrate(kbps: 500) }
            let bytes = try encoder.encode(frame).reduce(0) { $0 + $1.data.count }
            if i < 60 { before += bytes } else { after += bytes }
        }
        let kbpsBefore = before * 8 / 2 / 1000, kbpsAfter = after * 8 / 2 / 1000
        print("noise at 2500 kbit/s: \(kbpsBefore) kbit/s; after setBitrate(500): \(kbpsAfter) kbit/s")
        #expect(encoder.streamInfo.bitrate == 500_000)
        #expect(kbpsBefore > 1500)
        #expect(kbpsAfter < kbpsBefore / 2)
    }

    @Test func captureTimesFollowFramesThroughBFrames() throws {
        let config = H264EncoderConfig(width: 320, height: 240, fps: 30, bitrateKbps: 800, tune: "film", bFrames: 2)
        let encoder = try H264Encoder(config: config)
        let decoder = try H264Decoder(extradata: encoder.streamInfo.extradata)
        let frame = VideoFrame(width: 320, height: 240)
        var packets: [EncodedVideoPacket] = []
        for i in 0..<30 {
            TestPictures.drawMoving(frame, index: i)
            frame.pts = MediaTime(frame: Int64(i), fps: 30)
            frame.captureTimeMicros = 5_000_000 + UInt64(i) * 1000
            packets += try encoder.encode(frame)
        }
        packets += try encoder.flush()
        #expect(packets.count == 30)
        #expect(packets.contains { $0.pts != $0.dts })
        var decoded: [VideoFrame] = []
        for packet in packets {
            let index = packet.pts.micros * 30 / 1_000_000 + (packet.pts.micros * 30 % 1_000_000 == 0 ? 0 : 1)
            #expect(packet.captureTimeMicros == 5_000_000 + UInt64(index) * 1000)
            #expect(packet.dts <= packet.pts)
            decoded += try decoder.decode(annexB: packet.data, pts: packet.pts)
        }
        decoded += try decoder.flush()
        #expect(decoded.count == 30)
        for frame in decoded {
            let index = (frame.pts.micros * 30 + 999_999) / 1_000_000
            #expect(frame.captureTimeMicros == 5_000_000 + UInt64(index) * 1000)
        }
    }

    @Test func decodesAVCCWithAnAVCCSequenceHeader() throws {
        let encoder = try H264Encoder(config: H264EncoderConfig(width: 320, height: 240, fps: 30, bitrateKbps: 500))
        let record = try H264Bitstream.avcDecoderConfigurationRecord(fromAnnexB: encoder.streamInfo.extradata)
        let decoder = try H264Decoder(extradata: record)
        let frame = VideoFrame(width: 320, height: 240)
        var decoded: [VideoFrame] = []
        for i in 0..<10 {
            TestPictures.drawMoving(frame, index: i)
            frame.pts = MediaTime(frame: Int64(i), fps: 30)
            frame.captureTimeMicros = 900 + UInt64(i)
            for packet in try encoder.encode(frame) {
                let avcc = try H264Bitstream.avcc(fromAnnexB: packet.data)
                #expect(CaptureTimeSEI.find(avcc: avcc) == 900 + UInt64(i))
                decoded += try decoder.decode(avcc: avcc, pts: packet.pts)
            }
        }
        decoded += try decoder.flush()
        #expect(decoded.map(\.captureTimeMicros) == (0..<10).map { 900 + UInt64($0) })
        #expect(decoded.allSatisfy { $0.width == 320 && $0.height == 240 })
        #expect(throws: H264Bitstream.Error.self) { try decoder.decode(avcc: [0, 0, 0, 9, 0x65], pts: .zero) }
    }

    @Test func controlsAreSafeFromAnotherThread() throws {
        let encoder = try H264Encoder(config: H264EncoderConfig(width: 320, height: 240, fps: 30, bitrateKbps: 500))
        let frame = VideoFrame(width: 320, height: 240)
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            for i in 0..<200 {
                encoder.setBitrate(kbps: 300 + i)
                if i % 50 == 0 { encoder.requestKeyframe() }
            }
            done.signal()
        }
        var keyframes = 0
        for i in 0..<30 {
            TestPictures.drawMoving(frame, index: i)
            frame.pts = MediaTime(frame: Int64(i), fps: 30)
            keyframes += try encoder.encode(frame).filter(\.isKeyframe).count
        }
        done.wait()
        #expect(keyframes >= 1)
        #expect(encoder.bitrateKbps == 499)
        #expect(encoder.streamInfo.bitrate == 499_000)
    }

    @Test func rejectsFramesOfAnotherSize() throws {
        let encoder = try H264Encoder(config: H264EncoderConfig(width: 320, height: 240, fps: 30, bitrateKbps: 500))
        #expect(throws: H264Encoder.EncoderError.self) { try encoder.encode(VideoFrame(width: 640, height: 480)) }
    }
}
