import Foundation
import LiveAuth
import Testing

@Suite("liveline token")
struct TokenCommandTests {
    @Test("--new-secret makes a 0600 secret once; a minted token verifies with it and carries every permission")
    func newSecretAndMint() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let secretFile = dir.appendingPathComponent("secret").path
        let created = try CLI.liveline("token", "--new-secret", secretFile)
        #expect(created.status == 0, "stderr: \(created.stderr)")
        let mode = try FileManager.default.attributesOfItem(atPath: secretFile)[.posixPermissions] as? NSNumber
        #expect(mode?.intValue == 0o600)
        let again = try CLI.liveline("token", "--new-secret", secretFile)
        #expect(again.status == 1)
        #expect(again.stderr.contains("already exists"))

        let before = Int64(Date().timeIntervalSince1970)
        let minted = try CLI.liveline(
            "token", "--secret-file", secretFile, "--sub", "alice", "--publish", "live/room1", "--play", "live/a",
            "--play=live/b", "--line-host", "room1", "--line-guest", "room2", "--api", "api/*", "--call", "alice", "--ttl", "20m")
        #expect(minted.status == 0, "stderr: \(minted.stderr)")
        let token = minted.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(!token.contains("\n"))
        let verifier = TokenVerifier(secret: try TokenSecret.load(path: secretFile))
        let claims = try verifier.verify(token, nowSeconds: before)
        #expect(claims.sub == "alice")
        #expect(claims.perm == [
            AccessPermission(action: .publish, path: "live/room1"), AccessPermission(action: .play, path: "live/a"),
            AccessPermission(action: .play, path: "live/b"), AccessPermission(action: .lineHost, path: "room1"),
            AccessPermission(action: .lineGuest, path: "room2"), AccessPermission(action: .api, path: "api/*"),
            AccessPermission(action: .call, path: "alice"),
        ])
        let iat = try #require(claims.iat)
        #expect(iat >= before && iat <= before + 5)
        #expect(claims.exp == iat + 1200)
    }

    @Test("--ttl takes s, m, h, d and bare seconds; the default is 1h")
    func ttlUnits() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let secretFile = dir.appendingPathComponent("secret").path
        #expect(try CLI.liveline("token", "--new-secret", secretFile).status == 0)
        for (ttl, seconds) in [("30s", 30), ("2d", 172_800), ("45", 45), (nil, 3600)] as [(String?, Int64)] {
            let result = try CLI.run(CLI.liveline, ["token", "--secret-file", secretFile, "--sub", "u", "--play", "*"]
                + (ttl.map { ["--ttl", $0] } ?? []))
            #expect(result.status == 0, "stderr: \(result.stderr)")
            let claims = try #require(AccessToken.peek(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
            #expect(claims.exp - (claims.iat ?? 0) == seconds)
        }
    }

    @Test("a wrong command line is a usage error that says what is wrong", arguments: [
        (["--sub", "a", "--play", "x"], "--secret-file"),
        (["--secret-file", "S", "--play", "x"], "--sub"),
        (["--secret-file", "S", "--sub", "a"], "at least one permission"),
        (["--secret-file", "S", "--sub", "a", "--play", "x", "--ttl", "1w"], "--ttl must be a duration"),
        (["--secret-file", "S", "--sub", "a", "--play", "x", "--ttl", "0s"], "--ttl must be a duration"),
        (["--secret-file", "S", "--sub", "a", "--play", "x", "--ttl", "99999999999999999d"], "--ttl must be a duration"),
        (["--secret-file", "S", "--sub", "a", "--play", "x", "--record", "y"], "unknown option '--record'"),
        (["--secret-file", "S", "--sub", "a", "--play"], "--play needs a value"),
        (["--secret-file", "S", "--sub", "a", "--call"], "--call needs a value"),
        (["--secret-file", "S", "--sub", "a", "--call", ""], "--call needs a non-empty path"),
    ])
    func usageErrors(arguments: [String], message: String) throws {
        let result = try CLI.run(CLI.liveline, ["token"] + arguments)
        #expect(result.status == 2)
        #expect(result.stderr.contains(message), "stderr: \(result.stderr)")
    }

    @Test("a missing or short secret file is a clear error")
    func badSecretFile() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let missing = try CLI.liveline("token", "--secret-file", dir.appendingPathComponent("none").path, "--sub", "a", "--play", "x")
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("cannot read secret file"))
        let short = dir.appendingPathComponent("short").path
        try "abc\n".write(toFile: short, atomically: false, encoding: .utf8)
        let result = try CLI.liveline("token", "--secret-file", short, "--sub", "a", "--play", "x")
        #expect(result.status == 1)
        #expect(result.stderr.contains("needs at least 16"))
    }

    @Test("--help lists the options; host, guest and serve document theirs; the command list names token")
    func help() throws {
        let result = try CLI.liveline("token", "--help")
        #expect(result.status == 0)
        #expect(result.stdout.contains("--new-secret") && result.stdout.contains("--line-guest"))
        for command in ["host", "guest"] {
            #expect(try CLI.liveline(command, "--help").stdout.contains("--token-command CMD"))
        }
        let serve = try CLI.liveline("serve", "--help").stdout
        #expect(serve.contains("--auth-secret-file FILE") && serve.contains("--no-auth") && serve.contains("--on-expiry keep|close"))
        #expect(try CLI.liveline("help").stdout.contains("token     make the server's secret file"))
    }
}
