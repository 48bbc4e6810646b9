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
}
