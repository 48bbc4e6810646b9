import Foundation
import Testing

@Suite("liveline layout and host --mix-test")
struct LayoutCommandTests {
    struct Rect: Decodable {
        var x: Int, y: Int, w: Int, h: Int, border: Int
    }

    static func layout(_ arguments: [String]) throws -> [Rect] {
        let result = try CLI.run(CLI.liveline, ["layout", "--json"] + arguments)
        #expect(result.status == 0, "stderr: \(result.stderr)")
        return try JSONDecoder().decode([Rect].self, from: Data(result.stdout.utf8))
    }

    @Test("--json prints the documented full layout, host first")
    func fullJSON() throws {
        let rects = try Self.layout(["--canvas", "1280x720", "--template", "full", "--cohosts", "2",
                                     "--hor", "left", "--ver", "top", "--dir", "hor",
                                     "--hor-pad", "20", "--ver-pad", "10", "--border", "4", "--gap", "8"])
        // Tiles W/4 x H/4 = 320x180, a row from the left pad at the top pad, 8 px apart.
        #expect(rects.count == 3)
        #expect(rects[0].x == 0 && rects[0].y == 0 && rects[0].w == 1280 && rects[0].h == 720)
        #expect(rects[1].x == 20 && rects[1].y == 10 && rects[1].w == 320 && rects[1].h == 180 && rects[1].border == 4)
        #expect(rects[2].x == 20 + 320 + 8 && rects[2].y == 10)
    }

    @Test("without --json an ASCII drawing; --png writes a picture")
    func drawingAndPicture() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let png = dir.appendingPathComponent("layout.png").path
        let result = try CLI.liveline("layout", "--template", "equal", "--cohosts", "3", "--png", png)
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(result.stdout.contains("+") && result.stdout.contains("3"))
        let probe = try CLI.run("/usr/bin/ffprobe", ["-v", "error", "-show_entries", "stream=width,height,codec_name",
                                                    "-of", "csv=p=0", png])
        #expect(probe.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "png,1280,720")
    }

    @Test("a layout that does not fit or a bad option is a usage error", arguments: [
        ["--canvas", "64x64", "--cohosts", "3", "--hor-pad", "40"],
        ["--template", "grid"],
        ["--cohosts", "9"],
        ["--hor", "middle"],
        ["--hor-pad", "-2"],
    ])
    func errors(arguments: [String]) throws {
        let result = try CLI.run(CLI.liveline, ["layout"] + arguments)
        #expect(result.status == 2)
        #expect(!result.stderr.isEmpty)
    }

    /// 4 test co-hosts fit every template too (full and bigSmall shrink their tiles to fit).
    @Test("host --mix-test 3 and 4 record the colours at the rectangles layout prints",
          arguments: ["full", "equal", "bigSmall"], [3, 4])
    func mixTest(template: String, count: Int) throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("mix.flv").path
        let common = ["--hor", "right", "--ver", "bottom", "--dir", "ver", "--border", "4"]
        let result = try CLI.run(CLI.liveline, ["host", "--source", "color:white", "--size", "640x360", "--duration", "1.5",
                                                "--bitrate", "3000", "--mix", template, "--mix-test", String(count),
                                                "--record", file] + common)
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let rects = try Self.layout(["--canvas", "640x360", "--template", template, "--cohosts", String(count)] + common)
        #expect(rects.count == 1 + count)
        let rgb = try CLI.rgbFrame(file, index: 40, width: 640, height: 360)
        func pixel(_ x: Int, _ y: Int) -> (r: Int, g: Int, b: Int) {
            let i = (y * 640 + x) * 3
            return (Int(rgb[i]), Int(rgb[i + 1]), Int(rgb[i + 2]))
        }
        let expected: [(r: Int, g: Int, b: Int)] = [(255, 255, 255), (255, 0, 0), (0, 255, 0), (0, 0, 255), (255, 255, 0)]
        for (rect, colour) in zip(rects, expected) {
            // The centre of the rectangle, and a point just inside its border.
            for (x, y) in [(rect.x + rect.w / 2, rect.y + rect.h / 2),
                           (rect.x + rect.border + 3, rect.y + rect.border + 3)] {
                let p = pixel(x, y)
                let error = abs(p.r - colour.r) + abs(p.g - colour.g) + abs(p.b - colour.b)
                #expect(error < 60, "\(template) rect \(rect) at (\(x),\(y)): \(p), expected \(colour)")
            }
        }
        // Co-host borders are white: the pixel on the left border line of co-host 1.
        let tile = rects[1]
        let border = pixel(tile.x + 1, tile.y + tile.h / 2)
        #expect(border.r > 200 && border.g > 200 && border.b > 200, "border: \(border)")
    }
}
