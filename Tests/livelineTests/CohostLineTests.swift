import Foundation
import Testing

/// The co-host line end to end on loopback: `liveline serve`, a hoster with `--line`,
/// three guests co-hosting with flat colours, a viewer decoding the mixed stream.
@Suite("liveline co-host line end to end", .serialized)
struct CohostLineTests {
    typealias RGB = (r: Int, g: Int, b: Int)
    static let palette: [String: RGB] = [
        "white": (255, 255, 255), "red": (255, 0, 0), "green": (0, 255, 0), "blue": (0, 0, 255),
        "black": (0, 0, 0), "grey": (128, 128, 128),
    ]

    /// The palette name nearest to `colour` (codec error moves a flat colour a little).
    static func name(_ colour: RGB) -> String {
        palette.min { a, b in
            func distance(_ p: RGB) -> Int { abs(p.r - colour.r) + abs(p.g - colour.g) + abs(p.b - colour.b) }
            return distance(a.value) < distance(b.value)
        }!.key
    }

    static func centres(cohosts: Int) throws -> [(x: Int, y: Int)] {
        try LayoutCommandTests.layout(["--canvas", "640x360", "--template", "equal", "--cohosts", String(cohosts)])
            .map { ($0.x + $0.w / 2, $0.y + $0.h / 2) }
    }

    /// The viewer's latency p50 over a short play, from the capture-time SEI.
    static func latencyP50(_ url: String) throws -> Double {
        let result = try CLI.liveline("guest", url, "--duration", "3", "--stats", "json")
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let summary = result.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }.first { $0["event"] as? String == "summary" }
        return try #require(summary?["latencyP50Ms"] as? Double)
    }

    @Test("three co-hosts appear at the layout's rectangles, a hang-up reflows to two, a fourth applicant gets 602")
    func threeCohosts() throws {
        let server = try Server()
        let url = server.url("e2e")
        let signal = "ws://127.0.0.1:\(server.httpPort)/line"
        let hoster = try KitProcess(["host", url, "--source", "color:white", "--size", "640x360", "--bitrate", "1500",
                                     "--mix", "equal", "--line", "e2e", "--accept", "auto", "--signal", signal,
                                     "--stats", "json"])
        defer { hoster.stop() }
        #expect(hoster.waitFor(timeout: 10) { $0["event"] as? String == "lineResult" && $0["code"] as? Int == 0 } != nil)
        let latencyAlone = try Self.latencyP50(url)

        // The viewer samples the centre of every rectangle of the 1-, 2- and 3-co-host layouts.
        let layouts = try (1...3).map { try Self.centres(cohosts: $0) }
        let points = layouts.flatMap { $0 }
        func index(cohosts: Int, participant: Int) -> Int { (0..<(cohosts - 1)).reduce(0) { $0 + $1 + 2 } + participant }
        let viewerProcess = Process()
        viewerProcess.executableURL = URL(fileURLWithPath: CLI.liveline)
        viewerProcess.arguments = ["guest", url, "--y4m", "-"]
        let pipe = Pipe()
        viewerProcess.standardOutput = pipe
        viewerProcess.standardError = FileHandle.nullDevice
        try viewerProcess.run()
        defer {
            viewerProcess.terminate()
            viewerProcess.waitUntilExit()
        }
        let viewer = Y4MReader(handle: pipe.fileHandleForReading, points: points)
        #expect(viewer.waitFor(timeout: 10) { _ in true } != nil)

        var cohosts: [String: KitProcess] = [:]
        defer { cohosts.values.forEach { $0.stop() } }
        var acceptToPicture: [Double] = []
        for (n, colour) in ["red", "green", "blue"].enumerated() {
            let count = n + 1
            cohosts[colour] = try KitProcess(["guest", url, "--apply", "--no-play", "--source", "color:" + colour,
                                              "--size", "320x180", "--signal", signal, "--user-id", colour,
                                              "--stats", "json"])
            let opened = try #require(hoster.waitFor(timeout: 10) {
                $0["event"] as? String == "cohostOpened" && $0["userId"] as? String == colour
            }, "the hoster never opened \(colour)")
            #expect(cohosts[colour]!.waitFor(timeout: 5) { $0["event"] as? String == "applicationResult" && $0["code"] as? Int == 0 } != nil)
            let shown = try #require(viewer.waitFor(after: opened, timeout: 10) {
                Self.name($0.colours[index(cohosts: count, participant: count)]) == colour
            }, "the viewer never showed \(colour) in tile \(count)")
            acceptToPicture.append(shown.time.timeIntervalSince(opened) * 1000)
        }

        // All three at the rectangles `liveline layout` prints, the host's white in its own.
        let expected = ["white", "red", "green", "blue"]
        let three = viewer.waitFor(timeout: 5) { frame in
            (0...3).allSatisfy { Self.name(frame.colours[index(cohosts: 3, participant: $0)]) == expected[$0] }
        }
        #expect(three != nil, "last frame: \(viewer.all.last.map { f in (0...3).map { Self.name(f.colours[index(cohosts: 3, participant: $0)]) } } ?? [])")
        let latencyMixed = try Self.latencyP50(url)

        // A fourth applicant: refused with 602, exit status 3.
        let fourth = try CLI.liveline("guest", url, "--apply", "--no-play", "--source", "color:yellow",
                                      "--signal", signal, "--user-id", "yellow", "--stats", "json", "--duration", "15")
        #expect(fourth.status == 3, "stderr: \(fourth.stderr)")
        #expect(fourth.stdout.contains("\"event\":\"applicationResult\",\"code\":602"), "stdout: \(fourth.stdout)")
        #expect(fourth.stderr.contains("602"))
        #expect(hoster.waitFor(timeout: 5) { $0["event"] as? String == "refused" && $0["code"] as? Int == 602 } != nil)

        // Green (co-host 2) hangs up: blue moves up, the layout shows two.
        cohosts["green"]?.stop()
        let closed = try #require(hoster.waitFor(timeout: 10) {
            $0["event"] as? String == "cohostClosed" && $0["userId"] as? String == "green"
        })
        let reflowed = viewer.waitFor(after: closed, timeout: 10) { frame in
            ["white", "red", "blue"].enumerated().allSatisfy { Self.name(frame.colours[index(cohosts: 2, participant: $0.offset)]) == $0.element }
        }
        #expect(reflowed != nil, "the layout did not reflow to white, red, blue")

        let figures = acceptToPicture.map { String(format: "%.0f", $0) }.joined(separator: ", ")
        print(String(format: "co-host line: accept → co-host's first frame in the viewer's picture: %@ ms; "
                     + "viewer latency p50 %.1f ms with no co-host, %.1f ms with three (the mix adds %.1f ms)",
                     figures, latencyAlone, latencyMixed, latencyMixed - latencyAlone))
        #expect(acceptToPicture.allSatisfy { $0 < 10_000 })
    }

    @Test("--accept none turns an applicant down: the guest reports 601 and exits with 3")
    func rejected() throws {
        let server = try Server()
        let url = server.url("nobody")
        let signal = "ws://127.0.0.1:\(server.httpPort)/line"
        let hoster = try KitProcess(["host", url, "--source", "color:white", "--size", "320x180", "--line", "nobody",
                                     "--accept", "none", "--signal", signal, "--stats", "json"])
        defer { hoster.stop() }
        #expect(hoster.waitFor(timeout: 10) { $0["event"] as? String == "lineResult" } != nil)
        let guest = try CLI.liveline("guest", url, "--apply", "--no-play", "--signal", signal, "--stats", "json", "--duration", "10")
        #expect(guest.status == 3, "stderr: \(guest.stderr)")
        #expect(guest.stdout.contains("\"event\":\"applicationResult\",\"code\":601"), "stdout: \(guest.stdout)")
    }

    @Test("host --line fails loudly when the line cannot be opened (exit 3, the code on stderr) or reached (exit 1), instead of running without it")
    func lineRefusedFailsLoudly() throws {
        let server = try Server()
        let signal = "ws://127.0.0.1:\(server.httpPort)/line"
        // Line "other" is not this hoster's stream: the server refuses it (104).
        let refused = try CLI.liveline("host", server.url("mine"), "--source", "color:white", "--size", "160x90", "--line", "other",
                                       "--accept", "none", "--signal", signal, "--duration", "20")
        #expect(refused.status == 3, "stderr: \(refused.stderr)")
        #expect(refused.stderr.contains("the co-host line was not opened: code 104"), "stderr: \(refused.stderr)")
        // A signaling address that is not the RTMP server's: refused before anything
        // starts, saying what to pass.
        let elsewhere = try CLI.liveline("host", server.url("mine"), "--source", "color:white", "--size", "160x90", "--line", "mine",
                                         "--accept", "none", "--signal", "ws://127.0.0.1:9/line", "--duration", "20")
        #expect(elsewhere.status == 1, "stderr: \(elsewhere.stderr)")
        #expect(elsewhere.stderr.contains("pass --signal \(signal) or leave --signal out"), "stderr: \(elsewhere.stderr)")
    }

    @Test("host and guest find the line from the RTMP URL (the relay names its signaling in connect's answer), on any HTTP port; a --signal of another server fails with exit 1 and what to pass")
    func signalingFromTheRTMPURL() throws {
        let server = try Server()
        let decoy = try Server()
        let url = server.url("found")
        // No --signal: the line opens on the server of the RTMP URL, whatever its HTTP port.
        let hoster = try KitProcess(["host", url, "--source", "color:white", "--size", "160x90", "--line", "found",
                                     "--accept", "auto", "--stats", "json", "--duration", "30"])
        defer { hoster.stop() }
        #expect(hoster.waitFor(timeout: 10) { $0["event"] as? String == "lineResult" && $0["code"] as? Int == 0 } != nil,
                "\(hoster.names)")
        let guest = try KitProcess(["guest", url, "--apply", "--no-play", "--source", "color:red", "--size", "160x90",
                                    "--user-id", "red", "--stats", "json", "--duration", "30"])
        defer { guest.stop() }
        #expect(guest.waitFor(timeout: 10) { $0["event"] as? String == "applicationResult" && $0["code"] as? Int == 0 } != nil,
                "\(guest.names)")
        #expect(guest.waitFor(timeout: 10) { $0["event"] as? String == "cohostPush.ok" } != nil, "\(guest.names)")
        // The decoy's signaling with this server's RTMP URL: the line would be the decoy's.
        let wrong = "ws://127.0.0.1:\(decoy.httpPort)/line"
        for command in ["host", "guest"] {
            let extra = command == "host" ? ["--line", "found2", "--source", "color:white", "--size", "160x90"] : ["--apply", "--no-play"]
            let result = try CLI.run(CLI.liveline, [command, server.url("found2")] + extra + ["--signal", wrong, "--duration", "10"])
            #expect(result.status == 1, "\(command) stderr: \(result.stderr)")
            #expect(result.stderr.contains("pass --signal ws://127.0.0.1:\(server.httpPort)/line"), "\(command) stderr: \(result.stderr)")
        }
    }

    @Test("serve killed and back on the same ports under a running line: the hoster's line reconnects and is created again, the co-host applies again and is back, a newcomer is accepted; no --signal anywhere")
    func serverRestartUnderTheLine() throws {
        let server = try Server()
        let url = server.url("back")
        let hoster = try KitProcess(["host", url, "--source", "color:white", "--size", "160x90", "--line", "back", "--accept", "auto",
                                     "--stats", "json", "--duration", "90"])
        defer { hoster.stop() }
        func count(_ process: KitProcess, _ event: String, code: Int? = nil) -> Int {
            process.events.filter { $0.object["event"] as? String == event && (code == nil || $0.object["code"] as? Int == code) }.count
        }
        func waitForCount(_ n: Int, _ process: KitProcess, _ event: String, code: Int? = nil, timeout: Double = 30) -> Bool {
            process.waitFor(timeout: timeout) { _ in count(process, event, code: code) >= n } != nil
        }
        #expect(waitForCount(1, hoster, "lineResult", code: 0, timeout: 10))
        let guest = try KitProcess(["guest", url, "--apply", "--no-play", "--source", "color:red", "--size", "160x90",
                                    "--user-id", "red", "--stats", "json", "--duration", "90"])
        defer { guest.stop() }
        #expect(waitForCount(1, guest, "applicationResult", code: 0, timeout: 10), "\(guest.names)")
        #expect(waitForCount(1, hoster, "cohostOpened", timeout: 10))

        kill(server.background.process.processIdentifier, SIGKILL)
        server.background.process.waitUntilExit()
        #expect(waitForCount(1, hoster, "lineReconnecting", timeout: 10), "\(hoster.names)")
        let restarted = try Background(CLI.liveline, ["serve", "--rtmp", "127.0.0.1:\(server.rtmpPort)",
                                                      "--http", "127.0.0.1:\(server.httpPort)"])
        defer { restarted.stop() }
        _ = try restarted.waitForLine(prefix: "ready")

        #expect(waitForCount(2, hoster, "lineResult", code: 0), "\(hoster.names)")
        #expect(waitForCount(2, guest, "applicationResult", code: 0), "\(guest.names)")
        #expect(waitForCount(2, hoster, "cohostOpened"), "\(hoster.names)")
        let newcomer = try CLI.liveline("guest", url, "--apply", "--no-play", "--source", "color:green", "--size", "160x90",
                                        "--user-id", "green", "--stats", "json", "--duration", "4")
        #expect(newcomer.stdout.contains("\"event\":\"applicationResult\",\"code\":0"), "stdout: \(newcomer.stdout) stderr: \(newcomer.stderr)")
        #expect(!hoster.names.contains("lineClosed") && hoster.process.isRunning, "\(hoster.names)")
    }

    @Test("with tokens: hoster and guest each by a --token-command open, join, co-host and mix; a guest without a token gets 213")
    func linesWithTokens() throws {
        let relay = try TokenRelay()
        defer { relay.stop() }
        let url = relay.server.url("tok")
        let signal = relay.signal
        let command = { (sub: String, permissions: String) in relay.command(sub, permissions, ttl: "10m") }
        let hoster = try KitProcess(["host", url, "--source", "color:white", "--size", "320x180", "--line", "tok", "--accept", "auto",
                                     "--signal", signal, "--stats", "json", "--duration", "30",
                                     "--token-command", command("alice", "--publish live/tok --line-host tok --play 'live/line-*'")])
        defer { hoster.stop() }
        #expect(hoster.waitFor(timeout: 10) { $0["event"] as? String == "lineResult" && $0["code"] as? Int == 0 } != nil)
        let guest = try KitProcess(["guest", url, "--apply", "--no-play", "--signal", signal, "--stats", "json", "--duration", "30",
                                    "--source", "color:red", "--size", "160x90",
                                    "--token-command", command("bob", "--line-guest tok --publish 'live/line-*'")])
        defer { guest.stop() }
        #expect(guest.waitFor(timeout: 10) { $0["event"] as? String == "applicationResult" && $0["code"] as? Int == 0 } != nil)
        #expect(hoster.waitFor(timeout: 15) { $0["event"] as? String == "application" && $0["userId"] as? String == "bob" } != nil)
        #expect(hoster.waitFor(timeout: 15) { $0["event"] as? String == "cohostFirstFrame" } != nil, "the hoster never mixed the co-host")
        let bare = try CLI.liveline("guest", url, "--apply", "--no-play", "--signal", signal, "--stats", "json", "--duration", "5")
        #expect(bare.stdout.contains("\"event\":\"lineResult\",\"code\":213"), "stdout: \(bare.stdout)")
    }

    @Test("tokens lasting 20 s: a guest with --token-command renews (tokenWillExpire half-way) and stays in; one with --token is dropped with 212")
    func renewalFromTheCommandLine() throws {
        let relay = try TokenRelay()
        defer { relay.stop() }
        let url = relay.server.url("ren")
        let signal = relay.signal
        func command(_ sub: String, _ permissions: String, ttl: String) -> String { relay.command(sub, permissions, ttl: ttl) }
        let hoster = try KitProcess(["host", url, "--source", "color:white", "--size", "160x90", "--line", "ren", "--accept", "none",
                                     "--signal", signal, "--stats", "json", "--duration", "40",
                                     "--token-command", command("alice", "--publish live/ren --line-host ren", ttl: "10m")])
        defer { _ = hoster.stop() }
        #expect(hoster.waitFor(timeout: 10) { $0["event"] as? String == "lineResult" && $0["code"] as? Int == 0 } != nil)
        let renewing = try KitProcess(["guest", url, "--line", "ren", "--no-play", "--signal", signal, "--stats", "json", "--duration", "40",
                                       "--token-command", command("bob", "--line-guest ren", ttl: "20s")])
        defer { _ = renewing.stop() }
        let fixedToken = try CLI.liveline("token", "--secret-file", relay.secret, "--sub", "carl", "--line-guest", "ren", "--ttl", "20s")
            .stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let fixed = try KitProcess(["guest", url, "--line", "ren", "--no-play", "--signal", signal, "--stats", "json", "--duration", "40",
                                    "--token", fixedToken])
        defer { _ = fixed.stop() }
        #expect(fixed.waitFor(timeout: 30) { $0["event"] as? String == "authFailed" && $0["code"] as? Int == 212 } != nil,
                "\(fixed.names)")
        #expect(renewing.waitFor(timeout: 5) { $0["event"] as? String == "tokenRenewed" } != nil, "\(renewing.names)")
        #expect(fixed.waitFor(timeout: 5) { $0["event"] as? String == "lineClosed" && $0["code"] as? Int == 212 } != nil, "\(fixed.names)")
        #expect(hoster.waitFor(timeout: 5) {
            $0["event"] as? String == "memberCount" && $0["total"] as? Int == 2 && $0["roomId"] as? String == "ren"
        } != nil)
        #expect(!renewing.names.contains("authFailed") && !renewing.names.contains("lineClosed"), "\(renewing.names)")
    }

    @Test("line options without what they need are usage errors", arguments: [
        ["host", "--line", "x"],
        ["host", "rtmp://127.0.0.1/live/x", "--line", "x", "--accept", "maybe"],
        ["guest", "rtmp://127.0.0.1/live/x", "--no-play"],
        ["guest", "rtmp://127.0.0.1/live/x", "--apply", "--signal", "http://127.0.0.1:8080/line"],
    ])
    func usageErrors(arguments: [String]) throws {
        let result = try CLI.run(CLI.liveline, arguments)
        #expect(result.status == 2, "stderr: \(result.stderr)")
    }
}

/// A `liveline serve` with tokens on, the secret it checks, and `--token-command`s that
/// mint from that secret.
private struct TokenRelay {
    let directory: URL
    let secret: String
    let server: Server

    init() throws {
        directory = try CLI.temporaryDirectory()
        secret = directory.appendingPathComponent("secret").path
        #expect(try CLI.liveline("token", "--new-secret", secret).status == 0)
        server = try Server(["--auth-secret-file", secret])
    }

    var signal: String { "ws://127.0.0.1:\(server.httpPort)/line" }

    func command(_ sub: String, _ permissions: String, ttl: String) -> String {
        "'\(CLI.liveline)' token --secret-file '\(secret)' --sub \(sub) \(permissions) --ttl \(ttl)"
    }

    func stop() {
        server.background.stop()
        try? FileManager.default.removeItem(at: directory)
    }
}
