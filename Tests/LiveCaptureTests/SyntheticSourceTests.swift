import LiveCore
import Testing
@testable import LiveCapture

/// Every sample of the planes' visible area, for comparing frames.
func planeBytes(_ frame: VideoFrame) -> [UInt8] {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(frame.width * frame.height * 3 / 2)
    for p in 0..<3 {
        for row in 0..<frame.planeHeight(p) {
            let base = frame.plane(p) + row * frame.stride(p)
            bytes.append(contentsOf: UnsafeBufferPointer(start: base, count: frame.planeWidth(p)))
        }
    }
    return bytes
}

/// The luma samples inside a rectangle.
func lumaBytes(_ frame: VideoFrame, x: Int, y: Int, width: Int, height: Int) -> [UInt8] {
    var bytes: [UInt8] = []
    for row in y..<(y + height) {
        for col in x..<(x + width) { bytes.append(frame.sample(plane: 0, x: col, y: row)) }
    }
    return bytes
}

@Suite struct TestPatternSourceTests {
    @Test func sameIndexGivesTheSamePicture() throws {
        let a = try TestPatternSource(width: 320, height: 180, fps: 30, realTime: false)
        let b = try TestPatternSource(width: 320, height: 180, fps: 30, realTime: false)
        let fa = VideoFrame(width: 320, height: 180), fb = VideoFrame(width: 320, height: 180)
        // Dirty one of them first: rendering must not depend on what a recycled frame held.
        fb.fill(.white)
        a.render(index: 37, into: fa)
        b.render(index: 37, into: fb)
        #expect(planeBytes(fa) == planeBytes(fb))
    }

    @Test func consecutiveFramesDifferAndAreStamped() throws {
        let source = try TestPatternSource(width: 320, height: 180, fps: 25, realTime: false)
        try source.start()
        let first = try #require(try source.nextFrame())
        let firstBytes = planeBytes(first)
        let second = try #require(try source.nextFrame())
        #expect(first !== second)
        #expect(firstBytes != planeBytes(second))
        #expect(first.pts == .zero)
        #expect(second.pts == MediaTime(frame: 1, fps: 25))
        #expect(second.width == 320 && second.height == 180)
        #expect(second.captureTimeMicros > 0)
    }

    @Test func counterRegionShowsTheIndex() throws {
        let source = try TestPatternSource(width: 640, height: 360, fps: 30, realTime: false)
        let box = TestPatternSource.counterBox(width: 640, height: 360)
        #expect(box.height >= 360 / 8)
        let frame = VideoFrame(width: 640, height: 360)
        func counter(_ index: Int64) -> [UInt8] {
            source.render(index: index, into: frame)
            return lumaBytes(frame, x: box.x, y: box.y, width: box.width, height: box.height)
        }
        let c7 = counter(7), c8 = counter(8), c7again = counter(7)
        #expect(c7 != c8)
        #expect(c7 == c7again)
        // The digits are white on black: both levels are present inside the box.
        #expect(c7.contains(YUVColor.white.y) && c7.contains(YUVColor.black.y))
        // 1 lights two segments, 8 all seven: more white pixels for 8.
        let white1 = counter(1).filter { $0 == YUVColor.white.y }.count
        let white8 = c8.filter { $0 == YUVColor.white.y }.count
        #expect(white8 > 2 * white1)
    }

    @Test func realTimePacingHoldsTheRate() throws {
        let source = try TestPatternSource(width: 64, height: 48, fps: 50, realTime: true)
        try source.start()
        let began = Clock.monotonicMicros()
        for _ in 0..<10 { _ = try source.nextFrame() }
        let elapsed = Clock.monotonicMicros() - began
        // Frame 9 is due 180 ms after the start; allow generous slack for a busy machine.
        #expect(elapsed >= 150_000)
        #expect(elapsed < 2_000_000)
    }

    @Test func unpacedSourceDoesNotWait() throws {
        let source = try TestPatternSource(width: 64, height: 48, fps: 1, realTime: false)
        try source.start()
        let began = Clock.monotonicMicros()
        for _ in 0..<5 { _ = try source.nextFrame() }
        #expect(Clock.monotonicMicros() - began < 1_000_000)
    }
}

@Suite struct ColorSourceTests {
    @Test func framesAreExactlyTheColour() throws {
        let colour = YUVColor(r: 255, g: 165, b: 0)
        let source = try ColorSource(color: colour, width: 96, height: 54, fps: 30, realTime: false)
        try source.start()
        let frame = try #require(try source.nextFrame())
        #expect(frame.width == 96 && frame.height == 54)
        for p in 0..<3 {
            let expected = p == 0 ? colour.y : p == 1 ? colour.u : colour.v
            let samples = (0..<frame.planeHeight(p)).flatMap { row in
                (0..<frame.planeWidth(p)).map { frame.sample(plane: p, x: $0, y: row) }
            }
            #expect(samples.allSatisfy { $0 == expected }, "plane \(p)")
        }
        let next = try #require(try source.nextFrame())
        #expect(next.pts == MediaTime(frame: 1, fps: 30))
    }

    @Test func recycledFramesAreRepainted() throws {
        let source = try ColorSource(color: .grey, width: 32, height: 32, fps: 30, realTime: false)
        try source.start()
        // Each frame is let go after being painted over, so the pool hands it out again.
        for _ in 0..<3 {
            let frame = try #require(try source.nextFrame())
            #expect(frame.pixel(x: 5, y: 5) == .grey)
            frame.fill(.white)
        }
    }
}
