import Testing
@testable import LiveCore

@Suite("VideoFrame and FramePool")
struct VideoFrameTests {
    @Test("planes are aligned, sized for I420 and do not overlap")
    func layout() {
        let frame = VideoFrame(width: 1278, height: 719)
        #expect(frame.width == 1278 && frame.height == 720)
        #expect(frame.stride(0) % 32 == 0 && frame.stride(1) % 32 == 0)
        #expect(frame.stride(0) >= 1278 && frame.stride(1) >= 639)
        #expect(frame.plane(1) >= frame.plane(0) + frame.stride(0) * 720)
        #expect(frame.plane(2) >= frame.plane(1) + frame.stride(1) * 360)
        #expect(Int(bitPattern: frame.plane(0)) % 32 == 0)
    }

    @Test("fill and copy keep every sample and the timing")
    func fillAndCopy() {
        let a = VideoFrame(width: 64, height: 32)
        a.fill(YUVColor(y: 10, u: 20, v: 30))
        a.plane(0)[5 * a.stride(0) + 7] = 99
        a.pts = MediaTime(micros: 1234)
        a.captureTimeMicros = 42
        let b = VideoFrame(width: 64, height: 32)
        b.copy(from: a)
        #expect(b.sample(plane: 0, x: 7, y: 5) == 99)
        #expect(b.pixel(x: 63, y: 31) == YUVColor(y: 10, u: 20, v: 30))
        #expect(b.pts == a.pts && b.captureTimeMicros == 42)
    }

    @Test("the pool reuses a frame once its user lets it go")
    func poolReuses() {
        let pool = FramePool(width: 32, height: 32, capacity: 2)
        var first: VideoFrame? = pool.acquire()
        let firstID = ObjectIdentifier(first!)
        let second = pool.acquire()
        #expect(ObjectIdentifier(second) != firstID)
        first = nil
        let third = pool.acquire()
        #expect(ObjectIdentifier(third) == firstID)
        #expect(pool.allocations == 2)
        _ = first
    }

    @Test("a steady producer stops allocating")
    func steadyState() {
        let pool = FramePool(width: 64, height: 64, capacity: 4)
        var inFlight: [VideoFrame] = []
        for _ in 0..<1000 {
            inFlight.append(pool.acquire())
            if inFlight.count > 2 { inFlight.removeFirst() }
        }
        #expect(pool.allocations == 3)
    }
}

@Suite("YUVColor")
struct YUVColorTests {
    @Test("named colours and #RRGGBB parse; garbage does not", arguments: [
        ("red", YUVColor(r: 255, g: 0, b: 0)), ("Blue", YUVColor(r: 0, g: 0, b: 255)),
        ("#FF0000", YUVColor(r: 255, g: 0, b: 0)), ("#336699", YUVColor(r: 0x33, g: 0x66, b: 0x99)),
    ])
    func parses(text: String, expected: YUVColor) {
        #expect(YUVColor(parsing: text) == expected)
    }

    @Test("rejects", arguments: ["", "#12345", "#GGGGGG", "reddish", "#1234567"])
    func rejects(text: String) {
        #expect(YUVColor(parsing: text) == nil)
    }

    @Test("BT.601 limited range: black 16, white 235, grey chroma 128")
    func matrix() {
        #expect(YUVColor.black == YUVColor(y: 16, u: 128, v: 128))
        #expect(YUVColor.white == YUVColor(y: 235, u: 128, v: 128))
        let red = YUVColor(r: 255, g: 0, b: 0)
        #expect(red == YUVColor(y: 82, u: 90, v: 240))
        let back = red.rgb
        #expect(abs(Int(back.r) - 255) <= 2 && back.g <= 2 && back.b <= 2)
    }
}

@Suite("LiveCode")
struct LiveCodeTests {
    @Test("codes keep the anyRTC SDK's numbers")
    func numbers() {
        #expect(LiveCode.cameraNotFound.rawValue == 6)
        #expect(LiveCode.networkDisconnected.rawValue == 101)
        #expect(LiveCode.lineFull.rawValue == 602)
        #expect(LiveError(.cameraNotFound, "no /dev/video0").description.contains("code 6"))
    }
}
