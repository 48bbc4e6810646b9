import LiveCore
import Testing
@testable import LiveFilter

@Suite struct BeautyFilterTests {
    static let skin = YUVColor(r: 224, g: 172, b: 140)
    static let dark = YUVColor(r: 40, g: 30, b: 30)
    static let edgeX = 640

    /// 1280x720: skin on the left, a dark region from x = 640, Gaussian noise (σ 8) on luma.
    static func skinPatch() -> VideoFrame {
        let frame = VideoFrame(width: 1280, height: 720)
        frame.fill(skin)
        FrameFixtures.fill(frame, x: edgeX, y: 0, width: 1280 - edgeX, height: 720, color: dark)
        FrameFixtures.addLumaNoise(frame, sigma: 8, seed: 42)
        return frame
    }

    /// Mean luma of the 6-pixel bands each side of the edge, 3 pixels away from it.
    static func edgeContrast(_ frame: VideoFrame) -> Double {
        let rows = 100..<620
        let left = FrameFixtures.statistics(frame, x: (edgeX - 9)..<(edgeX - 3), y: rows).mean
        let right = FrameFixtures.statistics(frame, x: (edgeX + 3)..<(edgeX + 9), y: rows).mean
        return left - right
    }

    @Test func smoothsNoiseOnFlatSkin() {
        let frame = BeautyFilterTests.skinPatch()
        let region = (x: 100..<500, y: 100..<620)
        let before = FrameFixtures.statistics(frame, x: region.x, y: region.y)
        let out = BeautyFilter(strength: 1.0).process(frame)
        let after = FrameFixtures.statistics(out, x: region.x, y: region.y)
        #expect(before.deviation > 7.5)
        #expect(after.deviation <= before.deviation / 2, "σ \(before.deviation) → \(after.deviation)")
        // Brightening lifts skin, but not by more than a few percent.
        #expect(after.mean > before.mean)
        #expect(after.mean < before.mean * 1.1)
    }

    @Test func keepsTheEdgeBetweenSkinAndDark() {
        let frame = BeautyFilterTests.skinPatch()
        let before = BeautyFilterTests.edgeContrast(frame)
        let out = BeautyFilter(strength: 1.0).process(frame)
        let after = BeautyFilterTests.edgeContrast(out)
        #expect(before > 100)
        #expect(abs(after - before) <= 0.1 * before, "contrast \(before) → \(after)")
    }

    @Test func warmsSkinChroma() {
        let frame = BeautyFilterTests.skinPatch()
        let out = BeautyFilter(strength: 1.0).process(frame)
        let u = FrameFixtures.statistics(out, plane: 1, x: 50..<250, y: 50..<300).mean
        let v = FrameFixtures.statistics(out, plane: 2, x: 50..<250, y: 50..<300).mean
        #expect(v > Double(BeautyFilterTests.skin.v))
        #expect(u < Double(BeautyFilterTests.skin.u))
        // The dark, non-skin side keeps its colour.
        let darkU = FrameFixtures.statistics(out, plane: 1, x: 400..<600, y: 50..<300).mean
        let darkV = FrameFixtures.statistics(out, plane: 2, x: 400..<600, y: 50..<300).mean
        #expect(abs(darkU - Double(BeautyFilterTests.dark.u)) < 0.5)
        #expect(abs(darkV - Double(BeautyFilterTests.dark.v)) < 0.5)
    }

    /// Full-range black and white, flat and as a one-pixel checkerboard, at the
    /// strongest setting: the fixed-point coefficients must neither wrap nor swap
    /// levels, and flat areas away from the edge keep their level.
    @Test func fullRangeExtremesKeepTheirLevels() {
        let frame = VideoFrame(width: 320, height: 180)
        frame.fill(YUVColor(y: 255, u: 128, v: 128))
        FrameFixtures.fill(frame, x: 160, y: 0, width: 160, height: 180, color: YUVColor(y: 0, u: 128, v: 128))
        // A checkerboard band across both halves.
        let y = frame.y, s = frame.stride(0)
        for row in 80..<100 {
            for x in 0..<320 { y[row * s + x] = (row + x) % 2 == 0 ? 255 : 0 }
        }
        let original = FrameFixtures.copy(frame)
        let out = BeautyFilter(strength: 1).process(frame)
        let white = FrameFixtures.statistics(out, x: 20..<140, y: 10..<60)
        let black = FrameFixtures.statistics(out, x: 180..<300, y: 10..<60)
        #expect(white.mean >= 254 && white.deviation < 0.5, "white \(white)")
        #expect(black.mean <= 1 && black.deviation < 0.5, "black \(black)")
        var lowestWhite = 255, highestBlack = 0
        for row in 80..<100 {
            for x in 0..<320 {
                let value = Int(out.y[row * out.stride(0) + x])
                if original.y[row * original.stride(0) + x] == 255 {
                    lowestWhite = min(lowestWhite, value)
                } else {
                    highestBlack = max(highestBlack, value)
                }
            }
        }
        #expect(lowestWhite > highestBlack, "checkerboard white ≥ \(lowestWhite), black ≤ \(highestBlack)")
    }

    @Test func strengthZeroIsIdentity() {
        let frame = FrameFixtures.random(width: 320, height: 180, seed: 5)
        let original = FrameFixtures.copy(frame)
        let out = BeautyFilter(strength: 0).process(frame)
        #expect(FrameFixtures.samplesEqual(out, original))
    }

    @Test func strengthIsClamped() {
        let beauty = BeautyFilter()
        beauty.strength = 2
        #expect(beauty.strength == 1)
        beauty.strength = -1
        #expect(beauty.strength == 0)
    }

    @Test func handlesSmallAndChangingSizes() {
        let beauty = BeautyFilter(strength: 1)
        for (w, h) in [(2, 2), (6, 4), (1280, 720), (18, 10)] {
            let frame = VideoFrame(width: w, height: h)
            frame.fill(BeautyFilterTests.skin)
            let out = beauty.process(frame)
            // A flat picture stays flat: smoothing has nothing to remove.
            let stats = FrameFixtures.statistics(out, x: 0..<w, y: 0..<h)
            #expect(stats.deviation == 0)
        }
    }
}
