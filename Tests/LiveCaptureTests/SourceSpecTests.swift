import LiveCore
import Testing
@testable import LiveCapture

@Suite struct SourceSpecTests {
    @Test(arguments: [
        ("test", SourceSpec.testPattern),
        ("color:red", .color(YUVColor(r: 255, g: 0, b: 0))),
        ("color:#00FF80", .color(YUVColor(r: 0, g: 255, b: 128))),
        ("colour:Navy", .color(YUVColor(r: 0, g: 0, b: 128))),
        ("file:/tmp/clip.mp4", .file(path: "/tmp/clip.mp4")),
        ("file:relative/clip with space.mp4", .file(path: "relative/clip with space.mp4")),
        ("v4l2:/dev/video0", .camera(device: "/dev/video0")),
        ("/dev/video2", .camera(device: "/dev/video2")),
    ])
    func parsesGoodSpecs(text: String, expected: SourceSpec) throws {
        #expect(try SourceSpec(parsing: text) == expected)
    }

    @Test(arguments: ["", "tst", "color:", "color:chartreusey", "color:#12345", "color:#GG0000",
                      "file:", "v4l2:", "v4l2:video0", "rtmp://host/live", "webcam:/dev/video0"])
    func rejectsBadSpecs(text: String) {
        let error = #expect(throws: LiveError.self) { try SourceSpec(parsing: text) }
        #expect(error?.code == .invalidParams)
        #expect(error?.detail.contains("invalid source") == true)
    }

    @Test func makesSourcesOfTheRequestedFormat() throws {
        let source = try SourceSpec.testPattern.makeSource(width: 320, height: 240, fps: 25, realTime: false)
        #expect(source.width == 320 && source.height == 240 && source.fps == 25)
        #expect(source is TestPatternSource)
        let colour = try SourceSpec(parsing: "color:blue").makeSource(width: 64, height: 32, fps: 10, realTime: false)
        #expect(colour is ColorSource)
    }

    @Test(arguments: [(0, 240, 25), (321, 240, 25), (320, 241, 25), (320, 240, 0)])
    func rejectsBadFormats(width: Int, height: Int, fps: Int) {
        let error = #expect(throws: LiveError.self) {
            try SourceSpec.testPattern.makeSource(width: width, height: height, fps: fps, realTime: false)
        }
        #expect(error?.code == .invalidParams)
    }

    @Test func missingCameraIsCode6() {
        let error = #expect(throws: LiveError.self) {
            try SourceSpec(parsing: "v4l2:/dev/video-does-not-exist").makeSource(width: 640, height: 480, fps: 30)
        }
        #expect(error?.code == .cameraNotFound)
        #expect(error?.code.rawValue == 6)
    }
}
