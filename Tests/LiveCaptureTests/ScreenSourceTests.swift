import LiveCore
import LiveTestSupport
import Testing
@testable import LiveCapture

@Suite("screen:DISPLAY sources: the syntax")
struct ScreenSpecTests {
    @Test("screen:DISPLAY[+X,Y][@WxH] parses, and prints back as written", arguments: [
        ("screen::99", ScreenSpec(display: ":99")),
        ("screen::99.0", ScreenSpec(display: ":99.0")),
        ("screen::99+10,20", ScreenSpec(display: ":99", x: 10, y: 20)),
        ("screen::99+0,0@640x360", ScreenSpec(display: ":99", size: (640, 360))),
        ("screen::1@320x240", ScreenSpec(display: ":1", size: (320, 240))),
        ("screen:localhost:10.1+4,2@64x48", ScreenSpec(display: "localhost:10.1", x: 4, y: 2, size: (64, 48))),
        ("screen:", ScreenSpec(display: "")),
    ])
    func parses(text: String, expected: ScreenSpec) throws {
        let spec = try SourceSpec(parsing: text)
        #expect(spec == .screen(expected))
        #expect(try SourceSpec(parsing: spec.description) == spec)
    }

    @Test("a bad screen spec is refused with what is wrong", arguments: [
        ("screen:99", "X display name"),
        ("screen::x", "X display name"),
        ("screen::99:1", "X display name"),
        ("screen::99+10", "X,Y"),
        ("screen::99+-1,0", "X,Y"),
        ("screen::99+1,2,3", "X,Y"),
        ("screen::99+40000,0", "X,Y"),
        ("screen::99@640", "WIDTHxHEIGHT"),
        ("screen::99@0x0", "WIDTHxHEIGHT"),
        ("screen::99@640x", "WIDTHxHEIGHT"),
        ("screen::99@ 64x48", "WIDTHxHEIGHT"),
        ("screen:host name:1", "X display name"),
    ])
    func refuses(text: String, says: String) {
        let error = #expect(throws: LiveError.self) { try SourceSpec(parsing: text) }
        #expect(error?.code == .invalidParams)
        #expect(error?.detail.contains("invalid source '\(text)'") == true)
        #expect(error?.detail.contains(says) == true, "\(error?.detail ?? "")")
    }
}

@Suite("screen:DISPLAY sources under Xvfb", .enabled(if: VirtualDisplay.isAvailable, "Xvfb and xsetroot are not installed (scripts/setup)"))
struct ScreenSourceTests {
    static let red = YUVColor(r: 255, g: 0, b: 0)
    static let blue = YUVColor(r: 0, g: 0, b: 255)

    @Test("the screen arrives as I420 of the pipeline's size, paced at the rate, pts counting frames, and live: a new colour shows")
    func capturesTheScreenLive() throws {
        let display = try VirtualDisplay(width: 320, height: 180)
        defer { display.stop() }
        try display.paint("#ff0000")
        let source = try SourceSpec(parsing: "screen:\(display.name)").makeSource(width: 160, height: 90, fps: 20)
        #expect(source is ScreenSource)
        #expect(source.name.contains("screen \(display.name) (320x180)"))
        try source.start()
        defer { source.stop() }
        let started = Clock.monotonicMicros()
        var frames: [VideoFrame] = []
        for _ in 0..<6 { frames.append(try #require(try source.nextFrame())) }
        let seconds = Double(Clock.monotonicMicros() - started) / 1e6
        #expect(frames.map(\.pts) == (0..<6).map { MediaTime(frame: Int64($0), fps: 20) })
        #expect(frames.allSatisfy { $0.width == 160 && $0.height == 90 && $0.captureTimeMicros > 0 })
        // Frame 5 is due 250 ms after the start.
        #expect(seconds >= 0.22 && seconds < 2, "6 frames at 20 fps took \(seconds) s")
        // Away from the pointer, which x11grab draws in the middle of the screen.
        let corner = meanColor(frames[5], x: 8, y: 8, width: 32, height: 24)
        #expect(near(corner, Self.red), "\(corner), red is \(Self.red)")

        try display.paint("#0000ff")
        var latest = corner
        for _ in 0..<10 {
            latest = meanColor(try #require(try source.nextFrame()), x: 8, y: 8, width: 32, height: 24)
            if near(latest, Self.blue) { break }
        }
        #expect(near(latest, Self.blue), "after repainting: \(latest), blue is \(Self.blue)")
    }

    @Test("+X,Y@WxH grabs that area: a tall one is fitted whole, with black bars beside it")
    func grabsAnArea() throws {
        let display = try VirtualDisplay(width: 320, height: 180)
        defer { display.stop() }
        try display.paint("#0000ff")
        // 40x90 at the right edge, fitted into 160x90: 40 wide in the middle, black around.
        let source = try ScreenSource(spec: ScreenSpec(display: display.name, x: 280, y: 90, size: (40, 90)), width: 160, height: 90, fps: 10)
        #expect(source.screenWidth == 40 && source.screenHeight == 90)
        try source.start()
        defer { source.stop() }
        let frame = try #require(try source.nextFrame())
        #expect(near(meanColor(frame, x: 64, y: 20, width: 32, height: 50), Self.blue))
        #expect(near(meanColor(frame, x: 0, y: 0, width: 50, height: 90), YUVColor.black, tolerance: 2))
        #expect(near(meanColor(frame, x: 110, y: 0, width: 50, height: 90), YUVColor.black, tolerance: 2))
    }

    @Test("an area off the screen is refused naming the screen's size; a display with no X server names it and what to check")
    func clearErrors() throws {
        let display = try VirtualDisplay(width: 320, height: 180)
        defer { display.stop() }
        let offScreen = #expect(throws: LiveError.self) {
            try ScreenSource(spec: ScreenSpec(display: display.name, x: 300, y: 0, size: (64, 48)), width: 160, height: 90, fps: 10)
        }
        #expect(offScreen?.code == .invalidParams)
        #expect(offScreen?.detail == "64x48 at +300,0 does not fit the 320x180 screen of display \(display.name)")

        let unused = try #require(VirtualDisplay.unusedNumber())
        let noServer = #expect(throws: LiveError.self) {
            try SourceSpec(parsing: "screen::\(unused)").makeSource(width: 160, height: 90, fps: 10)
        }
        #expect(noServer?.code == .cameraNotFound)
        #expect(noServer?.detail.contains("the screen of display :\(unused)") == true, "\(noServer?.detail ?? "")")
        #expect(noServer?.detail.contains("is an X server running on :\(unused)?") == true)
    }
}
