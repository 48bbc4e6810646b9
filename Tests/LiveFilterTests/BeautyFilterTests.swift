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
