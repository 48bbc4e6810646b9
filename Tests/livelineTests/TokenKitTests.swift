import Foundation
import LiveAuth
import Testing

/// `liveline host` and `guest` with `--token` / `--token-command` against `liveline serve
/// --auth-secret-file`, as real processes on loopback.
@Suite("host and guest with access tokens", .serialized)
struct TokenKitTests {
    /// A secret file in a fresh folder, and a shell command that mints a token with it and
    /// counts its runs in `count`.
    struct Secrets {
        let directory: URL
        var secretFile: String { directory.appendingPathComponent("secret").path }
        var count: String { directory.appendingPathComponent("count").path }

        init() throws {
            directory = try CLI.temporaryDirectory()
            #expect(try CLI.liveline("token", "--new-secret", secretFile).status == 0)
        }

        func command(_ permissions: String, ttl: String = "10m") -> String {
            "'\(CLI.liveline)' token --secret-file '\(secretFile)' --sub alice \(permissions) --ttl \(ttl) && echo run >> '\(count)'"
        }

        func token(_ permissions: [String]) throws -> String {
            let result = try CLI.run(CLI.liveline, ["token", "--secret-file", secretFile, "--sub", "bob"] + permissions)
            #expect(result.status == 0, "\(result.stderr)")
            return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        }

        var runs: Int { ((try? String(contentsOfFile: count, encoding: .utf8)) ?? "").split(separator: "\n").count }
    }

    @Test("with tokens the hoster publishes and the guest plays; without one, or with a failing command, each says why")
    func hostAndGuest() throws {
        let secrets = try Secrets()
        defer { try? FileManager.default.removeItem(at: secrets.directory) }
        let server = try Server(["--auth-secret-file", secrets.secretFile])
        defer { server.background.stop() }
        let url = server.url("room")

        let host = try KitProcess(["host", url, "--size", "320x240", "--duration", "8", "--stats", "json",
                                   "--token-command", secrets.command("--publish live/room")])
        defer { host.stop() }
        #expect(host.waitFor(timeout: 10) { $0["event"] as? String == "ok" } != nil, "\(host.names)")
        #expect(secrets.runs == 1)

        let guest = try CLI.run(CLI.liveline, ["guest", url, "--frames", "10", "--token", try secrets.token(["--play", "live/*"])])
        #expect(guest.status == 0, "\(guest.stderr)")
        let refusedGuest = try CLI.run(CLI.liveline, ["guest", url, "--frames", "10", "--timeout", "3"])
        #expect(refusedGuest.status == 3, "a refused play exits with 3: \(refusedGuest.stderr)")
        #expect(refusedGuest.stderr.contains("213 the token must be verified: no token given"), "\(refusedGuest.stderr)")
        let wrongGuest = try CLI.run(CLI.liveline, ["guest", url, "--frames", "10", "--timeout", "3",
                                                    "--token", try secrets.token(["--play", "live/other"])])
        #expect(wrongGuest.stderr.contains("104 unauthorized"), "\(wrongGuest.stderr)")

        // A second hoster without a token for the name is refused, and the first stays on air.
        let intruder = try CLI.run(CLI.liveline, ["host", url, "--size", "320x240", "--duration", "1"])
        #expect(intruder.status == 3, "a refused publish exits with 3: \(intruder.stderr)")
        #expect(intruder.stderr.contains("213 the token must be verified"), "\(intruder.stderr)")
        let failing = try CLI.run(CLI.liveline, ["host", server.url("other"), "--size", "320x240", "--duration", "1",
                                                 "--token-command", "echo no token service >&2; exit 3"])
        #expect(failing.status == 1)
        #expect(failing.stderr.contains("token command 'echo no token service >&2; exit 3' exited with status 3"), "\(failing.stderr)")
        #expect(failing.stderr.contains("no token service"))
        #expect(!host.names.contains("failed"), "\(host.names)")
    }

    @Test("--token and --token-command together are a usage error")
    func bothOptions() throws {
        let result = try CLI.liveline("host", "rtmp://127.0.0.1:1/live/x", "--token", "a", "--token-command", "echo b")
        #expect(result.status == 2)
        #expect(result.stderr.contains("give --token or --token-command, not both"))
    }

    @Test("after the server restarts, the hoster's reconnect asks the token command again and the guest's frames resume")
    func reconnectWithFreshToken() throws {
        let secrets = try Secrets()
        defer { try? FileManager.default.removeItem(at: secrets.directory) }
        let server = try Server(["--auth-secret-file", secrets.secretFile])
        let url = server.url("again")
        let host = try KitProcess(["host", url, "--size", "320x240", "--keyint", "1", "--stats", "json",
                                   "--token-command", secrets.command("--publish live/again")])
        defer { host.stop() }
        #expect(host.waitFor(timeout: 10) { $0["event"] as? String == "ok" } != nil)
        let guest = try KitProcess(["guest", url, "--stats", "json", "--token-command", secrets.command("--play live/again")])
        defer { guest.stop() }
        #expect(guest.waitFor(timeout: 10) { $0["event"] as? String == "firstFrame" } != nil)
        #expect(secrets.runs == 2)
        let restarted = try server.killAndRestart(["--auth-secret-file", secrets.secretFile])
        defer { restarted.stop() }
        let framesAtRestart = guest.events.compactMap { ($0.object["frames"] as? Int) }.last ?? 0
        let resumed = guest.waitFor(timeout: 8) { line in
            line["event"] as? String == "stats" && (line["frames"] as? Int ?? 0) > framesAtRestart + 5
        }
        #expect(resumed != nil, "guest frames never resumed: \(guest.names.suffix(8))")
        // At least one more run each for the hoster's and the guest's reconnects.
        #expect(secrets.runs >= 4, "token command ran \(secrets.runs) times")
        #expect(!host.names.contains("failed"), "\(host.names)")
    }
}
