import Foundation
import LiveCore
import Testing
@testable import LiveLine

@Suite("Y4MWriter")
struct Y4MWriterTests {
    @Test("header once, FRAME + unpadded planes, and a size change scaled into the first size")
    func framesAndSizeChange() throws {
        let dir = try Peers.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("a.y4m").path
        let writer = try Y4MWriter(path: path)
        writer.setFrameRate(29.97)
        let first = VideoFrame(width: 64, height: 48)
        first.fill(YUVColor(y: 81, u: 90, v: 240))
        let second = VideoFrame(width: 32, height: 48)
        second.fill(YUVColor(y: 145, u: 54, v: 34))
        try writer.write(first)
        try writer.write(second)
        #expect(writer.framesWritten == 2 && writer.scaledFrames == 1)

        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        let header = "YUV4MPEG2 W64 H48 F30000:1001 Ip A1:1 C420jpeg\n"
        #expect(data.starts(with: Data(header.utf8)))
        let frameBytes = 6 + 64 * 48 * 3 / 2
        #expect(data.count == header.utf8.count + 2 * frameBytes)
        let bytes = [UInt8](data)
        let firstY = header.utf8.count + 6
        #expect(bytes[firstY] == 81 && bytes[firstY + 64 * 48 - 1] == 81)
        // The narrower picture sits centred with black bars at the sides.
        let secondY = header.utf8.count + frameBytes + 6
        #expect(bytes[secondY] == 16)
        #expect(bytes[secondY + 24 * 64 + 32] == 145)

        let probed = try Peers.probe(path, format: "yuv4mpegpipe")
        #expect(probed.width == 64 && probed.height == 48 && probed.frames == 2)
    }

    @Test("frame rates a publisher's onMetaData may carry (NaN, infinity, 1e300, negative) keep the default")
    func hostileFrameRates() throws {
        let dir = try Peers.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let writer = try Y4MWriter(path: dir.appendingPathComponent("b.y4m").path)
        // Before: 1e300 passed the finite check and `Int(_:)` trapped.
        for fps in [Double.nan, .infinity, -.infinity, 1e300, -30, 0, 1e6] {
            writer.setFrameRate(fps)
            #expect(writer.frameRate == (30, 1), "\(fps)")
        }
        writer.setFrameRate(25)
        #expect(writer.frameRate == (25, 1))
    }

    @Test("onMetaData figures become whole numbers only inside their range")
    func metadataNumbers() {
        #expect(GuestPipeline.wholeNumber(29.97, in: 1...1000) == 30)
        #expect(GuestPipeline.wholeNumber(640, in: 1...16384) == 640)
        for hostile in [Double.nan, .infinity, -.infinity, 1e300, -1, 0, 1e5] {
            #expect(GuestPipeline.wholeNumber(hostile, in: 1...16384) == nil, "\(hostile)")
        }
        #expect(GuestPipeline.wholeNumber(nil, in: 1...1000) == nil)
    }
}
