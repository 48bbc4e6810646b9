import LiveCore
import Testing
@testable import LiveMix

private let red = YUVColor(r: 255, g: 0, b: 0)
private let green = YUVColor(r: 0, g: 255, b: 0)
private let blue = YUVColor(r: 0, g: 0, b: 255)
private let yellow = YUVColor(r: 255, g: 255, b: 0)
private let magenta = YUVColor(r: 255, g: 0, b: 255)

private func solid(_ w: Int, _ h: Int, _ color: YUVColor) -> VideoFrame {
    let frame = VideoFrame(width: w, height: h)
    frame.fill(color)
    return frame
}

/// Four quadrants of four colours: top-left, top-right, bottom-left, bottom-right.
private func checker(_ w: Int, _ h: Int, _ q: [YUVColor]) -> VideoFrame {
    let frame = VideoFrame(width: w, height: h)
    frame.fill(MixRect(x: 0, y: 0, w: w / 2, h: h / 2), with: q[0])
    frame.fill(MixRect(x: w / 2, y: 0, w: w / 2, h: h / 2), with: q[1])
    frame.fill(MixRect(x: 0, y: h / 2, w: w / 2, h: h / 2), with: q[2])
    frame.fill(MixRect(x: w / 2, y: h / 2, w: w / 2, h: h / 2), with: q[3])
    return frame
}

/// Every pixel of `out`: inside the topmost rectangle's border → that participant's
/// colour, on the border → white, in no rectangle → `outside`. Returns the mismatches.
private func mismatches(_ out: VideoFrame, _ rects: [MixRect], _ colors: [YUVColor], outside: YUVColor) -> [String] {
    var wrong: [String] = []
    for y in 0..<out.height {
        for x in 0..<out.width {
            var expected = outside
            if let i = rects.lastIndex(where: { $0.contains(x: x, y: y) }) {
                expected = rects[i].inner.contains(x: x, y: y) ? colors[i] : .white
            }
            let got = out.pixel(x: x, y: y)
            if got != expected, wrong.count < 5 { wrong.append("(\(x),\(y)) \(got) != \(expected)") }
        }
    }
    return wrong
}

@Suite struct CompositorTests {
    @Test(arguments: [MixTemplate.full, .equal, .bigSmall])
    func solidInputsFillTheirRectangles(template: MixTemplate) throws {
        let options = MixOptions(hor: .right, ver: .bottom, dir: .ver, horPad: 10, verPad: 8, borderWidth: 4, gap: 6)
        let mix = try Compositor(width: 640, height: 360, template: template, options: options, cohosts: 3)
        let colors = [red, green, blue, yellow]
        mix.update(participant: 0, frame: solid(640, 360, red))
        for i in 1...3 { mix.update(participant: i, frame: solid(320, 180, colors[i])) }
        let out = mix.compose()
        let rects = mix.currentLayout.rects
        #expect(rects.count == 4)
        #expect(mismatches(out, rects, colors, outside: .black) == [])
    }

    @Test func fourCohostsInAnEqualGridWithBorders() throws {
        let options = MixOptions(hor: .center, ver: .center, dir: .hor, horPad: 0, verPad: 0, borderWidth: 2, gap: 0)
        let mix = try Compositor(width: 640, height: 360, template: .equal, options: options, cohosts: 4)
        let colors = [red, green, blue, yellow, magenta]
        for i in 0...4 { mix.update(participant: i, frame: solid(i == 0 ? 640 : 320, i == 0 ? 360 : 180, colors[i])) }
        let out = mix.compose()
        // 3 columns of even(640/3) = 212: the grid is 636 wide, 2 px of black either side.
        #expect(mix.currentLayout.rects[0] == MixRect(x: 2, y: 0, w: 212, h: 180, border: 2))
        #expect(mismatches(out, mix.currentLayout.rects, colors, outside: .black) == [])
    }

    @Test func aspectFitLetterboxesWithBlack() throws {
        // Equal, 1 co-host: two 320x360 cells; a 16:9 host fits as 320x180 at y = 90.
        let options = MixOptions(horPad: 0, verPad: 0, borderWidth: 0, gap: 0)
        let mix = try Compositor(width: 640, height: 360, template: .equal, options: options, cohosts: 1)
        mix.setRenderMode(.aspectFit, participant: 0)
        mix.setRenderMode(.aspectFit, participant: 1)
        mix.update(participant: 0, frame: solid(640, 360, red))
        // A portrait co-host fills the cell's height: 360 × 9/16 = 202.5 → 202 wide, centred at x = 320 + 58.
        mix.update(participant: 1, frame: solid(180, 320, green))
        let out = mix.compose()
        let picture = [MixRect(x: 0, y: 90, w: 320, h: 180), MixRect(x: 378, y: 0, w: 204, h: 360)]
        let wrong = mismatches(out, picture, [red, green], outside: .black)
        #expect(wrong == [])
        #expect(out.pixel(x: 160, y: 10) == .black && out.pixel(x: 160, y: 350) == .black)
        #expect(out.pixel(x: 330, y: 180) == .black && out.pixel(x: 630, y: 180) == .black)
        #expect(out.pixel(x: 160, y: 180) == red && out.pixel(x: 480, y: 180) == green)
    }

    @Test func missingVideoShowsTheFillImageOrGrey() throws {
        let options = MixOptions(hor: .left, ver: .top, dir: .hor, horPad: 0, verPad: 0, borderWidth: 2, gap: 8)
        let mix = try Compositor(width: 640, height: 360, template: .full, options: options, cohosts: 2)
        mix.update(participant: 0, frame: solid(640, 360, red))
        mix.setFillImage(RGBAImage(width: 64, height: 48, r: 0, g: 0, b: 255, a: 255), participant: 1)
        let out = mix.compose()
        let rects = mix.currentLayout.rects
        #expect(mismatches(out, rects, [red, blue, .grey], outside: red) == [])
        // The anyRTC SDK's setVideoSubBackground: one picture for every co-host.
        mix.setCohostFillImage(RGBAImage(width: 10, height: 10, r: 0, g: 255, b: 0, a: 255))
        let second = mix.compose()
        #expect(mismatches(second, rects, [red, green, green], outside: red) == [])
    }

    @Test func translucentFillImageShowsGreyThrough() {
        let frame = Compositor.fillFrame(RGBAImage(width: 8, height: 8, r: 255, g: 255, b: 255, a: 0), width: 4, height: 4)
        #expect(frame.pixel(x: 1, y: 1) == .grey)
    }

    @Test func checkerKeepsItsGeometryUnderAspectFillCrop() throws {
        let options = MixOptions(hor: .left, ver: .top, dir: .hor, horPad: 0, verPad: 0, borderWidth: 0, gap: 8)
        let mix = try Compositor(width: 640, height: 360, template: .full, options: options, cohosts: 1)
        mix.update(participant: 0, frame: solid(640, 360, .black))
        // 4:3 into a 160x90 tile: 480x270 of the centre is kept (its offset, 45, rounds down
        // to even: 44), scaled by 1/3, so each quadrant boundary stays at the tile's centre.
        let q = [red, green, blue, yellow]
        mix.update(participant: 1, frame: checker(480, 360, q))
        let out = mix.compose()
        let tile = mix.currentLayout.rects[1]
        #expect(tile == MixRect(x: 0, y: 0, w: 160, h: 90))
        #expect(TileScaler.geometry(sourceWidth: 480, sourceHeight: 360, target: tile, mode: .aspectFill).crop
                == MixRect(x: 0, y: 44, w: 480, h: 270))
        // Quadrant centres, and points 4 pixels either side of each boundary.
        for (x, y, colour) in [(40, 22, q[0]), (120, 22, q[1]), (40, 66, q[2]), (120, 66, q[3]),
                               (76, 40, q[0]), (84, 40, q[1]), (76, 50, q[2]), (84, 50, q[3])] {
            #expect(out.pixel(x: x, y: y) == colour, "(\(x),\(y))")
        }
        // The cropped rows are gone: the tile's top row shows the checker's, not a squashed whole.
        #expect(out.pixel(x: 40, y: 0) == q[0] && out.pixel(x: 40, y: 88) == q[2])
    }

    @Test func stretchMapsWholeOntoWhole() throws {
        let options = MixOptions(hor: .left, ver: .top, dir: .hor, horPad: 0, verPad: 0, borderWidth: 0, gap: 8)
        let mix = try Compositor(width: 640, height: 360, template: .full, options: options, cohosts: 0)
        mix.setRenderMode(.stretch, participant: 0)
        let q = [red, green, blue, yellow]
        mix.update(participant: 0, frame: checker(200, 400, q))
        let out = mix.compose()
        for (x, y, colour) in [(10, 10, q[0]), (630, 10, q[1]), (10, 350, q[2]), (630, 350, q[3]),
                               (312, 172, q[0]), (328, 172, q[1]), (312, 188, q[2]), (328, 188, q[3])] {
            #expect(out.pixel(x: x, y: y) == colour, "(\(x),\(y))")
        }
    }

    @Test func cohostCountChangesReflow() throws {
        let options = MixOptions(hor: .left, ver: .top, dir: .hor, horPad: 0, verPad: 0, borderWidth: 0, gap: 8)
        let mix = try Compositor(width: 640, height: 360, template: .full, options: options, cohosts: 1)
        mix.update(participant: 0, frame: solid(640, 360, red))
        mix.update(participant: 1, frame: solid(320, 180, green))
        mix.update(participant: 2, frame: solid(320, 180, blue))
        let one = mix.compose()
        // Participant 2 is not shown while the mix holds one co-host.
        #expect(one.pixel(x: 80, y: 40) == green && one.pixel(x: 250, y: 40) == red)
        try mix.setCohostCount(2)
        let two = mix.compose()
        #expect(mismatches(two, mix.currentLayout.rects, [red, green, blue], outside: red) == [])
        #expect(two.pixel(x: 250, y: 40) == blue)
        // Co-host 1 leaves: co-host 2 moves to the first tile.
        mix.removeCohost(1)
        #expect(mix.currentLayout.cohosts == 1)
        let after = mix.compose()
        #expect(after.pixel(x: 80, y: 40) == blue && after.pixel(x: 250, y: 40) == red)
        // A count that does not fit (more than a mix holds) is refused and the layout in use stays.
        #expect(throws: MixLayout.Error.self) { try mix.setCohostCount(5) }
        #expect(mix.currentLayout.cohosts == 1)
        try mix.setLayout(template: .equal, options: options)
        let equal = mix.compose()
        #expect(equal.pixel(x: 160, y: 180) == red && equal.pixel(x: 480, y: 180) == blue)
    }

    @Test func hostAloneAtCanvasSizePassesThrough() throws {
        let mix = try Compositor(width: 640, height: 360)
        let host = solid(640, 360, red)
        host.pts = MediaTime(milliseconds: 40)
        mix.update(participant: 0, frame: host)
        #expect(mix.compose() === host)
        #expect(mix.poolAllocations == 0)
        // A host of another size is scaled into a pooled frame.
        mix.update(participant: 0, frame: solid(320, 180, green))
        let scaled = mix.compose()
        #expect(scaled !== host && scaled.pixel(x: 639, y: 359) == green)
    }

    @Test func steadyMixingAllocatesNoNewFrames() throws {
        let mix = try Compositor(width: 640, height: 360, template: .full, cohosts: 3)
        mix.update(participant: 0, frame: solid(640, 360, red))
        for i in 1...3 { mix.update(participant: i, frame: solid(320, 180, green)) }
        for _ in 0..<50 { _ = mix.compose() }
        #expect(mix.poolAllocations == 1)
    }

    @Test func composedFrameCarriesTheHostTime() throws {
        let mix = try Compositor(width: 640, height: 360, template: .full, cohosts: 1)
        let host = solid(640, 360, red)
        host.pts = MediaTime(milliseconds: 1234)
        host.captureTimeMicros = 99
        mix.update(participant: 0, frame: host)
        let out = mix.compose()
        #expect(out !== host && out.pts == MediaTime(milliseconds: 1234) && out.captureTimeMicros == 99)
    }
}

@Suite struct MixPictureTests {
    @Test func tilesHaveTheirColoursBordersAndDigits() throws {
        let layout = try MixLayout(canvasWidth: 1280, canvasHeight: 720, template: .full, cohosts: 3)
        let picture = layout.picture(scale: 0.5)
        #expect(picture.width == 640 && picture.height == 360)
        for (i, r) in layout.rects.enumerated() {
            let c = MixLayout.pictureColors[i]
            // Just inside the border (scaled by ½): the tile's colour.
            let inside = picture[r.x / 2 + r.border / 2 + 1, r.y / 2 + r.border / 2 + 1]
            #expect(inside.r == c.r && inside.g == c.g && inside.b == c.b, "tile \(i)")
            if r.border > 0 {
                let edge = picture[r.x / 2, r.y / 2 + 10]
                #expect(edge.r == 255 && edge.g == 255 && edge.b == 255, "tile \(i) border")
            }
            // The digit is white, around the centre.
            var white = 0
            for y in (r.y + r.h / 4) / 2..<(r.maxY - r.h / 4) / 2 {
                for x in (r.x + r.w / 4) / 2..<(r.maxX - r.w / 4) / 2 where picture[x, y].r == 255 && picture[x, y].b == 255 {
                    white += 1
                }
            }
            #expect(white > 20, "tile \(i) digit")
        }
    }
}
