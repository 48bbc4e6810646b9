import LiveCore
import Testing
@testable import LiveCodec

@Suite struct ScalerTests {
    static func randomFrame(width: Int, height: Int, seed: UInt32) -> VideoFrame {
        let frame = VideoFrame(width: width, height: height)
        var state = seed
        for p in 0..<3 {
            for row in 0..<frame.planeHeight(p) {
                for col in 0..<frame.planeWidth(p) {
                    state = state &* 1_664_525 &+ 1_013_904_223
                    frame.plane(p)[row * frame.stride(p) + col] = UInt8(truncatingIfNeeded: state >> 24)
                }
            }
        }
        return frame
    }

    static func planesEqual(_ a: VideoFrame, _ b: VideoFrame) -> Bool {
        for p in 0..<3 {
            for row in 0..<a.planeHeight(p) {
                for col in 0..<a.planeWidth(p)
                where a.sample(plane: p, x: col, y: row) != b.sample(plane: p, x: col, y: row) {
                    return false
                }
            }
        }
        return true
    }

    @Test(arguments: RenderMode.allCases)
    func sameSizeI420IsCopiedExactly(mode: RenderMode) throws {
        let source = Self.randomFrame(width: 322, height: 182, seed: 7)
        let destination = VideoFrame(width: 322, height: 182)
        try Scaler().scale(source, into: destination, mode: mode)
        #expect(Self.planesEqual(source, destination))
    }

    @Test func flatRGBAColoursSurviveARoundTripThroughI420() throws {
        let scaler = Scaler()
        let colours: [(UInt8, UInt8, UInt8)] = [(0, 0, 0), (255, 255, 255), (255, 0, 0), (0, 255, 0), (0, 0, 255),
                                                (128, 128, 128), (200, 120, 40), (30, 180, 220)]
        let frame = VideoFrame(width: 64, height: 48)
        for (r, g, b) in colours {
            let image = RGBAImage(width: 64, height: 48, r: r, g: g, b: b, a: 255)
            try scaler.frame(from: image, into: frame)
            let expected = YUVColor(r: r, g: g, b: b)
            let got = frame.pixel(x: 20, y: 20)
            #expect(abs(Int(got.y) - Int(expected.y)) <= 1 && abs(Int(got.u) - Int(expected.u)) <= 1
                    && abs(Int(got.v) - Int(expected.v)) <= 1, "\(got) vs \(expected) for \((r, g, b))")
            let back = try scaler.rgbaImage(from: frame)
            #expect(back.width == 64 && back.height == 48)
            var worst = 0
            for i in stride(from: 0, to: back.pixels.count, by: 4) {
                worst = max(worst, abs(Int(back.pixels[i]) - Int(r)), abs(Int(back.pixels[i + 1]) - Int(g)),
                            abs(Int(back.pixels[i + 2]) - Int(b)))
                #expect(back.pixels[i + 3] == 255)
            }
            #expect(worst <= 3, "RGB (\(r),\(g),\(b)) came back \(worst) off")
        }
        // Equal contexts are reused, not recreated.
        #expect(scaler.contextCount == 2)
    }

    @Test func yuyvAndNV12ConvertToKnownI420Values() throws {
        let width = 16, height = 8
        // YUYV: Y varies per pixel; U and V per 2x2 block so any 4:2:2 → 4:2:0 rule agrees.
        var yuyv = [UInt8](repeating: 0, count: width * 2 * height)
        var nv12 = [UInt8](repeating: 0, count: width * height * 3 / 2)
        func y(_ x: Int, _ row: Int) -> UInt8 { UInt8(16 + x * 10 + row) }
        func u(_ x: Int, _ row: Int) -> UInt8 { UInt8(60 + (x / 2) * 9 + row / 2) }
        func v(_ x: Int, _ row: Int) -> UInt8 { UInt8(200 - (x / 2) * 7 - row / 2) }
        for row in 0..<height {
            for x in stride(from: 0, to: width, by: 2) {
                let i = row * width * 2 + x * 2
                yuyv[i] = y(x, row); yuyv[i + 1] = u(x, row); yuyv[i + 2] = y(x + 1, row); yuyv[i + 3] = v(x, row)
            }
            for x in 0..<width { nv12[row * width + x] = y(x, row) }
        }
        for row in 0..<(height / 2) {
            for x in stride(from: 0, to: width, by: 2) {
                nv12[width * height + row * width + x] = u(x, row * 2)
                nv12[width * height + row * width + x + 1] = v(x, row * 2)
            }
        }
        let scaler = Scaler()
        let fromYUYV = VideoFrame(width: width, height: height)
        try yuyv.withUnsafeBufferPointer {
            try scaler.scale(.packed(.yuyv, data: $0.baseAddress!, stride: width * 2, width: width, height: height),
                             into: fromYUYV, mode: .stretch)
        }
        let fromNV12 = VideoFrame(width: width, height: height)
        nv12.withUnsafeBufferPointer {
            let base = $0.baseAddress!
            try? scaler.scale(.nv12(y: base, yStride: width, uv: base + width * height, uvStride: width,
                                    width: width, height: height), into: fromNV12, mode: .stretch)
        }
        for frame in [fromYUYV, fromNV12] {
            for row in 0..<height {
                for x in 0..<width {
                    #expect(frame.pixel(x: x, y: row) == YUVColor(y: y(x, row), u: u(x, row), v: v(x, row)))
                }
            }
        }
    }

    @Test func aspectFitCentresThePictureBetweenBlackBars() throws {
        let source = VideoFrame(width: 320, height: 240)
        source.fill(YUVColor(y: 200, u: 90, v: 170))
        let destination = VideoFrame(width: 640, height: 240)
        destination.fill(YUVColor(y: 50, u: 50, v: 50))
        try Scaler().scale(source, into: destination, mode: .aspectFit)
        let black = YUVColor(y: 16, u: 128, v: 128)
        for row in stride(from: 0, to: 240, by: 7) {
            for x in 0..<640 {
                let expected = x < 160 || x >= 480 ? black : YUVColor(y: 200, u: 90, v: 170)
                #expect(destination.pixel(x: x, y: row) == expected, "pixel (\(x), \(row))")
            }
        }
        // Taller than the destination: bars above and below.
        let tall = VideoFrame(width: 100, height: 400)
        tall.fill(.white)
        let wide = VideoFrame(width: 400, height: 200)
        try Scaler().scale(tall, into: wide, mode: .aspectFit)
        #expect(Scaler.placement(sourceWidth: 100, sourceHeight: 400, rect: .init(x: 0, y: 0, width: 400, height: 200),
                                 mode: .aspectFit).inner == .init(x: 174, y: 0, width: 50, height: 200))
        #expect(wide.pixel(x: 173, y: 100) == black && wide.pixel(x: 174, y: 100) == .white
                && wide.pixel(x: 223, y: 100) == .white
                && wide.pixel(x: 224, y: 100) == black)
    }

    @Test func aspectFillCropsALeftRightSplitSymmetrically() throws {
        let red = YUVColor(r: 255, g: 0, b: 0), blue = YUVColor(r: 0, g: 0, b: 255)
        let source = VideoFrame(width: 640, height: 360)
        Scaler.fill(source, rect: .init(x: 0, y: 0, width: 320, height: 360), color: red)
        Scaler.fill(source, rect: .init(x: 320, y: 0, width: 320, height: 360), color: blue)
        let destination = VideoFrame(width: 360, height: 360)
        try Scaler().scale(source, into: destination, mode: .aspectFill)
        var redColumns = 0, blueColumns = 0
        for x in 0..<360 {
            let y = Int(destination.sample(plane: 0, x: x, y: 180))
            if abs(y - Int(red.y)) <= 2 { redColumns += 1 } else if abs(y - Int(blue.y)) <= 2 { blueColumns += 1 }
        }
        #expect(redColumns >= 176 && blueColumns >= 176)
        #expect(abs(redColumns - blueColumns) <= 2)
        #expect(Scaler.placement(sourceWidth: 640, sourceHeight: 360, rect: .init(x: 0, y: 0, width: 360, height: 360),
                                 mode: .aspectFill).crop == .init(x: 140, y: 0, width: 360, height: 360))
    }

    @Test func scalesIntoASubRectangleOnly() throws {
        let source = VideoFrame(width: 320, height: 180)
        source.fill(.white)
        let canvas = VideoFrame(width: 640, height: 360)
        canvas.fill(.black)
        let rect = Scaler.Rect(x: 100, y: 50, width: 200, height: 100)
        let scaler = Scaler()
        try scaler.scale(source, into: canvas, rect: rect, mode: .aspectFill)
        for row in stride(from: 0, to: 360, by: 5) {
            for x in stride(from: 0, to: 640, by: 3) {
                let inside = x >= 100 && x < 300 && row >= 50 && row < 150
                #expect(canvas.pixel(x: x, y: row) == (inside ? .white : .black), "pixel (\(x), \(row))")
            }
        }
        #expect(throws: Scaler.ScalerError.self) {
            try scaler.scale(source, into: canvas, rect: .init(x: 1, y: 0, width: 100, height: 100), mode: .stretch)
        }
        #expect(throws: Scaler.ScalerError.self) {
            try scaler.scale(source, into: canvas, rect: .init(x: 600, y: 0, width: 100, height: 100), mode: .stretch)
        }
    }

    @Test func neighboursOfANarrowTileStayUntouched() throws {
        // 50 is not a multiple of swscale's vector width: its writes must not spill over.
        let source = VideoFrame(width: 100, height: 400)
        source.fill(.white)
        let canvas = VideoFrame(width: 400, height: 200)
        canvas.fill(YUVColor(y: 1, u: 2, v: 3))
        try Scaler().scale(source, into: canvas, rect: .init(x: 174, y: 0, width: 50, height: 200), mode: .stretch)
        for row in stride(from: 0, to: 200, by: 9) {
            #expect(canvas.pixel(x: 173, y: row) == YUVColor(y: 1, u: 2, v: 3))
            #expect(canvas.pixel(x: 174, y: row) == .white && canvas.pixel(x: 223, y: row) == .white)
            #expect(canvas.pixel(x: 224, y: row) == YUVColor(y: 1, u: 2, v: 3))
        }
    }

    @Test func contextsAreCachedPerGeometry() throws {
        let scaler = Scaler(cacheCapacity: 2)
        let source = VideoFrame(width: 320, height: 240)
        let a = VideoFrame(width: 160, height: 120), b = VideoFrame(width: 96, height: 64), c = VideoFrame(width: 64, height: 64)
        for _ in 0..<3 {
            try scaler.scale(source, into: a, mode: .stretch)
            try scaler.scale(source, into: b, mode: .stretch)
        }
        #expect(scaler.contextCount == 2)
        try scaler.scale(source, into: c, mode: .stretch)
        #expect(scaler.contextCount == 2)
    }
}
