import Testing
@testable import LiveCapture

@Suite struct V4L2NegotiationTests {
    typealias Offer = V4L2ModeOffer

    static let webcam: [Offer] = [
        Offer(pixelFormat: .mjpeg, width: 1920, height: 1080, frameRates: [30]),
        Offer(pixelFormat: .mjpeg, width: 1280, height: 720, frameRates: [30]),
        Offer(pixelFormat: .yuyv, width: 640, height: 480, frameRates: [30, 15]),
        Offer(pixelFormat: .yuyv, width: 1280, height: 720, frameRates: [10, 5]),
        Offer(pixelFormat: .yuyv, width: 320, height: 240, frameRates: [30]),
    ]

    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var request: (Int, Int, Int)
        var offers: [Offer]
        var expected: V4L2Mode?
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "exact match", request: (640, 480, 30), offers: webcam,
             expected: V4L2Mode(pixelFormat: .yuyv, width: 640, height: 480, fps: 30)),
        Case(name: "exact size wins over rate", request: (1280, 720, 30), offers: webcam,
             expected: V4L2Mode(pixelFormat: .yuyv, width: 1280, height: 720, fps: 10)),
        Case(name: "nearest size by area", request: (800, 600, 30), offers: webcam,
             expected: V4L2Mode(pixelFormat: .yuyv, width: 640, height: 480, fps: 30)),
        Case(name: "nearest size by aspect", request: (1280, 720, 30), offers: [
                Offer(pixelFormat: .yuyv, width: 960, height: 960, frameRates: [30]),
                Offer(pixelFormat: .yuyv, width: 1024, height: 576, frameRates: [30]),
             ],
             expected: V4L2Mode(pixelFormat: .yuyv, width: 1024, height: 576, fps: 30)),
        Case(name: "larger preferred over smaller at the same ratio", request: (640, 360, 30), offers: [
                Offer(pixelFormat: .yuyv, width: 320, height: 180, frameRates: [30]),
                Offer(pixelFormat: .yuyv, width: 1280, height: 720, frameRates: [30]),
             ],
             expected: V4L2Mode(pixelFormat: .yuyv, width: 1280, height: 720, fps: 30)),
        Case(name: "YUYV preferred to NV12 and I420", request: (640, 480, 30), offers: [
                Offer(pixelFormat: .i420, width: 640, height: 480, frameRates: [30]),
                Offer(pixelFormat: .nv12, width: 640, height: 480, frameRates: [30]),
                Offer(pixelFormat: .yuyv, width: 640, height: 480, frameRates: [30]),
             ],
             expected: V4L2Mode(pixelFormat: .yuyv, width: 640, height: 480, fps: 30)),
        Case(name: "native preferred to emulated", request: (640, 480, 30), offers: [
                Offer(pixelFormat: .yuyv, width: 640, height: 480, frameRates: [30], emulated: true),
                Offer(pixelFormat: .i420, width: 640, height: 480, frameRates: [30]),
             ],
             expected: V4L2Mode(pixelFormat: .i420, width: 640, height: 480, fps: 30)),
        Case(name: "rate breaks a format tie", request: (1280, 720, 30), offers: [
                Offer(pixelFormat: .yuyv, width: 1280, height: 720, frameRates: [10]),
                Offer(pixelFormat: .i420, width: 1280, height: 720, frameRates: [30], emulated: true),
             ],
             expected: V4L2Mode(pixelFormat: .i420, width: 1280, height: 720, fps: 30)),
        Case(name: "nearest frame rate", request: (640, 480, 25), offers: [
                Offer(pixelFormat: .yuyv, width: 640, height: 480, frameRates: [60, 30, 15, 5]),
             ],
             expected: V4L2Mode(pixelFormat: .yuyv, width: 640, height: 480, fps: 30)),
        Case(name: "unknown rates keep the requested one", request: (640, 480, 24), offers: [
                Offer(pixelFormat: .nv12, width: 640, height: 480, frameRates: []),
             ],
             expected: V4L2Mode(pixelFormat: .nv12, width: 640, height: 480, fps: 24)),
        Case(name: "MJPEG only is refused", request: (1280, 720, 30), offers: [
                Offer(pixelFormat: .mjpeg, width: 1280, height: 720, frameRates: [30]),
             ],
             expected: nil),
        Case(name: "no offers", request: (640, 480, 30), offers: [], expected: nil),
    ]

    @Test(arguments: cases)
    func chooses(_ c: Case) {
        let (w, h, fps) = c.request
        #expect(V4L2Negotiation.choose(width: w, height: h, fps: fps, offers: c.offers) == c.expected)
    }

    @Test func stepwiseSizesSnapToTheGrid() {
        let range = V4L2FrameSize.stepwise(minWidth: 160, maxWidth: 1920, stepWidth: 16,
                                           minHeight: 120, maxHeight: 1080, stepHeight: 8)
        #expect(range.nearest(toWidth: 1280, height: 720) == (1280, 720))
        #expect(range.nearest(toWidth: 1000, height: 563) == (1008, 560))
        #expect(range.nearest(toWidth: 4000, height: 50) == (1920, 120))
        #expect(V4L2FrameSize.discrete(width: 640, height: 480).nearest(toWidth: 1, height: 1) == (640, 480))
    }

    @Test func pixelFormatsSpellTheirFourcc() {
        #expect(V4L2PixelFormat.yuyv == V4L2PixelFormat("YUYV"))
        #expect(V4L2PixelFormat.i420.description == "YU12")
        #expect(V4L2PixelFormat.mjpeg.description == "MJPG")
    }
}
