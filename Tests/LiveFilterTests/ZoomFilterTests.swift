import LiveCore
import Testing
@testable import LiveFilter

@Suite struct ZoomFilterTests {
    static let quadrantColors = [
        YUVColor(r: 255, g: 0, b: 0), YUVColor(r: 0, g: 255, b: 0),
        YUVColor(r: 0, g: 0, b: 255), YUVColor(r: 255, g: 255, b: 0),
    ]

    /// Four flat quadrants: top-left, top-right, bottom-left, bottom-right.
    static func quadrants(width: Int, height: Int) -> VideoFrame {
        let frame = VideoFrame(width: width, height: height)
        let w = width / 2, h = height / 2
        for (i, color) in quadrantColors.enumerated() {
            FrameFixtures.fill(frame, x: (i % 2) * w, y: (i / 2) * h, width: w, height: h, color: color)
        }
        return frame
    }

    @Test(arguments: [(640, 360), (1280, 720), (64, 48)])
    func zoomTwoKeepsQuadrantColoursAtTheirCentres(width: Int, height: Int) {
        let frame = ZoomFilterTests.quadrants(width: width, height: height)
        frame.pts = MediaTime(milliseconds: 40)
        frame.captureTimeMicros = 1234
        let zoom = ZoomFilter(zoom: 2.0)
        let out = zoom.process(frame)
        #expect(out !== frame)
        #expect(out.width == width && out.height == height)
        for (i, color) in ZoomFilterTests.quadrantColors.enumerated() {
            let cx = width / 4 + (i % 2) * width / 2, cy = height / 4 + (i / 2) * height / 2
            #expect(out.pixel(x: cx, y: cy) == color, "quadrant \(i) at (\(cx), \(cy))")
        }
        // The crop is the middle half: the output's corner shows the colour of the
        // input's quadrant, and the centre line is a blend of neighbours.
        #expect(out.pixel(x: 0, y: 0) == ZoomFilterTests.quadrantColors[0])
        #expect(out.pixel(x: width - 1, y: height - 1) == ZoomFilterTests.quadrantColors[3])
        #expect(out.pts == MediaTime(milliseconds: 40))
        #expect(out.captureTimeMicros == 1234)
    }

    @Test func zoomTwoMagnifiesTheCentre() {
        // A 4-pixel square at the centre of a black frame becomes 8 pixels wide.
        let frame = VideoFrame(width: 64, height: 64)
        frame.fill(.black)
        FrameFixtures.fill(frame, x: 30, y: 30, width: 4, height: 4, color: .white)
        let out = ZoomFilter(zoom: 2.0).process(frame)
        let row = (0..<64).map { out.sample(plane: 0, x: $0, y: 32) }
        let bright = row.filter { $0 > (YUVColor.white.y / 2 + YUVColor.black.y / 2) }.count
        #expect(bright == 8)
    }

    @Test func zoomOneIsIdentity() {
        let frame = FrameFixtures.random(width: 96, height: 54, seed: 7)
        let original = FrameFixtures.copy(frame)
        let out = ZoomFilter(zoom: 1.0).process(frame)
        #expect(out === frame)
        #expect(FrameFixtures.samplesEqual(out, original))
    }

    @Test func setterClampsAndValidationThrows() throws {
        let zoom = ZoomFilter()
        #expect(zoom.zoom == 1.0)
        zoom.zoom = 5
        #expect(zoom.zoom == 3.0)
        zoom.zoom = 0.5
        #expect(zoom.zoom == 1.0)
        zoom.zoom = 2.25
        #expect(zoom.zoom == 2.25)
        #expect(try ZoomFilter.validate(1.5) == 1.5)
        #expect(throws: LiveError.self) { try ZoomFilter.validate(3.5) }
        #expect(throws: LiveError.self) { try ZoomFilter.validate(.nan) }
        let error = #expect(throws: LiveError.self) { try ZoomFilter.validate(0.9) }
        #expect(error?.code == .invalidParams)
        #expect(error?.description.contains("setCameraZoom") == true)
    }

    @Test func reusesItsFramesAcrossZoomChanges() {
        let zoom = ZoomFilter(zoom: 1.5)
        let frame = ZoomFilterTests.quadrants(width: 64, height: 48)
        var held: [VideoFrame] = []
        for i in 0..<20 {
            zoom.zoom = i % 2 == 0 ? 1.5 : 2.5
            let out = zoom.process(frame)
            // A consumer holding two frames at a time (as a queue of depth 2 would).
            held.append(out)
            if held.count > 2 { held.removeFirst() }
        }
        #expect(zoom.frameAllocations == 3)
    }
}
