import Foundation
import Testing

/// What a person reads when a command line is wrong or a run fails: it says what is wrong
/// in words (never in Swift type names), and nonsense is refused instead of run.
@Suite("liveline messages a person can act on")
struct UsageMessageTests {
    static let url = "rtmp://127.0.0.1:9/live/x"

    /// Runs liveline and checks a usage error: exit 2, `message` on stderr, nothing on stdout.
    static func expectUsageError(_ arguments: [String], _ message: String,
                                 sourceLocation: SourceLocation = #_sourceLocation) throws {
        let result = try CLI.run(CLI.liveline, arguments)
        #expect(result.status == 2, "stderr: \(result.stderr)", sourceLocation: sourceLocation)
        #expect(result.stderr.contains(message), "stderr: \(result.stderr)", sourceLocation: sourceLocation)
        #expect(result.stdout.isEmpty, "stdout: \(result.stdout)", sourceLocation: sourceLocation)
    }

    @Test("an option given twice says so, instead of calling it unknown", arguments: [
        (["host", "--record", "/tmp/a.flv", "--record", "/tmp/b.flv", "--duration", "0.1"], "--record given twice"),
        (["host", "--mirror", "--mirror", "--duration", "0.1"], "--mirror given twice"),
        (["host", "--fps=25", "--fps", "30", "--duration", "0.1"], "--fps given twice"),
        (["guest", url, "--frames", "1", "--frames", "2"], "--frames given twice"),
        (["layout", "--png", "/tmp/a.png", "--png", "/tmp/b.png"], "--png given twice"),
        (["serve", "--verbose", "--verbose"], "--verbose given twice"),
        (["token", "--new-secret", "/tmp/a", "--new-secret", "/tmp/b"], "--new-secret given twice"),
    ])
    func repeatedOption(arguments: [String], message: String) throws {
        try Self.expectUsageError(arguments, message)
    }

    @Test("a mistyped option is met with the nearest one the command has", arguments: [
        (["host", "--recrod", "/tmp/a.flv", "--duration", "0.1"], "did you mean --record?"),
        (["guest", url, "--snapshto", "/tmp/a.png"], "did you mean --snapshot?"),
        (["serve", "--max-conections", "5"], "did you mean --max-connections?"),
        (["layout", "--canvs", "320x180"], "did you mean --canvas?"),
    ])
    func typo(arguments: [String], message: String) throws {
        try Self.expectUsageError(arguments, message)
        let far = try CLI.run(CLI.liveline, ["host", "--frobnicate", "--duration", "0.1"])
        #expect(far.status == 2 && !far.stderr.contains("did you mean"), "\(far.stderr)")
        try Self.expectUsageError(["host", "--mirror=yes", "--duration", "0.1"], "--mirror takes no value")
        // serve's help mentions host's --line in its prose; serve has no such option.
        try Self.expectUsageError(["serve", "--line", "x"], "unknown option '--line'")
    }

    @Test("serve has no configuration file and says so, pointing to the options", arguments: [
        ["serve", "--config", "relay.conf"],
        ["serve", "-c", "nginx.conf"],
        ["serve", "--config=relay.conf"],
        ["serve", "relay.conf"],
    ])
    func noConfigFile(arguments: [String]) throws {
        let result = try CLI.run(CLI.liveline, arguments)
        #expect(result.status == 2, "stderr: \(result.stderr)")
        #expect(result.stderr.contains("configuration file"), "stderr: \(result.stderr)")
        #expect(result.stderr.contains("--help"), "stderr: \(result.stderr)")
        #expect(!result.stderr.contains("unexpected argument") && !result.stderr.contains("unknown option"), "stderr: \(result.stderr)")
    }

    @Test("an RTMP URL that cannot be used says what is really wrong, and never shows a password", arguments: [
        ("rtmp://alice:hunter2@127.0.0.1/live/x", "user name or password"),
        ("rtmp://127.0.0.1:abc/live/x", "port that is not a number: 'abc'"),
        ("rtmp://127.0.0.1:99999/live/x", "port 99999, outside 1…65535"),
        ("rtmp://127.0.0.1//x", "no application name"),
        ("rtmp://127.0.0.1/live", "no stream name"),
        ("ftp://127.0.0.1/live/x", "rtmp://"),
    ])
    func badURL(text: String, message: String) throws {
        for command in ["guest", "host"] {
            let result = try CLI.run(CLI.liveline, [command, text, "--duration", "0.1"])
            #expect(result.status == 2, "\(command) stderr: \(result.stderr)")
            #expect(result.stderr.contains(message), "\(command) stderr: \(result.stderr)")
            #expect(!result.stderr.contains("hunter2"), "\(command) stderr: \(result.stderr)")
            #expect(Self.typeName(in: result.stderr) == nil, "\(command) stderr: \(result.stderr)")
        }
    }

    @Test("no message names a Swift type: usage errors, files, layouts and a peer that is not RTMP")
    func noTypeNames() throws {
        let peer = try NotRTMPPeer()
        defer { peer.close() }
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let runs: [[String]] = [
            ["guest", "rtmp://127.0.0.1:x/live/cam"],
            ["layout", "--canvas", "64x64", "--cohosts", "3", "--hor-pad", "40"],
            ["layout", "--hor", "middle"],
            ["host", "--size", "64x64", "--mix-test", "3", "--hor-pad", "40", "--duration", "0.1"],
            ["guest", Self.url, "--y4m", dir.appendingPathComponent("missing/dir/a.y4m").path, "--timeout", "1"],
            // A web server answers the RTMP handshake with an error page.
            ["guest", "rtmp://127.0.0.1:\(peer.port)/live/x", "--timeout", "5", "--reconnect-tries", "0"],
        ]
        for arguments in runs {
            let result = try CLI.run(CLI.liveline, arguments)
            #expect(result.status != 0, "\(arguments): \(result.stderr)")
            #expect(!result.stderr.isEmpty, "\(arguments)")
            let leaked = Self.typeName(in: result.stderr)
            #expect(leaked == nil, "\(arguments) names \(leaked ?? ""): \(result.stderr)")
        }
        let y4m = try CLI.liveline("guest", Self.url, "--y4m", dir.appendingPathComponent("missing/dir/a.y4m").path)
        #expect(y4m.stderr.contains("cannot open") && y4m.stderr.contains("for the y4m video"), "\(y4m.stderr)")
        let handshake = try CLI.liveline("guest", "rtmp://127.0.0.1:\(peer.port)/live/x", "--timeout", "5", "--reconnect-tries", "0")
        #expect(handshake.stderr.contains("RTMP handshake failed") && handshake.stderr.contains("HTTP port"), "\(handshake.stderr)")
        let layout = try CLI.liveline("layout", "--canvas", "64x64", "--cohosts", "3", "--hor-pad", "40")
        #expect(layout.stderr.contains("the mix layout does not fit"), "\(layout.stderr)")
    }

    @Test("a publish the server refuses carries the code of a refusal, not 100 (network error)")
    func refusedPublishCode() throws {
        let server = try Server()
        defer { server.background.stop() }
        let url = server.url("taken")
        let first = try KitProcess(["host", url, "--source", "color:white", "--size", "160x90", "--duration", "20", "--stats", "json"])
        defer { first.stop() }
        #expect(first.waitFor(timeout: 10) { $0["event"] as? String == "ok" } != nil)
        // The name is live and its publisher is not silent: a second publisher is refused (BadName).
        let second = try CLI.liveline("host", url, "--source", "color:red", "--size", "160x90", "--duration", "2",
                                      "--reconnect-tries", "0")
        #expect(second.status != 0, "stderr: \(second.stderr)")
        #expect(second.stderr.contains("NetStream.Publish.BadName"), "stderr: \(second.stderr)")
        #expect(second.stderr.contains("refused"), "stderr: \(second.stderr)")
        #expect(second.stderr.contains("code 102"), "stderr: \(second.stderr)")
        #expect(!second.stderr.contains("code 100"), "stderr: \(second.stderr)")
    }

    @Test("an application left unanswered ends with 605 in the anyRTC SDK's words, as the help says")
    func unansweredApplication() throws {
        let server = try Server(["--apply-timeout", "0.5"])
        defer { server.background.stop() }
        let url = server.url("quiet")
        let signal = "ws://127.0.0.1:\(server.httpPort)/line"
        // A hoster that answers by hand and never does: its stdin stays open and silent.
        let hoster = Process()
        hoster.executableURL = URL(fileURLWithPath: CLI.liveline)
        hoster.arguments = ["host", url, "--source", "color:white", "--size", "160x90", "--line", "quiet", "--signal", signal,
                            "--duration", "30", "--stats", "json"]
        let input = Pipe(), output = Pipe()
        hoster.standardInput = input
        hoster.standardOutput = output
        hoster.standardError = FileHandle.nullDevice
        try hoster.run()
        defer {
            hoster.terminate()
            hoster.waitUntilExit()
            try? input.fileHandleForWriting.close()
        }
        var opened = ""
        let deadline = Date().addingTimeInterval(10)
        while !opened.contains("\"lineResult\""), Date() < deadline {
            opened += String(decoding: output.fileHandleForReading.availableData, as: UTF8.self)
        }
        try #require(opened.contains("\"event\":\"lineResult\",\"code\":0"), "hoster: \(opened)")
        let guest = try CLI.liveline("guest", url, "--apply", "--no-play", "--signal", signal, "--duration", "10")
        #expect(guest.status == 3, "stderr: \(guest.stderr)")
        #expect(guest.stderr.contains("code 605 (stopped): the hoster did not answer in time"), "stderr: \(guest.stderr)")
        let help = try CLI.liveline("guest", "--help")
        #expect(help.stdout.contains("605 stopped: the hoster did not"), "\(help.stdout)")
    }

    @Test("a port in use says which one (RTMP or HTTP), on what address, and the option that moves it")
    func portInUse() throws {
        let server = try Server()
        defer { server.background.stop() }
        let rtmp = try CLI.liveline("serve", "--rtmp", "127.0.0.1:\(server.rtmpPort)", "--http", "127.0.0.1:0")
        #expect(rtmp.status == 1, "stderr: \(rtmp.stderr)")
        #expect(rtmp.stderr.contains("the RTMP address 127.0.0.1:\(server.rtmpPort) is already in use"), "stderr: \(rtmp.stderr)")
        #expect(rtmp.stderr.contains("--rtmp HOST:PORT"), "stderr: \(rtmp.stderr)")
        let http = try CLI.liveline("serve", "--rtmp", "127.0.0.1:0", "--http", "127.0.0.1:\(server.httpPort)")
        #expect(http.status == 1, "stderr: \(http.stderr)")
        #expect(http.stderr.contains("the HTTP address 127.0.0.1:\(server.httpPort) is already in use"), "stderr: \(http.stderr)")
        #expect(http.stderr.contains("--http HOST:PORT"), "stderr: \(http.stderr)")
        try Self.expectUsageError(["serve", "--rtmp", "127.0.0.1:7000", "--http", "127.0.0.1:7000"],
                                  "--rtmp and --http are both 127.0.0.1:7000: give each its own port")
        try Self.expectUsageError(["serve", "--http", "127.0.0.1:1935"], "--rtmp and --http are both 127.0.0.1:1935")
    }

    // MARK: - Nonsense refused

    @Test("host: contradictory or impossible options are usage errors that say what is wrong", arguments: [
        (["--logo", "media/logo.png@5000,5000"], "--logo position 5000,5000 is off the 1280x720 picture"),
        (["--size", "320x180", "--logo", "media/logo.png@200,100"], "reaches past the 320x180 picture"),
        (["--size", "160x90", "--logo", "media/logo.png"], "the logo is 240x96, larger than the 160x90 picture"),
        (["--filter", "original", "--beauty", "0.5"], "--beauty"),
        (["--filter", "blur", "--beauty", "0.5"], "--filter blur"),
        (["--min-bitrate", "3000"], "--min-bitrate 3000 is above the default --bitrate 2500"),
        (["--bitrate", "1000", "--min-bitrate", "1500"], "--min-bitrate 1500 is above --bitrate 1000"),
        (["--bitrate", "1000", "--max-bitrate", "800"], "--max-bitrate 800 is below --bitrate 1000"),
        (["--abr", "off", "--min-bitrate", "100"], "--abr off"),
        (["--accept", "auto"], "--accept needs --line"),
        (["--live-info", "{}"], "--live-info needs --line"),
        (["--signal", "ws://127.0.0.1:8080/line"], "--signal needs --line"),
        (["--source", "bogus"], "invalid source 'bogus'"),
        (["--source", "color:nocolour"], "unknown colour"),
        (["--reconnect-tries", "3", "--record", "/tmp/x.flv"], "--reconnect-tries needs an RTMP_URL"),
        (["--token", "T"], "--token needs an RTMP_URL"),
    ])
    func hostNonsense(arguments: [String], message: String) throws {
        let logo = CLI.packageRoot.appendingPathComponent("media/logo.png").path
        let given = arguments.map { $0.replacingOccurrences(of: "media/logo.png", with: logo) }
        try Self.expectUsageError(["host"] + given + ["--duration", "0.1"], message)
    }

    @Test("host: the checks leave sensible runs alone (beauty with --filter beauty, bounds around --bitrate, a logo that fits, a push)")
    func hostSensible() throws {
        let server = try Server()
        defer { server.background.stop() }
        let logo = CLI.packageRoot.appendingPathComponent("media/logo.png").path
        let result = try CLI.liveline("host", server.url("sensible"), "--size", "320x180", "--filter", "beauty", "--beauty", "0.8", "--bitrate", "1000",
                                      "--min-bitrate", "300", "--max-bitrate", "1500", "--logo", "\(logo)@80,84", "--duration", "0.2")
        #expect(result.status == 0, "stderr: \(result.stderr)")
    }

    @Test("a logo larger than the picture is refused; one as large as the picture is drawn")
    func logoSize() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let big = dir.appendingPathComponent("big.png").path
        try #require(try CLI.liveline("layout", "--canvas", "2000x2000", "--png", big).status == 0)
        try Self.expectUsageError(["host", "--logo", big, "--duration", "0.1"], "the logo is 2000x2000, larger than the 1280x720 picture")
        let frame = dir.appendingPathComponent("frame.png").path
        try #require(try CLI.liveline("layout", "--canvas", "320x180", "--png", frame).status == 0)
        let fits = try CLI.liveline("host", "--size", "320x180", "--logo", frame, "--duration", "0.2")
        #expect(fits.status == 0, "stderr: \(fits.stderr)")
    }

    @Test("guest: co-host options without --apply, and a bad --source, are usage errors", arguments: [
        (["--source", "color:red"], "--source needs --apply"),
        (["--line", "x", "--size", "320x180"], "--size needs --apply"),
        (["--line", "x", "--no-play", "--bitrate", "500"], "--bitrate needs --apply"),
        (["--fps", "15"], "--fps needs --apply"),
        (["--signal", "ws://127.0.0.1:8080/line"], "--signal needs --line or --apply"),
        (["--user-id", "bob"], "--user-id needs --line or --apply"),
        (["--apply", "--no-play", "--source", "bogus"], "invalid source 'bogus'"),
    ])
    func guestNonsense(arguments: [String], message: String) throws {
        try Self.expectUsageError(["guest", Self.url] + arguments + ["--duration", "0.1"], message)
    }

    @Test("layout --png needs a .png name: it never writes PNG bytes under another extension")
    func layoutPNGName() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let jpeg = dir.appendingPathComponent("x.jpg").path
        try Self.expectUsageError(["layout", "--png", jpeg], "--png writes a PNG picture")
        #expect(!FileManager.default.fileExists(atPath: jpeg))
    }

    // MARK: - Type names

    /// The Swift types declared in Sources/ whose names cannot pass for words (two
    /// capitals or more: RTMPURL, MixLayout, Y4MWriter, AMF0Decoder), found by reading the sources.
    static let typeNames: [String] = {
        let sources = CLI.packageRoot.appendingPathComponent("Sources")
        guard let files = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil) else { return [] }
        let keywords: Set<Substring> = ["struct", "enum", "class", "protocol", "actor", "typealias"]
        var names = Set<String>()
        for case let file as URL in files where file.pathExtension == "swift" {
            guard let text = try? String(contentsOf: file, encoding: .utf8) else { continue }
            let words = text.split { !($0.isLetter || $0.isNumber || $0 == "_") }
            for (keyword, name) in zip(words, words.dropFirst()) where keywords.contains(keyword) && name.first?.isUppercase == true {
                names.insert(String(name))
            }
        }
        // The product's own name is a word here.
        names.remove("LiveLine")
        return names.filter { $0.filter(\.isUppercase).count >= 2 }.sorted()
    }()

    /// The first declared type name written as code in `text` (`Name(`, `Name:`, `Name.member`), nil when none.
    static func typeName(in text: String) -> String? {
        #expect(typeNames.contains("RTMPURL") && typeNames.contains("MixLayout") && typeNames.contains("Y4MWriter"))
        for name in typeNames {
            for suffix in ["(", ":", "."] where text.contains(name + suffix) { return name }
        }
        return nil
    }
}

/// A web server where an RTMP server was expected: every connection gets an HTTP error
/// page at once and is closed.
private final class NotRTMPPeer: @unchecked Sendable {
    // @unchecked: `socket` is set once in init; the accept thread only reads it.
    let socket: Int32
    let port: Int

    init() throws {
        (socket, port) = try TroubleProxy.listen()
        Thread.detachNewThread { [socket] in
            while true {
                let client = accept(socket, nil, nil)
                if client < 0 { return }
                // Read the client's C0 and C1 first, so closing sends FIN, not a reset.
                var buffer = [UInt8](repeating: 0, count: 1537)
                var received = 0
                while received < buffer.count {
                    let count = buffer.withUnsafeMutableBytes { recv(client, $0.baseAddress! + received, $0.count - received, 0) }
                    if count <= 0 { break }
                    received += count
                }
                let page = Array("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n".utf8)
                _ = page.withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                Glibc.close(client)
            }
        }
    }

    func close() {
        shutdown(socket, Int32(SHUT_RDWR))
        Glibc.close(socket)
    }
}
