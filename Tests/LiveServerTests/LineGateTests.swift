import Foundation
import LiveAuth
import LiveCore
import LiveSignal
import Testing
@testable import LiveServer

/// Who may create, join and renew, decided without sockets: tokens minted with a test
/// secret and checked at a fixed time, and the relay's answer given by hand.
@Suite("Line gate (pure)")
struct LineGateTests {
    static let secret = Array("line-gate-test-secret-0123456789".utf8)
    static let now: Int64 = 1_800_000_000
    static let nowMicros: UInt64 = 5_000_000
    let gate = LineGate(verifier: TokenVerifier(secret: Self.secret))
    let open = LineGate(verifier: nil)

    static func token(_ sub: String, _ perms: [(AccessAction, String)], ttl: Int64 = 20, secret: [UInt8] = secret) -> String {
        AccessToken.mint(AccessClaims(sub: sub, iat: now, exp: now + ttl, perm: perms.map { AccessPermission(action: $0.0, path: $0.1) }),
                         secret: secret)
    }

    private func admit(_ gate: LineGate, _ request: LineRequest, _ context: LineAdmissionContext = LineAdmissionContext(),
                       connectionToken: String? = nil, publisherQuery: String? = nil) -> LineAdmission {
        gate.admit(request, context, connectionToken: connectionToken, publisherQuery: publisherQuery,
                   nowSeconds: Self.now, nowMicros: Self.nowMicros)
    }

    private static func code(_ admission: LineAdmission) -> LiveCode? {
        if case .refused(let code, _) = admission { return code }
        return nil
    }

    @Test("without tokens: only the publisher of the stream named like the line, holding its lineKey, may create it")
    func publisherCreates() {
        let create = LineRequest(op: .create, liveId: "room", userId: "h", stream: "live/room", lineKey: "K3y")
        #expect(admit(open, create, publisherQuery: "lineKey=K3y") == .open)
        #expect(admit(open, create, publisherQuery: "a=1&lineKey=K3y&b=2") == .open)
        // A squatter: nobody publishes yet, or the publisher's key is not the squatter's.
        #expect(Self.code(admit(open, create, publisherQuery: nil)) == .unauthorized)
        #expect(Self.code(admit(open, create, publisherQuery: "")) == .unauthorized)
        #expect(Self.code(admit(open, create, publisherQuery: "lineKey=other")) == .unauthorized)
        #expect(Self.code(admit(open, create, publisherQuery: "lineKey=K3y2")) == .unauthorized)
        // The stream must be named like the line, and the request must carry both fields.
        var other = create
        other.stream = "live/mine"
        #expect(Self.code(admit(open, other, publisherQuery: "lineKey=K3y")) == .unauthorized)
        var keyless = create
        keyless.lineKey = nil
        #expect(Self.code(admit(open, keyless, publisherQuery: "lineKey=")) == .unauthorized)
        var streamless = create
        streamless.stream = nil
        #expect(Self.code(admit(open, streamless, publisherQuery: "lineKey=K3y")) == .unauthorized)
        // Join and renew are not checked without tokens.
        #expect(admit(open, LineRequest(op: .join, liveId: "room", userId: "g")) == .open)
        #expect(LineGate.stream(of: create) == StreamKey(app: "live", name: "room"))
        #expect(LineGate.stream(of: LineRequest(op: .create, stream: "live/inst/room")) == StreamKey(app: "live/inst", name: "room"))
        #expect(LineGate.stream(of: LineRequest(op: .create, stream: "room")) == nil)
        #expect(LineGate.stream(of: LineRequest(op: .create, stream: "live/")) == nil)
    }

    @Test("with tokens: create needs line:host, join line:guest or line:host; the token's sub is the user; refusals carry 213, 202, 212, 104")
    func tokens() {
        let host = Self.token("alice", [(.lineHost, "room")])
        let guest = Self.token("bob", [(.lineGuest, "room")])
        let create = LineRequest(op: .create, liveId: "room", token: host)
        #expect(admit(gate, create) == .admitted(userId: "alice", expiresAtMicros: Self.nowMicros + 20_000_000))
        // The WebSocket URL's ?token= serves when the request has none.
        #expect(admit(gate, LineRequest(op: .create, liveId: "room"), connectionToken: host) == .admitted(userId: "alice", expiresAtMicros: Self.nowMicros + 20_000_000))
        #expect(Self.code(admit(gate, LineRequest(op: .create, liveId: "room"))) == .tokenMustBeVerified)
        #expect(Self.code(admit(gate, LineRequest(op: .create, liveId: "room", token: guest))) == .unauthorized)
        #expect(Self.code(admit(gate, LineRequest(op: .create, liveId: "other", token: host))) == .unauthorized)
        #expect(Self.code(admit(gate, LineRequest(op: .create, liveId: "room", token: Self.token("alice", [(.lineHost, "room")], secret: Array("another-secret-of-32-bytes-......".utf8))))) == .authFailed)
        #expect(Self.code(admit(gate, LineRequest(op: .create, liveId: "room", token: "not.a.token"))) == .authFailed)
        #expect(Self.code(admit(gate, LineRequest(op: .create, liveId: "room", token: Self.token("alice", [(.lineHost, "room")], ttl: -60)))) == .authTimeout)
        // Another user id than the token's.
        #expect(Self.code(admit(gate, LineRequest(op: .create, liveId: "room", userId: "mallory", token: host))) == .unauthorized)
        #expect(admit(gate, LineRequest(op: .create, liveId: "room", userId: "alice", token: host)) != .open)
        // Join: guests, and hosts too.
        if case .admitted(let user, _) = admit(gate, LineRequest(op: .join, liveId: "room", token: guest)) { #expect(user == "bob") } else { Issue.record("guest refused") }
        if case .admitted(let user, _) = admit(gate, LineRequest(op: .join, liveId: "room", token: host)) { #expect(user == "alice") } else { Issue.record("host refused") }
        #expect(Self.code(admit(gate, LineRequest(op: .join, liveId: "elsewhere", token: guest))) == .unauthorized)
        #expect(Self.code(admit(gate, LineRequest(op: .join, liveId: "room"))) == .tokenMustBeVerified)
        // A wildcard permission covers every line.
        let any = Self.token("carol", [(.lineGuest, "*")])
        #expect(Self.code(admit(gate, LineRequest(op: .join, liveId: "x", token: any))) == nil)
        // A publish-only token opens no line.
        #expect(Self.code(admit(gate, LineRequest(op: .join, liveId: "room", token: Self.token("dave", [(.publish, "live/room")])))) == .unauthorized)
    }

    @Test("renewToken: the token in the request, with the participant's role on its line; the connection's token does not count")
    func renew() {
        let guestContext = LineAdmissionContext(userId: "bob", liveId: "room", isHoster: false)
        let hostContext = LineAdmissionContext(userId: "alice", liveId: "room", isHoster: true)
        let fresh = Self.token("bob", [(.lineGuest, "room")], ttl: 60)
        #expect(admit(gate, LineRequest(op: .renewToken, token: fresh), guestContext)
            == .admitted(userId: "bob", expiresAtMicros: Self.nowMicros + 60_000_000))
        #expect(Self.code(admit(gate, LineRequest(op: .renewToken), guestContext, connectionToken: fresh)) == .tokenMustBeVerified)
        #expect(Self.code(admit(gate, LineRequest(op: .renewToken, token: fresh), hostContext)) == .unauthorized)
        #expect(Self.code(admit(gate, LineRequest(op: .renewToken, token: Self.token("bob", [(.lineGuest, "other")])), guestContext)) == .unauthorized)
        // Outside a line any valid token renews.
        #expect(Self.code(admit(gate, LineRequest(op: .renewToken, token: Self.token("x", [])))) == nil)
        // An absurd exp is scheduled at most ten years ahead, without overflow.
        let forever = AccessToken.mint(AccessClaims(sub: "bob", exp: Int64.max, perm: [AccessPermission(action: .lineGuest, path: "room")]),
                                       secret: Self.secret)
        #expect(admit(gate, LineRequest(op: .renewToken, token: forever), guestContext)
            == .admitted(userId: "bob", expiresAtMicros: Self.nowMicros + UInt64(LineGate.maxLifetimeSeconds) * 1_000_000))
    }
}
