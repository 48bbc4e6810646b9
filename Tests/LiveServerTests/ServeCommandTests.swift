import Foundation
import LiveTestSupport
import Testing

@Suite("liveline serve")
struct ServeCommandTests {
    @Test("prints one ready line with the bound ports, serves, and exits 0 on SIGTERM")
    func readyAndTerminate() throws {
        let serve = try ChildProcess(BuildProducts.liveline, ["serve", "--rtmp", "127.0.0.1:0", "--http", "127.0.0.1:0"])
        #expect(eventually(10) { serve.stdout.contains("\n") })
        let line = serve.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let match = try #require(try Regex(#"^ready rtmp://127\.0\.0\.1:(\d+) http://127\.0\.0\.1:(\d+)$"#).wholeMatch(in: line))
        let rtmpPort = try #require(UInt16(match.output[1].substring ?? ""))
        let httpPort = try #require(UInt16(match.output[2].substring ?? ""))
        #expect(rtmpPort != 0 && httpPort != 0)
        #expect(try httpGet(port: httpPort, "/healthz").body == "ok\n")
        let player = try TestRTMPClient(port: rtmpPort, path: "live/x", mode: .play)
        #expect(try player.start().map { if case .playing = $0 { true } else { false } } == true)
        serve.signal(SIGTERM)
        #expect(serve.wait(timeout: 10) == 0)
        #expect(serve.stdout.split(separator: "\n").count == 1)
    }

    @Test("--verbose lines start with the UTC time to the millisecond")
    func verboseTimestamps() throws {
        let serve = try ChildProcess(BuildProducts.liveline, ["serve", "--rtmp", "127.0.0.1:0", "--http", "127.0.0.1:0", "--verbose"])
        defer { serve.signal(SIGTERM); _ = serve.wait(timeout: 10) }
        let (rtmpPort, _) = try servePorts(serve)
        let player = try TestRTMPClient(port: rtmpPort, path: "live/stamped", mode: .play)
        #expect(try player.start().map { if case .playing = $0 { true } else { false } } == true)
        #expect(eventually(5) { serve.stderr.contains("playing live/stamped") }, "\(serve.stderr)")
        let line = try #require(serve.stderr.split(separator: "\n").first { $0.contains("playing live/stamped") })
        // Before: "liveline info: rtmp 127.0.0.1:PORT: playing live/stamped", no time.
        #expect(try Regex(#"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z liveline info: rtmp "#).firstMatch(in: line) != nil, "\(line)")
    }

    @Test("connections refused at --max-connections are logged: at once, then one line a second with the count")
    func refusalsLogged() throws {
        let serve = try ChildProcess(BuildProducts.liveline, ["serve", "--rtmp", "127.0.0.1:0", "--http", "127.0.0.1:0",
                                                             "--max-connections", "1"])
        defer { serve.signal(SIGTERM); _ = serve.wait(timeout: 10) }
        let (rtmpPort, _) = try servePorts(serve)
        let holder = try TestSocket(port: rtmpPort)
        defer { holder.close() }
        // Wait until the holder counts, then 20 more connections, refused at once.
        usleep(300_000)
        let started = Date()
        for _ in 0..<20 {
            let extra = try TestSocket(port: rtmpPort)
            _ = extra.receive(timeout: 2)
            extra.close()
        }
        let elapsed = Date().timeIntervalSince(started)
        func refusals() -> [Int] {
            serve.stderr.split(separator: "\n").filter { $0.contains("refused") }.compactMap { line in
                (try? Regex(#"refused (\d+) connection"#).firstMatch(in: line)).flatMap { $0.output[1].substring }.flatMap { Int($0) }
            }
        }
        // Before: nothing at all was logged.
        #expect(eventually(3) { refusals().reduce(0, +) == 20 }, "\(serve.stderr)")
        let counts = refusals()
        #expect(counts.first == 1)
        #expect(counts.count <= Int(elapsed) + 2, "\(counts) in \(elapsed) s")
        #expect(serve.stderr.contains("(1 open, the most it takes)"), "\(serve.stderr)")
    }

    @Test("--help exits 0; a bad address is a usage error (exit 2)")
    func usage() throws {
        let help = try ChildProcess(BuildProducts.liveline, ["serve", "--help"])
        #expect(help.wait(timeout: 10) == 0)
        #expect(help.stdout.contains("--rtmp HOST:PORT"))
        let bad = try ChildProcess(BuildProducts.liveline, ["serve", "--rtmp", "nowhere"])
        #expect(bad.wait(timeout: 10) == 2)
        #expect(bad.stderr.contains("--rtmp"))
    }
}
