import Foundation
import LiveCore
import Testing
@testable import LiveCapture

@Suite struct FileSourceTests {
    /// A 30-frame 320x240 testsrc2 clip at 25 fps, made by ffmpeg in a fresh directory.
    static func makeClip() throws -> (path: String, directory: URL) {
        let fixture = try MediaFixture("filesource")
        let path = try fixture.make("clip.mp4", ["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25",
                                                 "-frames:v", "30", "-pix_fmt", "yuv420p"])
        return (path, fixture.directory)
    }

    @Test func loopsScaledWithIncreasingPts() throws {
        let clip = try Self.makeClip()
        defer { try? FileManager.default.removeItem(at: clip.directory) }
        let source = try FileSource(path: clip.path, width: 640, height: 480, fps: 25, realTime: false, loop: true)
        #expect(source.fileWidth == 320 && source.fileHeight == 240)
        #expect(source.fileFPS == 25)
        try source.start()
        var pts: [MediaTime] = []
        var firstPicture: [UInt8] = []
        var loopedPicture: [UInt8] = []
        for n in 0..<75 {
            let frame = try #require(try source.nextFrame(), "frame \(n)")
            #expect(frame.width == 640 && frame.height == 480)
            pts.append(frame.pts)
            if n == 0 { firstPicture = planeBytes(frame) }
            if n == 30 { loopedPicture = planeBytes(frame) }
        }
        #expect(pts.count == 75)
        #expect(zip(pts, pts.dropFirst()).allSatisfy { $0 < $1 })
        #expect(pts[74] == MediaTime(frame: 74, fps: 25))
        // Frame 30 is the clip's first frame again.
        #expect(firstPicture == loopedPicture)
        #expect(firstPicture != [])
    }

    @Test func endsWithoutLoopAndLetterboxes() throws {
        let clip = try Self.makeClip()
        defer { try? FileManager.default.removeItem(at: clip.directory) }
        let source = try FileSource(path: clip.path, width: 640, height: 360, fps: 25, realTime: false, loop: false)
        try source.start()
        var count = 0
        var lastFrame: VideoFrame?
        while let frame = try source.nextFrame() {
            count += 1
            lastFrame = frame
            #expect(count <= 30)
            if count > 30 { break }
        }
        #expect(count == 30)
        let frame = try #require(lastFrame)
        // 4:3 into 16:9 with aspect-fit: black bars left and right, picture in the middle.
        #expect(frame.pixel(x: 2, y: 180) == YUVColor(y: 16, u: 128, v: 128))
        #expect(frame.pixel(x: 636, y: 180) == YUVColor(y: 16, u: 128, v: 128))
        #expect(frame.sample(plane: 0, x: 320, y: 180) != 16 || frame.sample(plane: 0, x: 300, y: 100) != 16)
    }

    @Test func higherRateRepeatsFramesOnTheFileClock() throws {
        let clip = try Self.makeClip()
        defer { try? FileManager.default.removeItem(at: clip.directory) }
        // 30 file frames at 25 fps last 1.2 s: 36 frames at 30 fps.
        let source = try FileSource(path: clip.path, width: 320, height: 240, fps: 30, realTime: false, loop: false)
        try source.start()
        var count = 0
        while try source.nextFrame() != nil, count < 100 { count += 1 }
        #expect(count == 36)
    }

    @Test func missingFileIsInvalidParams() {
        let error = #expect(throws: LiveError.self) {
            try SourceSpec(parsing: "file:/nonexistent/clip.mp4").makeSource(width: 640, height: 480, fps: 25)
        }
        #expect(error?.code == .invalidParams)
        #expect(error?.detail.contains("/nonexistent/clip.mp4") == true)
    }
}
