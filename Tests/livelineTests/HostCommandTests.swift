import Foundation
import Testing

@Suite("liveline host")
struct HostCommandTests {
    @Test("records 5 s of the test pattern: H.264, 1280x720, 150 frames")
    func recordsTestPattern() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("a.flv").path
        let result = try CLI.liveline("host", "--source", "test", "--duration", "5", "--record", file, "--stats", "json")
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let probe = try CLI.probe(file)
        #expect(probe.codec == "h264")
        #expect(probe.width == 1280 && probe.height == 720)
        #expect((147...153).contains(probe.frames), "frames: \(probe.frames)")

        // The first picture's size, one stats object per second and the tone's level
        // twice a second, then the summary, each a JSON object on its own line.
        let lines = result.stdout.split(separator: "\n").map(String.init)
        let objects = try lines.map { try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
        let summary = try #require(objects.last)
        #expect(summary["event"] as? String == "summary")
        #expect(summary["frames"] as? Int == probe.frames)
        let events = objects.dropLast().compactMap { $0["event"] as? String }
        #expect(events.allSatisfy { $0 == "stats" || $0 == "localAudioActive" || $0 == "firstLocalVideoFrame" }, "\(events)")
        #expect(events.filter { $0 == "firstLocalVideoFrame" }.count == 1, "\(events)")
        #expect(events.filter { $0 == "localAudioActive" }.count >= 8, "\(events)")
        #expect(objects.count >= 4, "expected about one stats line a second: \(lines)")
    }

    @Test("records MP4 at the asked size and rate")
    func recordsMP4() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("b.mp4").path
        let result = try CLI.liveline("host", "--source", "color:#336699", "--size", "640x360", "--fps", "25",
                                      "--duration", "2", "--record", file)
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let probe = try CLI.probe(file)
        #expect(probe.codec == "h264" && probe.width == 640 && probe.height == 360)
        #expect(probe.frames == 50)
    }

    @Test("--mirror flips the recorded picture")
    func mirrorFlips() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let plain = dir.appendingPathComponent("plain.flv").path
        let mirrored = dir.appendingPathComponent("mirrored.flv").path
        for (file, extra) in [(plain, [String]()), (mirrored, ["--mirror"])] {
            let result = try CLI.run(CLI.liveline, ["host", "--size", "320x240", "--duration", "0.5", "--bitrate", "3000",
                                                    "--record", file] + extra)
            #expect(result.status == 0, "stderr: \(result.stderr)")
        }
        let a = try CLI.rgbFrame(plain, index: 5, width: 320, height: 240)
        let b = try CLI.rgbFrame(mirrored, index: 5, width: 320, height: 240)
        var flippedError = 0.0, straightError = 0.0
        for y in 0..<240 {
            for x in 0..<320 {
                for c in 0..<3 {
                    let av = Double(a[(y * 320 + x) * 3 + c])
                    flippedError += abs(av - Double(b[(y * 320 + 319 - x) * 3 + c]))
                    straightError += abs(av - Double(b[(y * 320 + x) * 3 + c]))
                }
            }
        }
        let n = Double(320 * 240 * 3)
        #expect(flippedError / n < 4, "mirrored frame is not the plain one flipped: mean error \(flippedError / n)")
        #expect(straightError / n > 4 * (flippedError / n), "the test pattern should not be symmetric")
    }

    @Test("--filter beauty brightens and smooths the recorded skin tone")
    func beautyShows() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        var means: [Double] = []
        for (name, extra) in [("plain", [String]()), ("beauty", ["--filter", "beauty", "--beauty", "1"])] {
            let file = dir.appendingPathComponent("\(name).flv").path
            let result = try CLI.run(CLI.liveline, ["host", "--source", "color:#E0AC8C", "--size", "320x240",
                                                    "--duration", "0.5", "--record", file] + extra)
            #expect(result.status == 0, "stderr: \(result.stderr)")
            let rgb = try CLI.rgbFrame(file, index: 5, width: 320, height: 240)
            means.append(Double(rgb.reduce(0) { $0 + Int($1) }) / Double(rgb.count))
        }
        #expect(means[1] > means[0] + 3, "beauty should brighten skin: \(means)")
    }

    @Test("--logo draws the PNG with its alpha at the asked place")
    func logoIsDrawn() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("logo.flv").path
        let logo = CLI.packageRoot.appendingPathComponent("media/logo.png").path
        let result = try CLI.liveline("host", "--source", "color:blue", "--size", "640x360", "--duration", "0.5",
                                      "--bitrate", "3000", "--logo", "\(logo)@100,50", "--record", file)
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let rgb = try CLI.rgbFrame(file, index: 10, width: 640, height: 360)
        func pixel(_ x: Int, _ y: Int) -> (Int, Int, Int) {
            let i = (y * 640 + x) * 3
            return (Int(rgb[i]), Int(rgb[i + 1]), Int(rgb[i + 2]))
        }
        // media/logo.png: red dot centred at (52, 48), white L from x 96, translucent dark plate elsewhere.
        let dot = pixel(100 + 52, 50 + 48)
        #expect(dot.0 > 180 && dot.1 < 80 && dot.2 < 80, "red dot: \(dot)")
        let letter = pixel(100 + 102, 50 + 40)
        #expect(letter.0 > 200 && letter.1 > 200 && letter.2 > 200, "white letter: \(letter)")
        // The plate (alpha 160 of a dark grey) over blue: darker blue, not blue, not opaque grey.
        let plate = pixel(100 + 20, 50 + 80)
        #expect(plate.2 > 70 && plate.2 < 160 && plate.0 < 40, "translucent plate: \(plate)")
        let outside = pixel(20, 300)
        #expect(outside.2 > 200 && outside.0 < 40, "background stays blue: \(outside)")
    }

    @Test("bad options give a clear error and exit code 2", arguments: [
        (["--size", "13x7"], "--size"),
        (["--size", "big"], "--size"),
        (["--fps", "0"], "--fps"),
        (["--filter", "sepia"], "--filter"),
        (["--zoom", "5"], "--zoom"),
        (["--beauty", "2"], "--beauty"),
        (["--record", "out.avi"], "--record"),
        (["--stats", "xml"], "--stats"),
        (["--bitrate"], "--bitrate"),
        (["--frobnicate"], "--frobnicate"),
        (["--source", "bogus"], "bogus"),
        (["--mode", "radio"], "--mode"),
        (["--audio-source", "tone:5"], "--audio-source"),
        (["--audio-source", "mic"], "--audio-source"),
        (["--audio-bitrate", "4"], "--audio-bitrate"),
        (["--level-ms", "0"], "--level-ms"),
        (["rtmp://127.0.0.1:1/live/x", "--mode", "audio", "--audio-source", "none"], "audio source cannot be none"),
        (["rtmp://127.0.0.1:1/live/x", "--mode", "audio", "--source", "color:red"], "brings none"),
        (["rtmp://127.0.0.1:1/live/x", "--mode", "audio", "--size", "640x360"], "--mode audio"),
        (["--mode", "audio"], "RTMP_URL"),
        (["--audio-source", "none", "--mute"], "--mute"),
        (["--sub-background", "fill.png"], "--line"),
        (["--link-mode", "audio"], "--line"),
        (["rtmp://127.0.0.1:1/live/x", "--line", "x", "--link-mode", "radio"], "--link-mode"),
        (["rtmp://127.0.0.1:1/live/x", "--mode", "audio", "--sub-background", "fill.png"], "--mode audio"),
    ])
    func badOptions(arguments: [String], mentions: String) throws {
        let result = try CLI.run(CLI.liveline, ["host"] + arguments + ["--duration", "0.1"])
        #expect(result.status == 2)
        #expect(result.stderr.contains(mentions), "stderr: \(result.stderr)")
        #expect(result.stdout.isEmpty)
    }

    @Test("a source or file that cannot be used is an error with exit code 1", arguments: [
        (["--source", "file:/nonexistent/clip.mp4"], "/nonexistent/clip.mp4"),
        (["--source", "v4l2:/dev/video-none"], "code 6"),
        (["--logo", "/nonexistent/logo.png"], "/nonexistent/logo.png"),
        (["rtmp://127.0.0.1:1/live/x", "--line", "x", "--sub-background", "/nonexistent/fill.png"], "/nonexistent/fill.png"),
    ])
    func unusableInputs(arguments: [String], mentions: String) throws {
        let result = try CLI.run(CLI.liveline, ["host"] + arguments + ["--duration", "0.1"])
        #expect(result.status == 1)
        #expect(result.stderr.contains(mentions), "stderr: \(result.stderr)")
    }

    @Test("--stats json reports the first captured picture with its size, once")
    func firstLocalFrameEvent() throws {
        let result = try CLI.liveline("host", "--size", "160x120", "--fps", "15", "--duration", "0.5", "--stats", "json")
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let lines = result.stdout.split(separator: "\n").filter { $0.contains("\"firstLocalVideoFrame\"") }
        #expect(lines == [#"{"event":"firstLocalVideoFrame","width":160,"height":120}"#], "stdout: \(result.stdout)")
    }

    @Test("--help on every command", arguments: [["host", "--help"], ["devices", "--help"], ["--help"]])
    func help(arguments: [String]) throws {
        let result = try CLI.run(CLI.liveline, arguments)
        #expect(result.status == 0)
        #expect(result.stdout.contains("Usage: liveline"))
    }

    @Test("devices says plainly when there is no camera")
    func devices() throws {
        let result = try CLI.liveline("devices")
        #expect(result.status == 0)
        let hasCamera = (try? FileManager.default.contentsOfDirectory(atPath: "/dev"))?.contains { $0.hasPrefix("video") } ?? false
        #expect(result.stdout.contains(hasCamera ? "/dev/video" : "No V4L2 capture devices"), "\(result.stdout)")
    }
}
