import LiveCore
import Testing
@testable import LiveFilter

@Suite struct WatermarkFilterTests {
    static let background = YUVColor(y: 100, u: 120, v: 140)
    static let logoRGB: (r: UInt8, g: UInt8, b: UInt8) = (200, 40, 60)

    static func backgroundFrame() -> VideoFrame {
        let frame = VideoFrame(width: 64, height: 48)
        frame.fill(background)
        return frame
    }

    /// The documented blend, computed independently of the filter.
    static func expected(_ src: UInt8, _ logo: UInt8, _ a: Int) -> UInt8 {
        UInt8((Int(src) * (255 - a) + Int(logo) * a + 127) / 255)
    }

    /// 6x4 pixels of one colour; each 2x2 block column has one alpha: 0, 128, 255.
    static func stripedLogo() -> RGBAImage {
        var image = RGBAImage(width: 6, height: 4, r: logoRGB.r, g: logoRGB.g, b: logoRGB.b, a: 0)
        for y in 0..<4 {
            for x in 0..<6 {
                image[x, y] = (logoRGB.r, logoRGB.g, logoRGB.b, [0, 128, 255][x / 2])
            }
        }
        return image
    }

    @Test func blendsLumaAndChromaExactly() {
        let frame = WatermarkFilterTests.backgroundFrame()
        let original = FrameFixtures.copy(frame)
        // (11, 9) rounds down to (10, 8).
        let watermark = WatermarkFilter(image: WatermarkFilterTests.stripedLogo(), x: 11, y: 9)
        #expect(watermark.position! == (10, 8))
        let out = watermark.process(frame)
        #expect(out === frame)
        let logo = YUVColor(r: WatermarkFilterTests.logoRGB.r, g: WatermarkFilterTests.logoRGB.g,
                            b: WatermarkFilterTests.logoRGB.b)
        let bg = WatermarkFilterTests.background
        for ly in 0..<4 {
            for lx in 0..<6 {
                let a = [0, 128, 255][lx / 2]
                #expect(out.sample(plane: 0, x: 10 + lx, y: 8 + ly) == WatermarkFilterTests.expected(bg.y, logo.y, a))
            }
        }
        for by in 0..<2 {
            for bx in 0..<3 {
                let a = [0, 128, 255][bx]
                #expect(out.sample(plane: 1, x: 5 + bx, y: 4 + by) == WatermarkFilterTests.expected(bg.u, logo.u, a))
                #expect(out.sample(plane: 2, x: 5 + bx, y: 4 + by) == WatermarkFilterTests.expected(bg.v, logo.v, a))
            }
        }
        // Spot values: alpha 255 is the logo, alpha 128 is half way (rounded), alpha 0 is the background.
        #expect(out.pixel(x: 14, y: 8) == logo)
        #expect(out.pixel(x: 10, y: 8) == bg)
        let halfway = (100 * 127 + Int(logo.y) * 128 + 127) / 255
        #expect(Int(out.sample(plane: 0, x: 12, y: 8)) == halfway)
        // Nothing outside the logo's rectangle moved.
        var outside = 0
        for p in 0..<3 {
            let (x0, y0, x1, y1) = p == 0 ? (10, 8, 16, 12) : (5, 4, 8, 6)
            for y in 0..<out.planeHeight(p) {
                for x in 0..<out.planeWidth(p) where !(x0..<x1 ~= x && y0..<y1 ~= y) {
                    if out.sample(plane: p, x: x, y: y) != original.sample(plane: p, x: x, y: y) { outside += 1 }
                }
            }
        }
        #expect(outside == 0)
    }

    @Test func chromaUsesTheBlockAverageAlphaAndAlphaWeightedColour() {
        // One 2x2 block: red opaque, blue at alpha 85, and two transparent pixels.
        var image = RGBAImage(width: 2, height: 2, r: 0, g: 0, b: 0, a: 0)
        image[0, 0] = (255, 0, 0, 255)
        image[1, 1] = (0, 0, 255, 85)
        let frame = WatermarkFilterTests.backgroundFrame()
        _ = WatermarkFilter(image: image, x: 20, y: 20).process(frame)
        let red = YUVColor(r: 255, g: 0, b: 0), blue = YUVColor(r: 0, g: 0, b: 255)
        let blockAlpha = (255 + 85 + 2) / 4
        let u = (255 * Int(red.u) + 85 * Int(blue.u) + 170) / 340
        let v = (255 * Int(red.v) + 85 * Int(blue.v) + 170) / 340
        let bg = WatermarkFilterTests.background
        #expect(frame.sample(plane: 1, x: 10, y: 10) == WatermarkFilterTests.expected(bg.u, UInt8(u), blockAlpha))
        #expect(frame.sample(plane: 2, x: 10, y: 10) == WatermarkFilterTests.expected(bg.v, UInt8(v), blockAlpha))
        #expect(frame.sample(plane: 0, x: 20, y: 20) == red.y)
        #expect(frame.sample(plane: 0, x: 21, y: 20) == bg.y)
        #expect(frame.sample(plane: 0, x: 21, y: 21) == WatermarkFilterTests.expected(bg.y, blue.y, 85))
    }

    @Test(arguments: [(60, 44), (-4, -2)])
    func clipsAtTheFrameEdge(x: Int, y: Int) {
        let frame = WatermarkFilterTests.backgroundFrame()
        let logoImage = RGBAImage(width: 8, height: 6, r: 255, g: 255, b: 255, a: 255)
        let out = WatermarkFilter(image: logoImage, x: x, y: y).process(frame)
        let visibleX = max(0, x)..<min(64, x + 8), visibleY = max(0, y)..<min(48, y + 6)
        var wrong = 0
        for py in 0..<48 {
            for px in 0..<64 {
                let inside = visibleX ~= px && visibleY ~= py
                let expected = inside ? YUVColor.white : WatermarkFilterTests.background
                if out.pixel(x: px, y: py) != expected { wrong += 1 }
            }
        }
        #expect(visibleX.count == 4)
        #expect(wrong == 0)
    }

    @Test func fullyTransparentLogoLeavesTheFrameUntouched() {
        let frame = FrameFixtures.random(width: 64, height: 48, seed: 11)
        let original = FrameFixtures.copy(frame)
        let logo = RGBAImage(width: 16, height: 10, r: 255, g: 0, b: 255, a: 0)
        let out = WatermarkFilter(image: logo, x: 8, y: 8).process(frame)
        #expect(FrameFixtures.samplesEqual(out, original))
    }

    @Test func logoCanBeRemovedAndMoved() {
        let watermark = WatermarkFilter()
        #expect(!watermark.hasLogo)
        watermark.setLogo(RGBAImage(width: 2, height: 2, r: 0, g: 0, b: 0, a: 255), x: 0, y: 0)
        watermark.move(x: 33, y: 7)
        #expect(watermark.position! == (32, 6))
        let frame = WatermarkFilterTests.backgroundFrame()
        _ = watermark.process(frame)
        #expect(frame.pixel(x: 32, y: 6) == YUVColor(r: 0, g: 0, b: 0))
        #expect(frame.pixel(x: 0, y: 0) == WatermarkFilterTests.background)
        watermark.setLogo(nil, x: 0, y: 0)
        #expect(!watermark.hasLogo)
    }
}
