import Foundation
import LiveAuth
import LiveTestSupport
import Testing

@Suite("liveline serve access options")
struct ServeAuthCommandTests {
    /// The ready line's ports.
    @Test("without a secret, binding beyond loopback is refused unless --no-auth, which warns on stderr")
    func secureDefault() throws {
        let refused = try ChildProcess(BuildProducts.liveline, ["serve", "--rtmp", "0.0.0.0:0", "--http", "127.0.0.1:0"])
        #expect(refused.wait(timeout: 10) == 2)
        #expect(refused.stderr.contains("--rtmp 0.0.0.0 is reachable beyond this machine and access control is off"), "\(refused.stderr)")
        let http = try ChildProcess(BuildProducts.liveline, ["serve", "--rtmp", "127.0.0.1:0", "--http", "[::]:0"])
        #expect(http.wait(timeout: 10) == 2)
        #expect(http.stderr.contains("--http ::"))

        let open = try ChildProcess(BuildProducts.liveline, ["serve", "--rtmp", "0.0.0.0:0", "--http", "127.0.0.1:0", "--no-auth"])
        let (_, httpPort) = try servePorts(open)
        #expect(open.stderr.contains("WARNING: NO ACCESS CONTROL (--no-auth) on --rtmp 0.0.0.0:0"), "\(open.stderr)")
        #expect(try httpGet(port: httpPort, "/api/streams").status == 200)
        open.signal(SIGTERM)
        #expect(open.wait(timeout: 10) == 0)

        let loopback = try ChildProcess(BuildProducts.liveline, ["serve", "--rtmp", "127.0.0.1:0", "--http", "127.0.0.1:0"])
        _ = try servePorts(loopback)
        #expect(!loopback.stderr.contains("WARNING"))
        loopback.signal(SIGTERM)
        #expect(loopback.wait(timeout: 10) == 0)
    }

    @Test("--auth-secret-file turns checking on: the API needs a token minted with the same secret, /healthz stays open")
    func withSecret() throws {
        let dir = try makeTemporaryDirectory(prefix: "liveline-serve-auth-")
        defer { try? FileManager.default.removeItem(at: dir) }
        let secretFile = dir.appendingPathComponent("secret").path
        try TokenSecret.create(path: secretFile)
        let serve = try ChildProcess(BuildProducts.liveline, [
            "serve", "--rtmp", "0.0.0.0:0", "--http", "127.0.0.1:0", "--auth-secret-file", secretFile, "--on-expiry", "close",
        ])
        defer { serve.signal(SIGTERM); _ = serve.wait(timeout: 10) }
        let (rtmpPort, httpPort) = try servePorts(serve)
        #expect(!serve.stderr.contains("WARNING"))
        #expect(try httpGet(port: httpPort, "/api/streams").status == 401)
        #expect(try httpGet(port: httpPort, "/healthz").status == 200)
        let secret = try TokenSecret.load(path: secretFile)
        let token = TestTokens.mint([AccessPermission(action: .api, path: "api/*")], secret: secret)
        #expect(try httpGet(port: httpPort, "/api/streams", headers: ["Authorization: Bearer \(token)"]) == (200, "[]"))
        let player = try TestRTMPClient(port: rtmpPort, path: "live/x", mode: .play)
        guard case .failed(let status) = try player.start() else {
            Issue.record("a player without a token was let in")
            return
        }
        #expect(status.description == "213 the token must be verified: no token given")
    }

    @Test("contradictory or bad access options are usage errors", arguments: [
        (["--no-auth", "--auth-secret-file", "/nonexistent"], "contradict"),
        (["--on-expiry", "later"], "--on-expiry must be keep or close"),
        (["--on-expiry", "close"], "--on-expiry needs --auth-secret-file"),
    ])
    func usage(arguments: [String], message: String) throws {
        let serve = try ChildProcess(BuildProducts.liveline, ["serve", "--rtmp", "127.0.0.1:0", "--http", "127.0.0.1:0"] + arguments)
        #expect(serve.wait(timeout: 10) == 2)
        #expect(serve.stderr.contains(message), "\(serve.stderr)")
    }

    @Test("a secret file others can read is served with a warning to chmod it")
    func readableSecret() throws {
        let dir = try makeTemporaryDirectory(prefix: "liveline-serve-auth-")
        defer { try? FileManager.default.removeItem(at: dir) }
        let secretFile = dir.appendingPathComponent("secret").path
        try "a-shared-secret-of-enough-length\n".write(toFile: secretFile, atomically: false, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: secretFile)
        let serve = try ChildProcess(BuildProducts.liveline, ["serve", "--rtmp", "127.0.0.1:0", "--http", "127.0.0.1:0",
                                                             "--auth-secret-file", secretFile])
        defer { serve.signal(SIGTERM); _ = serve.wait(timeout: 10) }
        _ = try servePorts(serve)
        #expect(serve.stderr.contains("can be read by others (mode 644)"), "\(serve.stderr)")
    }

    @Test("a missing secret file is an error naming the file")
    func missingSecret() throws {
        let serve = try ChildProcess(BuildProducts.liveline, ["serve", "--rtmp", "127.0.0.1:0", "--http", "127.0.0.1:0",
                                                             "--auth-secret-file", "/nonexistent/secret"])
        #expect(serve.wait(timeout: 10) == 1)
        #expect(serve.stderr.contains("cannot read secret file /nonexistent/secret"), "\(serve.stderr)")
    }

    @Test("loopback means 127.0.0.0/8, ::1 and localhost; other names and addresses are exposed")
    func loopbackHosts() throws {
        // Exercised through the command: 127.0.0.2 is loopback, so no secret is needed.
        let serve = try ChildProcess(BuildProducts.liveline, ["serve", "--rtmp", "127.0.0.2:0", "--http", "localhost:0"])
        _ = try servePorts(serve)
        serve.signal(SIGTERM)
        #expect(serve.wait(timeout: 10) == 0)
        let named = try ChildProcess(BuildProducts.liveline, ["serve", "--rtmp", "127.example.com:0", "--http", "127.0.0.1:0"])
        #expect(named.wait(timeout: 10) == 2)
    }
}
