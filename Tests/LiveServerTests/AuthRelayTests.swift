import Foundation
import LiveAuth
import LiveNet
import LiveTestSupport
import Testing
@testable import LiveRTMP
@testable import LiveServer

/// The secret of the relays with auth on, and tokens signed with it.
enum TestTokens {
    static let secret = Array("relay-test-secret-0123456789abcdef".utf8)

    static func mint(_ perm: [AccessPermission], sub: String = "alice", ttl: Int64 = 600,
                     secret: [UInt8] = TestTokens.secret) -> String {
        let now = Int64(Date().timeIntervalSince1970)
        return AccessToken.mint(AccessClaims(sub: sub, iat: now, exp: now + ttl, perm: perm), secret: secret)
    }

    static func publish(_ path: String, sub: String = "alice") -> String {
        mint([AccessPermission(action: .publish, path: path)], sub: sub)
    }

    static func play(_ path: String, sub: String = "alice", ttl: Int64 = 600) -> String {
        mint([AccessPermission(action: .play, path: path)], sub: sub, ttl: ttl)
    }

    static func api(_ path: String) -> String { mint([AccessPermission(action: .api, path: path)]) }

    /// The header that lets a test read every API route.
    static var apiHeaders: [String] { ["Authorization: Bearer \(api("*"))"] }
}

/// `GET /api/streams` of a relay with auth on.
func authStreams(_ relay: RelayServer) throws -> [StreamStats] {
    try apiStreams(relay, headers: TestTokens.apiHeaders)
}

/// A relay on free ports whose publish, play and API need tokens signed with `TestTokens.secret`.
func startAuthRelay(_ configure: (inout RTMPServer.Configuration) -> Void = { _ in }) throws -> RelayServer {
    try startRelay {
        $0.auth = TokenVerifier(secret: TestTokens.secret)
        configure(&$0)
    }
}

@Suite("Relay with auth on: RTMP publish, play, connect and takeover with LiveRTMP test clients", .serialized)
struct AuthRelayTests {
    func start(_ port: UInt16, _ path: String, _ mode: RTMPClientSessionCore.Mode) throws -> (TestRTMPClient, RTMPClientSessionCore.Event?) {
        let client = try TestRTMPClient(port: port, path: path, mode: mode)
        return (client, try client.start())
    }

    func refusal(_ event: RTMPClientSessionCore.Event?) -> RTMPStatus? {
        if case .failed(let status) = event { status } else { nil }
    }

    @Test("publish needs ?token= granting publish on app/name; each refusal is BadName with the code and reason")
    func publish() throws {
        let relay = try startAuthRelay()
        defer { relay.shutdown() }
        let port = relay.rtmpPort
        let cases: [(String, String)] = [
            ("live/room1", "213 the token must be verified: no token given"),
            ("live/room1?token=\(TestTokens.mint([AccessPermission(action: .publish, path: "live/room1")], secret: Array("another-secret-0123456789".utf8)))",
             "202 authentication failed: bad signature"),
            ("live/room1?token=\(TestTokens.publish("live/room2"))", "104 unauthorized: token does not allow publish on \"live/room1\""),
            ("live/room1?token=\(TestTokens.play("live/room1"))", "104 unauthorized: token does not allow publish on \"live/room1\""),
            ("live/room1?token=\(TestTokens.mint([AccessPermission(action: .publish, path: "live/room1")], ttl: -60))", "212 authentication timed out"),
            ("live/room1?token=garbage", "202 authentication failed: malformed token"),
        ]
        for (path, description) in cases {
            let (_, event) = try start(port, path, .publish)
            let status = try #require(refusal(event), "\(path) was not refused")
            #expect(status.code == RTMPStatus.Code.publishBadName)
            #expect(status.description.hasPrefix(description), "\(status.description)")
        }
        let (publisher, accepted) = try start(port, "live/room1?token=\(TestTokens.publish("live/*"))", .publish)
        guard case .publishing = accepted else {
            Issue.record("a publisher with a token for live/* was refused: \(String(describing: accepted))")
            return
        }
        try publisher.sendVideo(SyntheticVideo.sequenceHeader, timestamp: 0)
        try publisher.sendVideo(SyntheticVideo.frame(index: 0, keyframe: true), timestamp: 0)
        #expect(try eventually(3) { try authStreams(relay).first?.frames == 1 })
        #expect(relay.rtmp.counters.refusedPublishes.load(ordering: .relaxed) == UInt64(cases.count))
    }

    @Test("play needs a token granting play; a refusal is NetStream.Play.Failed with the reason")
    func play() throws {
        let relay = try startAuthRelay()
        defer { relay.shutdown() }
        let (_, without) = try start(relay.rtmpPort, "live/show", .play)
        let status = try #require(refusal(without))
        #expect(status.code == "NetStream.Play.Failed")
        #expect(status.description == "213 the token must be verified: no token given")
        let (_, publishOnly) = try start(relay.rtmpPort, "live/show?token=\(TestTokens.publish("live/show"))", .play)
        #expect(refusal(publishOnly)?.description == "104 unauthorized: token does not allow play on \"live/show\"")
        let (_, with) = try start(relay.rtmpPort, "live/show?token=\(TestTokens.play("live/show"))", .play)
        guard case .playing = with else {
            Issue.record("a player with a token was refused: \(String(describing: with))")
            return
        }
        #expect(relay.rtmp.counters.refusedPlays.load(ordering: .relaxed) == 2)
    }

    @Test("a token in connect's tcUrl serves publish and play; a bad one is refused at connect with NetConnection.Connect.Rejected")
    func connectToken() throws {
        let relay = try startAuthRelay()
        defer { relay.shutdown() }
        func client(appQuery: String, mode: RTMPClientSessionCore.Mode) throws -> (TestRTMPClient, RTMPClientSessionCore.Event?) {
            let client = try TestRTMPClient(port: relay.rtmpPort, path: "live/x", mode: mode)
            // The query in the server URL, as OBS sends it: in app and tcUrl, not on the stream name.
            client.core = RTMPClientSessionCore(
                url: RTMPURL(host: "127.0.0.1", port: Int(relay.rtmpPort), app: "live?" + appQuery, streamName: "cam"), mode: mode)
            return (client, try client.start())
        }
        let (rejected, event) = try client(appQuery: "token=\(TestTokens.publish("live/cam", sub: "x") + "x")", mode: .publish)
        let status = try #require(refusal(event))
        #expect(status.code == RTMPStatus.Code.connectRejected)
        #expect(status.description == "202 authentication failed: bad signature")
        #expect(rejected.socket.closesWithin(3))
        #expect(relay.rtmp.counters.refusedConnects.load(ordering: .relaxed) == 1)

        let (publisher, published) = try client(appQuery: "token=\(TestTokens.publish("live/cam"))", mode: .publish)
        guard case .publishing = published else {
            Issue.record("publish with the token in tcUrl was refused: \(String(describing: published))")
            return
        }
        try publisher.sendVideo(SyntheticVideo.sequenceHeader, timestamp: 0)
        // The key is live/cam: the query is not part of the app.
        #expect(try eventually(3) { try authStreams(relay).map { "\($0.app)/\($0.name)" } == ["live/cam"] })
        // A valid connect token that does not grant play is refused at play.
        let (_, play) = try client(appQuery: "token=\(TestTokens.publish("live/cam"))", mode: .play)
        #expect(refusal(play)?.code == "NetStream.Play.Failed")
    }

    @Test("with auth on, a live stream is taken over only with a token granting it; the first publisher keeps publishing otherwise")
    func takeover() throws {
        let relay = try startAuthRelay { $0.takeoverQuietInterval = .seconds(30) }
        defer { relay.shutdown() }
        let (first, started) = try start(relay.rtmpPort, "live/stage?token=\(TestTokens.publish("live/stage"))", .publish)
        guard case .publishing = started else {
            Issue.record("first publisher refused")
            return
        }
        try first.sendVideo(SyntheticVideo.sequenceHeader, timestamp: 0)
        for index in 0..<3 { try first.sendVideo(SyntheticVideo.frame(index: index, keyframe: index == 0), timestamp: UInt32(index * 33)) }

        // Someone with a token for another stream, or the same query string with a bad signature.
        let (_, other) = try start(relay.rtmpPort, "live/stage?token=\(TestTokens.publish("live/other", sub: "mallory"))", .publish)
        #expect(refusal(other)?.code == RTMPStatus.Code.publishBadName)
        let (_, none) = try start(relay.rtmpPort, "live/stage", .publish)
        #expect(refusal(none) != nil)
        for index in 3..<6 { try first.sendVideo(SyntheticVideo.frame(index: index, keyframe: false), timestamp: UInt32(index * 33)) }
        #expect(try eventually(3) { try authStreams(relay).first?.frames == 6 })
        #expect(relay.rtmp.counters.takeovers.load(ordering: .relaxed) == 0)

        // The returning publisher with a fresh token takes over at once, while the old connection still sends.
        let (second, again) = try start(relay.rtmpPort, "live/stage?token=\(TestTokens.publish("live/stage"))", .publish)
        guard case .publishing = again else {
            Issue.record("the authorised publisher did not take over: \(String(describing: again))")
            return
        }
        #expect(first.socket.closesWithin(3))
        try second.sendVideo(SyntheticVideo.sequenceHeader, timestamp: 0)
        try second.sendVideo(SyntheticVideo.frame(index: 0, keyframe: true), timestamp: 0)
        #expect(try eventually(3) { try authStreams(relay).first?.frames == 1 })
        #expect(relay.rtmp.counters.takeovers.load(ordering: .relaxed) == 1)
    }

    @Test("the play rule is asked for co-host streams only, with the verified token's claims")
    func coHostPlayRule() throws {
        let relay = try startAuthRelay()
        defer { relay.shutdown() }
        let asked = Locked<[String]>([])
        relay.rtmp.playAuthorizer.install { key, _, claims in
            asked.update { $0.append("\(key) \(claims?.sub ?? "-")") }
            return claims?.sub == "member" ? nil : "\(claims?.sub ?? "nobody") is not a member of the line"
        }
        let (_, outsider) = try start(relay.rtmpPort, "live/line-abc?token=\(TestTokens.play("live/*", sub: "stranger"))", .play)
        #expect(refusal(outsider)?.description == "stranger is not a member of the line")
        #expect(refusal(outsider)?.code == "NetStream.Play.Failed")
        let (_, member) = try start(relay.rtmpPort, "live/line-abc?token=\(TestTokens.play("live/*", sub: "member"))", .play)
        #expect(refusal(member) == nil)
        let (_, plain) = try start(relay.rtmpPort, "live/room?token=\(TestTokens.play("live/*", sub: "stranger"))", .play)
        #expect(refusal(plain) == nil)
        #expect(asked.value == ["live/line-abc stranger", "live/line-abc member"])
    }

    @Test("with auth off the play rule gets nil claims and publish and play need no token")
    func authOffPlayRule() throws {
        let relay = try startRelay()
        defer { relay.shutdown() }
        relay.rtmp.playAuthorizer.install { _, query, claims in
            claims == nil && query == "line=s" ? nil : "not a member"
        }
        let (_, refused) = try start(relay.rtmpPort, "live/line-x", .play)
        #expect(refusal(refused)?.description == "not a member")
        let (_, allowed) = try start(relay.rtmpPort, "live/line-x?line=s", .play)
        #expect(refusal(allowed) == nil)
        let (_, publisher) = try start(relay.rtmpPort, "live/open", .publish)
        #expect(refusal(publisher) == nil)
    }

    @Test("--on-expiry close ends a player whose token expires at its next ping tick; keep lets it play on")
    func expiry() throws {
        let configure: (inout RTMPServer.Configuration, TokenExpiryPolicy) -> Void = { configuration, policy in
            configuration.auth = TokenVerifier(secret: TestTokens.secret, leewaySeconds: 0)
            configuration.onExpiry = policy
            configuration.pingInterval = .milliseconds(200)
        }
        let closing = try startRelay { configure(&$0, .close) }
        defer { closing.shutdown() }
        let keeping = try startRelay { configure(&$0, .keep) }
        defer { keeping.shutdown() }
        let token = TestTokens.play("live/*", ttl: 2)
        let (closed, first) = try start(closing.rtmpPort, "live/a?token=\(token)", .play)
        let (kept, second) = try start(keeping.rtmpPort, "live/a?token=\(token)", .play)
        #expect(refusal(first) == nil && refusal(second) == nil)
        let started = Date()
        try closed.pump(timeout: 6) { _ in false }
        #expect(closed.closedByServer)
        let after = Date().timeIntervalSince(started)
        #expect(after < 4.5, "closed \(after) s after the start of a 2 s token")
        try kept.pump(timeout: 0.5) { _ in false }
        #expect(!kept.closedByServer)
    }
}

@Suite("Relay HTTP API with auth on")
struct AuthHTTPTests {
    @Test("every route but /healthz, /metrics and /line needs an api token for its path; refusals are 401 with the code")
    func api() throws {
        let relay = try startAuthRelay()
        defer { relay.shutdown() }
        let port = relay.httpPort
        let missing = try httpGet(port: port, "/api/streams")
        #expect(missing.status == 401)
        let body = try JSONSerialization.jsonObject(with: Data(missing.body.utf8)) as? [String: Any]
        #expect(body?["code"] as? Int == 213)
        #expect(body?["message"] as? String == "no token given")

        let bad = try httpGet(port: port, "/api/streams", headers: ["Authorization: Bearer x.y.z"])
        #expect(bad.status == 401 && bad.body.contains("\"code\":202"))
        let wrongPath = try httpGet(port: port, "/api/streams", headers: ["Authorization: Bearer \(TestTokens.api("api/live*"))"])
        #expect(wrongPath.status == 401 && wrongPath.body.contains("\"code\":104"))
        let expired = TestTokens.mint([AccessPermission(action: .api, path: "*")], ttl: -60)
        #expect(try httpGet(port: port, "/api/streams", headers: ["Authorization: Bearer \(expired)"]).body.contains("\"code\":212"))

        let granted = try httpGet(port: port, "/api/streams", headers: ["Authorization: Bearer \(TestTokens.api("api/*"))"])
        #expect(granted.status == 200 && granted.body == "[]")
        #expect(try httpGet(port: port, "/api/streams", headers: ["authorization: bearer \(TestTokens.api("api/streams"))"]).status == 200)
        #expect(try httpGet(port: port, "/api/streams?token=\(TestTokens.api("*"))").status == 200)
        #expect(try httpGet(port: port, "/api/live", headers: ["Authorization: Bearer \(TestTokens.api("api/live*"))"]).status == 200)
        // No such line: the line's own 404 once the token is accepted.
        #expect(try httpGet(port: port, "/api/live/room1/members", headers: ["Authorization: Bearer \(TestTokens.api("api/live/room1/*"))"]).status == 404)
        #expect(try httpGet(port: port, "/api/live/room2/members", headers: ["Authorization: Bearer \(TestTokens.api("api/live/room1/*"))"]).status == 401)
        // A route that does not exist is still hidden behind the token, then 404.
        #expect(try httpGet(port: port, "/nowhere").status == 401)
        #expect(try httpGet(port: port, "/nowhere", headers: ["Authorization: Bearer \(TestTokens.api("*"))"]).status == 404)

        #expect(try httpGet(port: port, "/healthz") == (200, "ok\n"))
        #expect(try httpGet(port: port, "/metrics").status == 200)
        // The line's WebSocket is left to the line: not a 401 at the HTTP layer.
        #expect(try httpGet(port: port, "/line").status != 401)
    }

    @Test("the path an api token must grant is the routed path without its leading slash")
    func path() throws {
        let request = try #require(HTTPRequest(method: "GET", target: "//api//streams?x=1"))
        #expect(HTTPAccess.path(request) == "api/streams")
        let bearer = try #require(HTTPRequest(method: "GET", target: "/a?token=q", headers: ["Authorization": "Bearer  abc "]))
        #expect(HTTPAccess.token(bearer) == "abc")
        let basic = try #require(HTTPRequest(method: "GET", target: "/a?token=q", headers: ["Authorization": "Basic abc"]))
        #expect(HTTPAccess.token(basic) == "q")
    }
}

@Suite("StreamAccess: where the RTMP token comes from and which path it must grant")
struct StreamAccessTests {
    @Test("connect's token is token= in the tcUrl's query, else in the app's; the app loses its query")
    func connectToken() {
        var parameters = RTMPConnectParameters(app: "live", tcUrl: "rtmp://h:1935/live?a=1&token=T1")
        #expect(StreamAccess.connectToken(parameters) == "T1")
        parameters = RTMPConnectParameters(app: "live?token=T2", tcUrl: "rtmp://h:1935/live")
        #expect(StreamAccess.connectToken(parameters) == "T2")
        #expect(StreamAccess.app(parameters) == "live")
        parameters = RTMPConnectParameters(app: "live", tcUrl: "rtmp://h:1935/live")
        #expect(StreamAccess.connectToken(parameters) == nil)
        #expect(StreamAccess.app(parameters) == "live")
        #expect(StreamAccess.app(nil) == "")
    }

    @Test("the stream name's token wins over connect's; the path is app/name")
    func authorize() throws {
        let verifier = TokenVerifier(secret: TestTokens.secret)
        let key = StreamKey(app: "live", name: "room1")
        let now = Int64(Date().timeIntervalSince1970)
        let own = try StreamAccess.authorize(verifier, .publish, key: key, query: "token=\(TestTokens.publish("live/room1", sub: "name"))",
                                             connectToken: TestTokens.publish("live/room1", sub: "connect"), nowSeconds: now)
        #expect(own.sub == "name")
        let fallback = try StreamAccess.authorize(verifier, .publish, key: key, query: "line=x",
                                                  connectToken: TestTokens.publish("live/room1", sub: "connect"), nowSeconds: now)
        #expect(fallback.sub == "connect")
        #expect(throws: TokenError.missing) {
            try StreamAccess.authorize(verifier, .publish, key: key, query: nil, connectToken: nil, nowSeconds: now)
        }
    }

    @Test("a 401 body carries the SDK code and the reason as JSON")
    func refusalBody() throws {
        let response = HTTPAccess.refusal(.expired(exp: 5))
        #expect(response.status == .unauthorized)
        #expect(response.headers["WWW-Authenticate"] == "Bearer")
        let body = try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
        #expect(body["code"] as? Int == 212)
        #expect(body["message"] as? String == "token expired at 5 (unix seconds)")
    }
}
