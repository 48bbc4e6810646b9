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
