import LiveCore
import Testing
@testable import LiveFilter

@Suite struct MirrorFilterTests {
    @Test func flipsEverySampleOfEveryPlane() throws {
        // 70 wide: the chroma width (35) is odd, so the middle sample stays put.
        let frame = FrameFixtures.random(width: 70, height: 38, seed: 1)
        let original = FrameFixtures.copy(frame)
        let out = MirrorFilter().process(frame)
        #expect(out === frame)
        var mismatches = 0
        for p in 0..<3 {
            let w = out.planeWidth(p)
            for y in 0..<out.planeHeight(p) {
                for x in 0..<w where out.sample(plane: p, x: x, y: y) != original.sample(plane: p, x: w - 1 - x, y: y) {
                    mismatches += 1
                }
            }
        }
        #expect(mismatches == 0)
        #expect(!FrameFixtures.samplesEqual(out, original))
    }

    @Test func mirroringTwiceIsIdentity() {
        let frame = FrameFixtures.random(width: 128, height: 72, seed: 2)
        let original = FrameFixtures.copy(frame)
        let mirror = MirrorFilter()
        let twice = mirror.process(mirror.process(frame))
        #expect(FrameFixtures.samplesEqual(twice, original))
    }

    @Test func disabledLeavesTheFrameAlone() {
        let frame = FrameFixtures.random(width: 32, height: 16, seed: 3)
        let original = FrameFixtures.copy(frame)
        let mirror = MirrorFilter(enabled: false)
        #expect(!mirror.isEnabled)
        let out = mirror.process(frame)
        #expect(FrameFixtures.samplesEqual(out, original))
    }
}
