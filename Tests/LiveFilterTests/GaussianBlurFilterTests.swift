import LiveCore
import Testing
@testable import LiveFilter

@Suite struct GaussianBlurFilterTests {
    @Test func lowersNoiseVariance() {
        let frame = VideoFrame(width: 320, height: 180)
        frame.fill(.grey)
        FrameFixtures.addLumaNoise(frame, sigma: 10, seed: 9)
        let before = FrameFixtures.statistics(frame, x: 20..<300, y: 20..<160)
        let out = GaussianBlurFilter(sigma: 2).process(frame)
        let after = FrameFixtures.statistics(out, x: 20..<300, y: 20..<160)
        #expect(after.deviation * after.deviation < before.deviation * before.deviation / 4)
        #expect(abs(after.mean - before.mean) < 1)
    }

    @Test func flatPictureStaysExactlyFlat() {
        let frame = VideoFrame(width: 66, height: 40)
        frame.fill(YUVColor(y: 77, u: 99, v: 201))
        let out = GaussianBlurFilter(sigma: 3).process(frame)
        var wrong = 0
        for y in 0..<40 {
            for x in 0..<66 where out.pixel(x: x, y: y) != YUVColor(y: 77, u: 99, v: 201) { wrong += 1 }
        }
        #expect(wrong == 0)
    }

    @Test func blursAllPlanes() {
        let frame = VideoFrame(width: 64, height: 64)
        frame.fill(.black)
        let blue = YUVColor(r: 0, g: 0, b: 255)
        FrameFixtures.fill(frame, x: 32, y: 0, width: 32, height: 64, color: blue)
        let out = GaussianBlurFilter(sigma: 4).process(frame)
        // Next to the step every plane takes values between the two sides.
        let y = out.sample(plane: 0, x: 31, y: 20)
        #expect(y > YUVColor.black.y && y < blue.y)
        let u = out.sample(plane: 1, x: 15, y: 10), v = out.sample(plane: 2, x: 15, y: 10)
        #expect(u > YUVColor.black.u && u < blue.u)
        #expect(v < YUVColor.black.v && v > blue.v)
        #expect(out.pixel(x: 0, y: 0) == YUVColor.black)
    }

    @Test func kernelSumsToOne() {
        for sigma in [0.5, 1, 2.5, 8, 32] {
            let taps = GaussianBlurFilter.kernel(sigma: sigma)
            #expect(taps.reduce(0, +) == 16384)
            #expect(taps == taps.reversed())
        }
    }

    @Test func sigmaZeroIsIdentity() {
        let frame = FrameFixtures.random(width: 40, height: 20, seed: 4)
        let original = FrameFixtures.copy(frame)
        let out = GaussianBlurFilter(sigma: 0).process(frame)
        #expect(FrameFixtures.samplesEqual(out, original))
    }
}
