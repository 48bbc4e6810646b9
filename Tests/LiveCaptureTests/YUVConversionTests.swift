import LiveCore
import Testing
@testable import LiveCapture

@Suite struct YUVConversionTests {
    /// Widths with and without a tail past the last 4-pixel word, and padded pitches.
    @Test(arguments: [(320, 240, 640), (330, 6, 672), (2, 2, 4), (1282, 4, 2600)])
    func yuyvMatchesTheReference(width: Int, height: Int, pitch: Int) {
        let format = V4L2Format(pixelFormat: .yuyv, width: width, height: height, bytesPerLine: pitch,
                                sizeImage: pitch * height)
        let yuyv = V4L2CameraTests.pattern(format, sequence: 41)
        let frame = VideoFrame(width: width, height: height)
        yuyv.withUnsafeBytes { YUVConversion.yuyvToI420($0.baseAddress!, bytesPerLine: pitch, into: frame) }
        #expect(planeBytes(frame) == V4L2CameraTests.referenceI420(yuyv: yuyv, width: width, height: height, pitch: pitch))
    }

    @Test(arguments: [(320, 240, 320), (332, 4, 352), (2, 2, 2)])
    func nv12MatchesTheReference(width: Int, height: Int, pitch: Int) {
        let format = V4L2Format(pixelFormat: .nv12, width: width, height: height, bytesPerLine: pitch,
                                sizeImage: pitch * height * 3 / 2)
        let nv12 = V4L2CameraTests.pattern(format, sequence: 9)
        let frame = VideoFrame(width: width, height: height)
        nv12.withUnsafeBytes { YUVConversion.nv12ToI420($0.baseAddress!, bytesPerLine: pitch, into: frame) }
        var expected: [UInt8] = []
        for row in 0..<height { expected += nv12[(row * pitch)..<(row * pitch + width)] }
        let chroma = pitch * height
        for parity in 0..<2 {
            for crow in 0..<(height / 2) {
                for cx in 0..<(width / 2) { expected.append(nv12[chroma + crow * pitch + 2 * cx + parity]) }
            }
        }
        #expect(planeBytes(frame) == expected)
    }

    @Test func i420CopyHonoursThePitch() {
        let format = V4L2Format(pixelFormat: .i420, width: 64, height: 8, bytesPerLine: 96, sizeImage: 96 * 8 * 3 / 2)
        let i420 = V4L2CameraTests.pattern(format, sequence: 2)
        let frame = VideoFrame(width: 64, height: 8)
        i420.withUnsafeBytes { YUVConversion.i420Copy($0.baseAddress!, bytesPerLine: 96, into: frame) }
        #expect(frame.sample(plane: 0, x: 63, y: 7) == i420[7 * 96 + 63])
        let u = 96 * 8, v = u + 48 * 4
        #expect(frame.sample(plane: 1, x: 31, y: 3) == i420[u + 3 * 48 + 31])
        #expect(frame.sample(plane: 2, x: 0, y: 1) == i420[v + 48])
    }
}
