import Foundation
import LiveTestSupport
import Testing

private let chromiumInstalled = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].contains {
    FileManager.default.isExecutableFile(atPath: $0)
}

/// The relay's web console (`GET /`) in a real headless Chromium, driven through
/// Tests/Browser/cdp.py by Tests/Browser/console_check.py. The screenshots are kept in
/// $LIVELINE_TEST_ARTIFACTS (default /tmp/liveline-test-artifacts) and their paths printed.
@Suite("web console in Chromium", .serialized, .enabled(if: chromiumInstalled, "no chromium installed"),
       .enabled(if: !BrowserTest.underAddressSanitizer, "the browser suites run in the plain pass (an AddressSanitizer build)"))
struct WebConsoleBrowserTests {

    static var artifacts: URL {
        let path = ProcessInfo.processInfo.environment["LIVELINE_TEST_ARTIFACTS"] ?? "/tmp/liveline-test-artifacts"
        let url = URL(fileURLWithPath: path)
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// Runs console_check.py and returns what it saw; prints the screenshot's path.
    static func check(url: String, stream: String, line: String, cohost: String, screenshot: String, token: String? = nil) throws
        -> [String: Any]
    {
        let script = CLI.packageRoot.appendingPathComponent("Tests/Browser/console_check.py").path
        let result = try CLI.run("/usr/bin/python3", [script, url, stream, line, cohost, screenshot] + (token.map { [$0] } ?? []))
        print("web console screenshot: \(screenshot)")
        let json = result.stdout.split(separator: "\n").last.map(String.init) ?? ""
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any],
                                  "stdout: \(result.stdout) stderr: \(result.stderr)")
        #expect(result.status == 0, "\(json)")
        return object
    }

    /// A hoster pushing a blue picture with a tone and opening the line `line` (its co-host
    /// accepted automatically), and a co-host `carol` on it.
    static func hosterAndCohost(_ server: Server, stream: String, token: (_ user: String, _ permissions: [String]) throws -> [String])
        throws -> (KitProcess, KitProcess)
    {
        let signal = "ws://127.0.0.1:\(server.httpPort)/line"
        let hoster = try KitProcess(["host", server.url(stream), "--source", "color:blue", "--size", "320x180", "--fps", "15",
                                     "--audio-source", "tone:440", "--line", stream, "--accept", "auto", "--user-id", "alice",
                                     "--signal", signal, "--stats", "json"]
                                    + token("alice", ["--publish", "live/*", "--play", "live/*", "--line-host", stream]),
                                    input: FileHandle.nullDevice)
        #expect(hoster.waitFor(timeout: 10) { $0["event"] as? String == "lineResult" && $0["code"] as? Int == 0 } != nil,
                "no line: \(hoster.stderr)")
        let cohost = try KitProcess(["guest", server.url(stream), "--apply", "--no-play", "--source", "color:red", "--size", "160x90",
                                     "--audio-source", "silence", "--user-id", "carol", "--signal", signal, "--stats", "json",
                                     "--duration", "30"]
                                    + token("carol", ["--publish", "live/*", "--play", "live/*", "--line-guest", stream]),
                                    input: FileHandle.nullDevice)
        #expect(cohost.waitFor(timeout: 10) { $0["event"] as? String == "applicationResult" && $0["code"] as? Int == 0 } != nil,
                "not a co-host: \(cohost.stderr)")
        return (hoster, cohost)
    }

    @Test("the console lists the pushed stream with its figures and links, and the open line with its hoster, co-host, members and mode; it refreshes every second")
    func listsStreamAndLine() throws {
        let server = try Server()
        defer { server.background.stop() }
        let (hoster, cohost) = try Self.hosterAndCohost(server, stream: "cam") { _, _ in [] }
        defer { _ = cohost.stop(); _ = hoster.stop() }
        let shot = Self.artifacts.appendingPathComponent("web-console.png").path
        let seen = try Self.check(url: "http://127.0.0.1:\(server.httpPort)/", stream: "live/cam", line: "cam", cohost: "carol",
                                  screenshot: shot)
        let streamRow = seen["streamRow"] as? String ?? ""
        #expect(streamRow.contains("live/cam") && streamRow.contains("h264 320×180") && streamRow.contains("aac"), "\(streamRow)")
        #expect(seen["links"] as? [String] == ["/watch/live/cam", "/live/cam.flv", "/live/cam.m3u8"], "\(seen)")
        let lineRow = seen["lineRow"] as? String ?? ""
        #expect(lineRow.contains("alice") && lineRow.contains("carol") && lineRow.contains("video"), "\(lineRow)")
        let state = seen["state"] as? [String: Any]
        let lines = state?["lines"] as? [[String: Any]]
        #expect((lines?.first?["members"] as? Int ?? 0) >= 2, "\(lines ?? [])")
        #expect((seen["refreshesAfterTwoSeconds"] as? Int ?? 0) >= 2, "\(seen)")
        #expect(FileManager.default.fileExists(atPath: shot))
        // The picture is a real PNG with the page's dark header at its top.
        let header = try #require(try? pngPixel(shot, x: 5, y: 5))
        #expect(header.red < 60 && header.green < 60 && header.blue < 80, "\(header)")
    }

    @Test("with auth on, the page is open but asks for a token; a wrong one is refused with the relay's reason; given a good one it lists the stream and the line, and its links carry it")
    func asksForToken() throws {
        let secrets = try TokenKitTests.Secrets()
        defer { try? FileManager.default.removeItem(at: secrets.directory) }
        let server = try Server(["--auth-secret-file", secrets.secretFile])
        defer { server.background.stop() }
        let page = try ProcessOutput.run("/usr/bin/curl", ["-s", "-i", "--max-time", "2", "http://127.0.0.1:\(server.httpPort)/"])
        #expect(page.text.hasPrefix("HTTP/1.1 200") && page.text.contains("Content-Security-Policy: default-src 'none'"), "\(page.text.prefix(400))")
        let (hoster, cohost) = try Self.hosterAndCohost(server, stream: "tok") { user, permissions in
            let minted = try CLI.run(CLI.liveline, ["token", "--secret-file", secrets.secretFile, "--sub", user] + permissions)
            #expect(minted.status == 0, "\(minted.stderr)")
            return ["--token", minted.stdout.trimmingCharacters(in: .whitespacesAndNewlines)]
        }
        defer { _ = cohost.stop(); _ = hoster.stop() }
        let token = try secrets.token(["--api", "api/*", "--play", "live/*"])
        let shot = Self.artifacts.appendingPathComponent("web-console-auth.png").path
        let seen = try Self.check(url: "http://127.0.0.1:\(server.httpPort)/", stream: "live/tok", line: "tok", cohost: "",
                                  screenshot: shot, token: token)
        #expect(seen["askedForToken"] as? Bool == true, "\(seen)")
        // A wrong token is refused with the relay's code and reason.
        #expect((seen["refusal"] as? String ?? "").contains("202"), "\(seen)")
        let links = seen["links"] as? [String] ?? []
        #expect(links.first == "/watch/live/tok?token=\(token)", "\(links)")
    }

    /// The RGB of a pixel of an RGB(A) PNG, read with Python's zlib (cdp.png_pixel).
    func pngPixel(_ path: String, x: Int, y: Int) throws -> (red: Int, green: Int, blue: Int) {
        let browser = CLI.packageRoot.appendingPathComponent("Tests/Browser").path
        let result = try CLI.run("/usr/bin/python3", ["-c", "import sys; sys.path.insert(0, sys.argv[1]); import cdp; "
            + "print(*cdp.png_pixel(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))[:3])", browser, path, "\(x)", "\(y)"])
        let values = result.stdout.split(separator: " ").compactMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        try #require(values.count == 3, "\(result.stderr)")
        return (values[0], values[1], values[2])
    }
}
