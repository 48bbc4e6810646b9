import LiveCore

/// A moving test pattern in the spirit of ffmpeg's `testsrc2`: colour bars scrolling
/// left, a luma/chroma ramp scrolling right, a bouncing square and a large decimal
/// frame counter drawn with a seven-segment font.
///
/// The picture is a pure function of the frame index (tests and latency probes rely
/// on it). The scrolling bands are precomputed as rows two periods wide, so a frame
/// is a row copy per line plus a few rectangles.
///
/// Confined to the capture thread, like every `VideoSource`.
public final class TestPatternSource: VideoSource {
    public let width: Int
    public let height: Int
    public let fps: Int
    public let realTime: Bool

    private let pool: FramePool
    private var pacer: FramePacer
    private var index: Int64 = 0
    private let layout: Layout
    /// Bars band and ramp band, each: Y row of 2·width, U and V rows of width (two chroma periods).
    private let barsY, barsU, barsV, rampY, rampU, rampV: UnsafeMutablePointer<UInt8>

    /// `realTime`: deliver `fps` frames per second from `start()`; false: as fast as
    /// they are asked for (benchmarks).
    public init(width: Int, height: Int, fps: Int, realTime: Bool = true) throws {
        try SourceSpec.checkFormat(width: width, height: height, fps: fps)
        self.width = width
        self.height = height
        self.fps = fps
        self.realTime = realTime
        pool = FramePool(width: width, height: height)
        pacer = FramePacer(fps: fps)
        layout = Layout(width: width, height: height)

        func row(_ count: Int) -> UnsafeMutablePointer<UInt8> { .allocate(capacity: count) }
        barsY = row(2 * width); barsU = row(width); barsV = row(width)
        rampY = row(2 * width); rampU = row(width); rampV = row(width)

        // The eight SMPTE-order bars, one period across the width.
        let bars: [YUVColor] = [.white, YUVColor(r: 255, g: 255, b: 0), YUVColor(r: 0, g: 255, b: 255),
                                YUVColor(r: 0, g: 255, b: 0), YUVColor(r: 255, g: 0, b: 255),
                                YUVColor(r: 255, g: 0, b: 0), YUVColor(r: 0, g: 0, b: 255), .black]
        let cw = width / 2
        for x in 0..<width {
            let bar = bars[min(7, x * 8 / width)]
            barsY[x] = bar.y; barsY[x + width] = bar.y
            // A ramp up and back down (no seam where the period wraps), chroma turning through the hues.
            let ramp = UInt8(16 + 219 * TestPatternSource.triangle(x, period: width) / 1024)
            rampY[x] = ramp; rampY[x + width] = ramp
        }
        for cx in 0..<cw {
            let bar = bars[min(7, cx * 2 * 8 / width)]
            barsU[cx] = bar.u; barsU[cx + cw] = bar.u
            barsV[cx] = bar.v; barsV[cx + cw] = bar.v
            let u = UInt8(16 + 224 * TestPatternSource.triangle(cx, period: cw) / 1024)
            rampU[cx] = u; rampU[cx + cw] = u
            rampV[cx] = UInt8(256 - Int(u)); rampV[cx + cw] = UInt8(256 - Int(u))
        }
    }

    deinit {
        for p in [barsY, barsU, barsV, rampY, rampU, rampV] { p.deallocate() }
    }

    public var name: String { "test pattern \(width)x\(height)@\(fps)" }

    public func start() throws {
        index = 0
        pacer.start()
    }

    public func nextFrame() throws -> VideoFrame? {
        if realTime { pacer.wait(forFrame: index) }
        let frame = pool.acquire()
        render(index: index, into: frame)
        frame.pts = MediaTime(frame: index, fps: fps)
        frame.captureTimeMicros = Clock.wallMicros()
        index += 1
        return frame
    }

    public func stop() {}

    /// Draws frame `index` of the pattern into `frame` (which must be width×height).
    public func render(index: Int64, into frame: VideoFrame) {
        precondition(frame.width == width && frame.height == height, "test pattern frame size mismatch")
        let w = width, cw = width / 2
        // Scroll by an even number of pixels so luma and chroma move together.
        let offset = Int((index * Int64(layout.scrollStep)) % Int64(w)) & ~1
        let rampOffset = (w - offset) % w
        let y = frame.y, u = frame.u, v = frame.v
        let ys = frame.stride(0), us = frame.stride(1), vs = frame.stride(2)
        for row in 0..<height {
            let src = row < layout.barsHeight ? barsY + offset : rampY + rampOffset
            (y + row * ys).update(from: src, count: w)
        }
        for crow in 0..<(height / 2) {
            let inBars = crow * 2 < layout.barsHeight
            let co = (inBars ? offset : rampOffset) / 2
            (u + crow * us).update(from: (inBars ? barsU : rampU) + co, count: cw)
            (v + crow * vs).update(from: (inBars ? barsV : rampV) + co, count: cw)
        }

        // The square bounces between the edges along a triangle wave.
        let s = layout.square
        let spanX = max(2, width - s), spanY = max(2, height - s)
        let tx = Int((index * Int64(layout.scrollStep)) % Int64(2 * spanX))
        let ty = Int((index * Int64(layout.scrollStep / 2 + 2)) % Int64(2 * spanY))
        let sx = (tx < spanX ? tx : 2 * spanX - tx) & ~1
        let sy = (ty < spanY ? ty : 2 * spanY - ty) & ~1
        fill(frame, x: sx, y: sy, w: s, h: s, color: TestPatternSource.squareColor)

        // The counter sits on a black box of fixed size so only its digits change.
        let box = layout.counterBox
        fill(frame, x: box.x, y: box.y, w: box.width, h: box.height, color: .black)
        var number = Int(index % Int64(TestPatternSource.counterModulus))
        var digits = 1
        var probe = number
        while probe >= 10 { probe /= 10; digits += 1 }
        let d = layout.digit
        // Right-aligned, so the units digit stays put as the number grows.
        var dx = box.x + box.width - d.gap - d.width
        for _ in 0..<digits {
            drawDigit(number % 10, frame: frame, x: dx, y: box.y + d.gap)
            number /= 10
            dx -= d.width + d.gap
        }

        // The marker patch: white on the frame of every whole second, black otherwise.
        let marker = layout.markerBox
        fill(frame, x: marker.x, y: marker.y, w: marker.size, h: marker.size,
             color: Self.isMarkerFrame(index, fps: fps) ? .white : .black)
    }

    /// Whether frame `index` is a marked one: the first of every second of the capture
    /// clock, captured at the instant `ToneGenerator` starts its marker beep.
    public static func isMarkerFrame(_ index: Int64, fps: Int) -> Bool { index % Int64(fps) == 0 }

    /// Whether `frame` (a test pattern picture at its own size, decoded or not) shows the
    /// marker lit: the mean luma of the patch's inner half is over mid-grey. nil when the
    /// frame is too small to hold the patch.
    public static func markerLit(in frame: VideoFrame) -> Bool? {
        let marker = Layout(width: frame.width, height: frame.height).markerBox
        let inset = marker.size / 4
        let x0 = marker.x + inset, y0 = marker.y + inset, side = marker.size - 2 * inset
        guard side > 0, x0 + side <= frame.width, y0 + side <= frame.height else { return nil }
        var sum = 0
        for row in y0..<(y0 + side) {
            let line = frame.y + row * frame.stride(0)
            for column in x0..<(x0 + side) { sum += Int(line[column]) }
        }
        return sum / (side * side) > 128
    }

    /// 0 at the ends of a period, 1024 in the middle, linear in between.
    static func triangle(_ x: Int, period: Int) -> Int {
        let half = max(1, period / 2)
        return (x < half ? x : max(0, period - x)) * 1024 / half
    }

    static let squareColor = YUVColor(r: 255, g: 128, b: 0)
    /// The counter shows the index modulo this (six digits: over nine hours at 30 fps).
    static let counterModulus = 1_000_000

    /// Where the counter's box is, for tests: frames with different indices differ inside it.
    static func counterBox(width: Int, height: Int) -> (x: Int, y: Int, width: Int, height: Int) {
        Layout(width: width, height: height).counterBox
    }

    /// Segments a…g of each digit, bit 0 = a.
    private static let segments: [UInt8] = [
        0b0111111, 0b0000110, 0b1011011, 0b1001111, 0b1100110,
        0b1101101, 0b1111101, 0b0000111, 0b1111111, 0b1101111,
    ]

    private func drawDigit(_ digit: Int, frame: VideoFrame, x: Int, y: Int) {
        let d = layout.digit, t = d.thickness, w = d.width, h = d.height, half = h / 2
        let rects: [(Int, Int, Int, Int)] = [
            (t, 0, w - 2 * t, t),                 // a: top
            (w - t, 0, t, half + t / 2),          // b: upper right
            (w - t, half - t / 2, t, h - half + t / 2), // c: lower right
            (t, h - t, w - 2 * t, t),             // d: bottom
            (0, half - t / 2, t, h - half + t / 2), // e: lower left
            (0, 0, t, half + t / 2),              // f: upper left
            (t, half - t / 2, w - 2 * t, t),      // g: middle
        ]
        let mask = TestPatternSource.segments[digit]
        for (bit, r) in rects.enumerated() where mask & (1 << bit) != 0 {
            fillLuma(frame, x: x + r.0, y: y + r.1, w: r.2, h: r.3, value: YUVColor.white.y)
        }
    }

    /// White segments on the black box share its neutral chroma: only luma is drawn.
    private func fillLuma(_ frame: VideoFrame, x: Int, y: Int, w: Int, h: Int, value: UInt8) {
        let x0 = max(0, x), y0 = max(0, y), x1 = min(width, x + w), y1 = min(height, y + h)
        guard x1 > x0, y1 > y0 else { return }
        let base = frame.y, s = frame.stride(0)
        for row in y0..<y1 { (base + row * s + x0).update(repeating: value, count: x1 - x0) }
    }

    /// Fills a rectangle whose corners are even (so it covers whole chroma samples).
    private func fill(_ frame: VideoFrame, x: Int, y: Int, w: Int, h: Int, color: YUVColor) {
        let x0 = max(0, x), y0 = max(0, y), x1 = min(width, x + w), y1 = min(height, y + h)
        guard x1 > x0, y1 > y0 else { return }
        fillLuma(frame, x: x0, y: y0, w: x1 - x0, h: y1 - y0, value: color.y)
        let u = frame.u, v = frame.v, us = frame.stride(1), vs = frame.stride(2)
        for crow in (y0 / 2)..<((y1 + 1) / 2) {
            (u + crow * us + x0 / 2).update(repeating: color.u, count: (x1 + 1) / 2 - x0 / 2)
            (v + crow * vs + x0 / 2).update(repeating: color.v, count: (x1 + 1) / 2 - x0 / 2)
        }
    }

    /// Sizes derived from the frame size once.
    private struct Layout {
        struct Digit { var width: Int, height: Int, thickness: Int, gap: Int }
        let barsHeight: Int
        let scrollStep: Int
        let square: Int
        let digit: Digit
        let counterBox: (x: Int, y: Int, width: Int, height: Int)
        /// A square as high as the counter's box, just right of it.
        let markerBox: (x: Int, y: Int, size: Int)

        init(width: Int, height: Int) {
            func even(_ v: Int) -> Int { v & ~1 }
            barsHeight = even(height * 2 / 3)
            scrollStep = max(2, even(width / 160))
            square = max(2, even(height / 6))
            // Digits about an eighth of the picture high.
            let dh = max(10, even(height / 8))
            let dw = max(6, even(dh * 11 / 20))
            let thickness = max(2, even(dh / 7))
            let gap = max(2, even(dh / 4))
            digit = Digit(width: dw, height: dh, thickness: thickness, gap: gap)
            let boxWidth = 6 * (dw + gap) + gap
            let boxHeight = dh + 2 * gap
            counterBox = (x: even(width / 16), y: even(height / 16), width: boxWidth, height: boxHeight)
            markerBox = (x: counterBox.x + boxWidth + gap, y: counterBox.y, size: boxHeight)
        }
    }
}
