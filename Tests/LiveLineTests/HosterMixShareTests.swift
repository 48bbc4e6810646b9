import Foundation
import LiveCapture
import LiveCore
import LiveMix
import LiveTestSupport
import Testing
@testable import LiveLine

/// The mix stage while a picture is shared: the shared picture is participant 0, the
/// host's own frames the tile after the co-hosts'.
@Suite("HosterMix: the shared picture and the host's tile")
struct HosterMixShareTests {
    static let red = YUVColor(r: 255, g: 0, b: 0)
    static let blue = YUVColor(r: 0, g: 0, b: 255)
    static let green = YUVColor(r: 0, g: 255, b: 0)

    /// Mixes `host` until the centres of `rects` show `colors` (the feeds deliver on their
    /// own threads); the last mixed frame's colours.
    static func mixUntil(_ mix: HosterMix, host: VideoFrame, _ rects: [MixRect], _ colors: [YUVColor]) -> (VideoFrame, [YUVColor]) {
        var mixed = mix.process(host), seen: [YUVColor] = []
        for _ in 0..<100 {
            mixed = mix.process(host)
            seen = rects.map { meanColor(mixed, x: $0.x + $0.w / 4, y: $0.y + $0.h / 4, width: $0.w / 2, height: $0.h / 2) }
            if zip(seen, colors).allSatisfy({ near($0, $1, tolerance: 4) }) { break }
            Thread.sleep(forTimeInterval: 0.02)
        }
        return (mixed, seen)
    }

    @Test("sharing: the picture fills the host's place, a co-host keeps its tile and the host's frames take the next; the mix keeps the host's times; the line holds one co-host fewer")
    func layout() throws {
        let mix = try HosterMix(width: 320, height: 180, template: .full, options: MixOptions())
        defer { mix.stop() }
        try mix.addCohost(source: ColorSource(color: Self.blue, width: 160, height: 90, fps: 30))
        let capacity = mix.lineCapacity
        let host = VideoFrame(width: 320, height: 180)
        host.fill(Self.green)
        host.pts = MediaTime(frame: 7, fps: 30)
        host.captureTimeMicros = 1234

        try mix.startShare(source: ColorSource(color: Self.red, width: 320, height: 180, fps: 30)) { _ in }
        #expect(mix.isSharing)
        #expect(mix.lineCapacity == capacity - 1)
        let two = try MixLayout(canvasWidth: 320, canvasHeight: 180, template: .full, cohosts: 2, options: MixOptions())
        let shared = MixRect(x: 8, y: 8, w: 64, h: 40)
        let (mixed, seen) = Self.mixUntil(mix, host: host, [shared, two.rects[1].inner, two.rects[2].inner], [Self.red, Self.blue, Self.green])
        #expect(near(seen[0], Self.red, tolerance: 4) && near(seen[1], Self.blue, tolerance: 4) && near(seen[2], Self.green, tolerance: 4),
                "shared, co-host, host: \(seen)")
        #expect(mixed.pts == host.pts && mixed.captureTimeMicros == 1234)
        #expect(throws: LiveError.self) { try mix.startShare(source: ColorSource(color: .white, width: 320, height: 180, fps: 30)) { _ in } }

        // The co-host leaves: the host's tile moves up to the first place.
        mix.removeCohost(key: try #require(mix.cohostKeys.first))
        let one = try MixLayout(canvasWidth: 320, canvasHeight: 180, template: .full, cohosts: 1, options: MixOptions())
        let (_, alone) = Self.mixUntil(mix, host: host, [shared, one.rects[1].inner], [Self.red, Self.green])
        #expect(near(alone[0], Self.red, tolerance: 4) && near(alone[1], Self.green, tolerance: 4), "shared, host: \(alone)")

        // Stopped: the host's picture is the whole canvas again.
        mix.stopShare()
        #expect(!mix.isSharing)
        let back = mix.process(host)
        #expect(near(meanColor(back, x: 0, y: 0, width: 320, height: 180), Self.green, tolerance: 2))
    }

    @Test("a shared source that fails ends the feed with its error, reported once")
    func sourceFailure() throws {
        let mix = try HosterMix(width: 320, height: 180, template: .full, options: MixOptions())
        defer { mix.stop() }
        let ended = Locked<[String]>([])
        let source = FailingSource(frames: 3)
        try mix.startShare(source: source) { error in ended.update { $0.append(error.map { "\($0)" } ?? "stopped") } }
        let deadline = Date().addingTimeInterval(10)
        while ended.value.isEmpty && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        #expect(ended.value.count == 1)
        #expect(ended.value.first?.contains("the display went away") == true, "\(ended.value)")
    }
}

/// A source that delivers a few grey frames, then fails (a screen whose X server went away).
final class FailingSource: VideoSource {
    let width = 320, height = 180, fps = 30
    let name = "failing source"
    private var left: Int

    init(frames: Int) { left = frames }

    func start() throws {}
    func nextFrame() throws -> VideoFrame? {
        guard left > 0 else { throw LiveError(.exception, "the display went away") }
        left -= 1
        return VideoFrame(width: width, height: height)
    }
    func stop() {}
}
