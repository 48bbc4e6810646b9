import Foundation
import LiveTestSupport
import Testing

/// The watch page in headless Chromium (Tests/Browser/watch_page.py over the DevTools
/// protocol): `liveline serve` with `liveline host --source color:red --audio-source tone:440`
/// pushing, the page plays the WebSocket feed, and its own figures, a screenshot's pixels
/// and a reconnect after the server restarts are checked.
@Suite("Watch page in Chromium", .serialized,
       .enabled(if: BrowserTest.isAvailable, "chromium or python3-websocket is not installed (scripts/setup)"),
       .enabled(if: !BrowserTest.underAddressSanitizer, "the browser suites run in the plain pass (an AddressSanitizer build)"))
struct WatchPageBrowserTests {
    /// One report line of watch_page.py.
    struct Report: Decodable {
        struct Stats: Decodable {
            var state: String
            var decoder: String
            var transport: String
            var firstFrameMs: Double?
            var latencyMs: Double?
            var fps: Double
            var bitrateKbps: Double
            var audioLevel: Double
            var sound: String?
            var width: Int
            var height: Int
            var videoCodec: String?
            var audioCodec: String?
            var reconnects: Int
            var frames: Int
            var error: String?
        }
        var stats: Stats
        var pixel: [Int]
        var screenshot: String
        var decoderLabel: String
    }

    /// watch_page.py running: its report lines as they come, stdin to say "the feed was dropped".
    final class Script {
        let process = Process()
        let input = Pipe(), output = Pipe()
        let errors: URL
        var buffer = Data()

        init(_ arguments: [String], errors: URL, script: String = "watch_page.py") throws {
            self.errors = errors
            _ = FileManager.default.createFile(atPath: errors.path, contents: nil)
            process.executableURL = URL(fileURLWithPath: BrowserTest.python)
            process.arguments = [BrowserTest.scripts.appendingPathComponent(script).path] + arguments
            process.standardInput = input
            process.standardOutput = output
            process.standardError = try FileHandle(forWritingTo: errors)
            try process.run()
        }

        /// The next report, or nil when the script ended without one (it says why on stderr).
        func report<Line: Decodable>(_ type: Line.Type = Report.self) throws -> Line? {
            while true {
                if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = buffer[buffer.startIndex..<newline]
                    buffer = Data(buffer[(newline + 1)...])
                    return try JSONDecoder().decode(Line.self, from: line)
                }
                let more = output.fileHandleForReading.availableData
                if more.isEmpty { return nil }
                buffer += more
            }
        }

        func proceed() { input.fileHandleForWriting.write(Data("go\n".utf8)) }

        var stderr: String { (try? String(contentsOf: errors, encoding: .utf8)) ?? "" }

        func finish() -> Int32 {
            try? input.fileHandleForWriting.close()
            process.waitUntilExit()
            return process.terminationStatus
        }
    }

    func expectRed(_ report: Report) {
        let pixel = report.pixel
        #expect(pixel.count == 3 && pixel[0] > 180 && pixel[1] < 80 && pixel[2] < 80,
                "the picture's middle is \(pixel), not red (screenshot \(report.screenshot))")
    }

    /// What a page playing the test's stream shows: pictures, a bitrate, its tone with the
    /// sound on, 640×360 and AAC 48 kHz stereo.
    private func expectPlaying(_ stats: Report.Stats, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(stats.fps >= 10, "\(stats.fps) fps", sourceLocation: sourceLocation)
        #expect(stats.bitrateKbps > 0, sourceLocation: sourceLocation)
        #expect(stats.audioLevel > 0.05, "audio level \(stats.audioLevel)", sourceLocation: sourceLocation)
        #expect(stats.sound == "on", "sound \(stats.sound ?? "none")", sourceLocation: sourceLocation)
        #expect(stats.width == 640 && stats.height == 360, sourceLocation: sourceLocation)
        #expect(stats.audioCodec?.hasPrefix("mp4a.40.2 48000 Hz 2 ch") == true, "\(stats.audioCodec ?? "none")",
                sourceLocation: sourceLocation)
    }

    @Test("plays picture and sound with first frame, latency and level; reconnects after the server restarts")
    func playsAndReconnects() throws {
        let server = try Server()
        var serve = server.background
        defer { serve.stop() }
        let host = try Background(CLI.liveline, ["host", server.url("browser"), "--source", "color:red", "--audio-source", "tone:440",
                                                 "--size", "640x360", "--duration", "40"])
        defer { host.stop() }
        let screenshot = try BrowserTest.artifact("watch-page.png")
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let script = try Script(["http://127.0.0.1:\(server.httpPort)/watch/live/browser", screenshot, "--reconnect", "--timeout", "15"],
                                errors: dir.appendingPathComponent("stderr"))
        defer { _ = script.finish() }

        let first = try #require(try script.report(), "watch_page.py: \(script.stderr)")
        print("watch page screenshot: \(first.screenshot)")
        let stats = first.stats
        #expect(stats.state == "playing")
        #expect(stats.decoder == "webcodecs")
        let firstFrame = try #require(stats.firstFrameMs)
        #expect(firstFrame > 0 && firstFrame < 5000, "first frame after \(firstFrame) ms")
        let latency = try #require(stats.latencyMs)
        #expect(latency > 0 && latency < 1000, "latency \(latency) ms")
        expectPlaying(stats)
        #expect(stats.videoCodec?.hasPrefix("avc1.") == true)
        expectRed(first)
        print("watch page: first frame \(firstFrame) ms, latency \(latency) ms, \(stats.fps) fps, audio level \(stats.audioLevel)")

        // Drop every socket: the server dies and comes back on the same ports; the host
        // republishes and the page finds the stream again by itself.
        serve = try server.killAndRestart(after: 0.3, http: server.httpPort)
        script.proceed()
        let second = try #require(try script.report(), "no reconnect: \(script.stderr)")
        print("watch page after the reconnect: \(second.screenshot)")
        #expect(second.stats.reconnects >= 1)
        #expect(second.stats.state == "playing")
        expectRed(second)
        #expect(script.finish() == 0, "\(script.stderr)")
    }

    @Test("a page that is not a secure context (plain http to a named host) has no WebCodecs and plays through Media Source Extensions")
    func mediaSource() throws {
        let server = try Server()
        defer { server.background.stop() }
        let host = try Background(CLI.liveline, ["host", server.url("mse"), "--source", "color:red", "--audio-source", "tone:440",
                                                 "--size", "640x360", "--duration", "30"])
        defer { host.stop() }
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let script = try Script(["http://127.0.0.1:\(server.httpPort)/watch/live/mse", try BrowserTest.artifact("watch-page-mse.png"),
                                 "--insecure-host", "liveline.test"],
                                errors: dir.appendingPathComponent("stderr"))
        let report = try #require(try script.report(), "watch_page.py: \(script.stderr)")
        print("watch page (MSE) screenshot: \(report.screenshot)")
        #expect(report.stats.decoder == "mse")
        #expect(report.stats.state == "playing")
        let latency = try #require(report.stats.latencyMs)
        #expect(latency > 0 && latency < 1500, "latency \(latency) ms")
        #expect(report.stats.audioLevel > 0.05, "audio level \(report.stats.audioLevel)")
        #expect(report.stats.sound == "on", "sound \(report.stats.sound ?? "none")")
        #expect(report.stats.width == 640 && report.stats.height == 360)
        expectRed(report)
        #expect(script.finish() == 0, "\(script.stderr)")
    }

    @Test("plays HLS (?transport=hls) of 1 s segments: first frame, a latency under 3 s, sound, the picture's colour; plays again after the server restarts")
    func playsHLS() throws {
        let server = try Server(["--hls-segment-ms", "1000"])
        var serve = server.background
        defer { serve.stop() }
        // A keyframe a second: segments are cut on keyframes.
        let host = try Background(CLI.liveline, ["host", server.url("hls"), "--source", "color:red", "--audio-source", "tone:440",
                                                 "--size", "640x360", "--keyint", "1", "--duration", "30"])
        defer { host.stop() }
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let script = try Script(["http://127.0.0.1:\(server.httpPort)/watch/live/hls?transport=hls", try BrowserTest.artifact("watch-page-hls.png"),
                                 "--timeout", "20", "--settle", "2", "--reconnect"],
                                errors: dir.appendingPathComponent("stderr"))
        let report = try #require(try script.report(), "watch_page.py: \(script.stderr)")
        print("watch page (HLS) screenshot: \(report.screenshot)")
        let stats = report.stats
        #expect(stats.transport == "hls")
        #expect(report.decoderLabel == "WebCodecs, HLS", "the bar says \(report.decoderLabel)")
        #expect(stats.state == "playing")
        let firstFrame = try #require(stats.firstFrameMs)
        #expect(firstFrame > 0 && firstFrame < 8000, "first frame after \(firstFrame) ms")
        let latency = try #require(stats.latencyMs)
        // Not a benchmark: a generous bound (a segment's length, its listing and the page's
        // buffer, about 1.3 s on a quiet machine), under the 3.3 s of a player that joins
        // three segments behind the live end.
        #expect(latency > 0 && latency < 3000, "latency \(latency) ms")
        expectPlaying(stats)
        #expect(stats.error == nil, "\(stats.error ?? "")")
        expectRed(report)
        print("watch page (HLS): first frame \(firstFrame) ms, latency \(latency) ms, \(stats.fps) fps, audio level \(stats.audioLevel)")

        // The playlist fails while the server is away; the page tries again by itself and
        // plays the stream the host publishes again (its segments numbered anew).
        serve = try server.killAndRestart(after: 0.3, http: server.httpPort, ["--hls-segment-ms", "1000"])
        script.proceed()
        let second = try #require(try script.report(), "no reconnect: \(script.stderr)")
        #expect(second.stats.reconnects >= 1)
        #expect(second.stats.state == "playing")
        expectRed(second)
        #expect(script.finish() == 0, "\(script.stderr)")
    }

    @Test("HLS with auth on: the page's play token reaches the playlist and its segments; through Media Source Extensions where there is no WebCodecs")
    func hlsWithTokenThroughMediaSource() throws {
        let secrets = try TokenKitTests.Secrets()
        defer { try? FileManager.default.removeItem(at: secrets.directory) }
        let server = try Server(["--auth-secret-file", secrets.secretFile])
        defer { server.background.stop() }
        let host = try Background(CLI.liveline, ["host", server.url("hls-private"), "--source", "color:red", "--audio-source", "tone:440",
                                                 "--size", "640x360", "--keyint", "1", "--duration", "30",
                                                 "--token", try secrets.token(["--publish", "live/hls-private"])])
        defer { host.stop() }
        let page = "http://127.0.0.1:\(server.httpPort)/watch/live/hls-private?transport=hls"
        let token = try secrets.token(["--play", "live/hls-private"])
        let played = try Script(["\(page)&token=\(token)", try BrowserTest.artifact("watch-page-hls-mse.png"), "--timeout", "20",
                                 "--insecure-host", "liveline.test"],
                                errors: secrets.directory.appendingPathComponent("played"))
        let report = try #require(try played.report(), "with a token: \(played.stderr)")
        print("watch page (HLS, MSE) screenshot: \(report.screenshot)")
        #expect(report.stats.state == "playing")
        #expect(report.stats.decoder == "mse")
        #expect(report.decoderLabel == "MSE, HLS", "the bar says \(report.decoderLabel)")
        let latency = try #require(report.stats.latencyMs)
        #expect(latency > 0 && latency < 3000, "latency \(latency) ms")
        #expect(report.stats.audioLevel > 0.05, "audio level \(report.stats.audioLevel)")
        expectRed(report)
        #expect(played.finish() == 0, "\(played.stderr)")

        let refused = try Script([page, try BrowserTest.artifact("watch-page-hls-no-token.png"), "--no-play", "2"],
                                 errors: secrets.directory.appendingPathComponent("refused"))
        let nothing = try #require(try refused.report(), "without a token: \(refused.stderr)")
        #expect(nothing.stats.frames == 0 && nothing.stats.firstFrameMs == nil)
        #expect(nothing.stats.state == "waiting", "\(nothing.stats.state)")
        #expect(refused.finish() == 0, "\(refused.stderr)")
    }

    @Test("the page's FLV reader, capture-time SEI, codec parsers, MPEG-TS demuxer, playlist parser and pacer on fixed bytes, run in the browser")
    func parsers() throws {
        struct Checks: Decodable {
            var checks: Int
            var failures: [String]
        }
        let server = try Server()
        defer { server.background.stop() }
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let script = try Script(["http://127.0.0.1:\(server.httpPort)/watch/live/nobody"], errors: dir.appendingPathComponent("stderr"),
                                script: "player_units.py")
        let result = try #require(try script.report(Checks.self), "player_units.py: \(script.stderr)")
        #expect(result.checks > 100)
        #expect(result.failures.isEmpty, "\(result.failures)")
        #expect(script.finish() == 0, "\(script.stderr)")
    }

    @Test("with auth on the page plays with a play token in its URL and draws nothing without one")
    func tokens() throws {
        let secrets = try TokenKitTests.Secrets()
        defer { try? FileManager.default.removeItem(at: secrets.directory) }
        let server = try Server(["--auth-secret-file", secrets.secretFile])
        defer { server.background.stop() }
        let host = try Background(CLI.liveline, ["host", server.url("private"), "--source", "color:red", "--audio-source", "tone:440",
                                                 "--size", "640x360", "--duration", "30", "--token", try secrets.token(["--publish", "live/private"])])
        defer { host.stop() }
        let page = "http://127.0.0.1:\(server.httpPort)/watch/live/private"
        let token = try secrets.token(["--play", "live/private"])
        let played = try Script(["\(page)?token=\(token)", try BrowserTest.artifact("watch-page-token.png")],
                                errors: secrets.directory.appendingPathComponent("played"))
        let report = try #require(try played.report(), "with a token: \(played.stderr)")
        #expect(report.stats.state == "playing")
        expectRed(report)
        #expect(played.finish() == 0)

        let refused = try Script([page, try BrowserTest.artifact("watch-page-no-token.png"), "--no-play", "2"],
                                 errors: secrets.directory.appendingPathComponent("refused"))
        let nothing = try #require(try refused.report(), "without a token: \(refused.stderr)")
        #expect(nothing.stats.frames == 0 && nothing.stats.firstFrameMs == nil)
        #expect(nothing.stats.state == "waiting", "\(nothing.stats.state)")
        #expect(refused.finish() == 0, "\(refused.stderr)")
    }
}
