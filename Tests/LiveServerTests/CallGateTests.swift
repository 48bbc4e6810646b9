import Foundation
import LiveAuth
import LiveCore
import LiveSignal
import Testing
@testable import LiveServer

/// Who may register for calls and renew, decided without sockets: tokens minted with a
/// test secret and checked at a fixed time.
@Suite("Call gate (pure)")
struct CallGateTests {
    static let secret = Array("call-gate-test-secret-0123456789".utf8)
    static let now: Int64 = 1_800_000_000
    static let nowMicros: UInt64 = 5_000_000
    let gate = CallGate(verifier: TokenVerifier(secret: Self.secret))

    static func token(_ sub: String, _ perms: [(AccessAction, String)], ttl: Int64 = 20, secret: [UInt8] = secret) -> String {
        AccessToken.mint(AccessClaims(sub: sub, iat: now, exp: now + ttl, perm: perms.map { AccessPermission(action: $0.0, path: $0.1) }),
                         secret: secret)
    }

    private func admit(_ request: CallRequest, userId: String, connectionToken: String? = nil) -> LineAdmission {
        gate.admit(request, userId: userId, connectionToken: connectionToken, nowSeconds: Self.now, nowMicros: Self.nowMicros)
    }

    private static func code(_ admission: LineAdmission) -> LiveCode? {
        if case .refused(let code, _) = admission { return code }
        return nil
    }

    @Test("register: a token of that user granting call on it (or on a pattern covering it), from the request or the URL", arguments: [
        (token("alice", [(.call, "alice")]), nil as LiveCode?),
        (token("alice", [(.call, "*")]), nil),
        (token("alice", [(.call, "ali*")]), nil),
        (token("mallory", [(.call, "*")]), .unauthorized),              // another user's token
        (token("alice", [(.call, "bob")]), .unauthorized),              // call on someone else
        (token("alice", [(.publish, "*"), (.play, "*"), (.lineHost, "*")]), .unauthorized), // no call grant
        (token("alice", [(.call, "alice")], ttl: -60), .authTimeout),    // expired (past the leeway)
        (token("alice", [(.call, "alice")], secret: Array("another-secret-another-secret-xx".utf8)), .authFailed),
        ("not.a.token", .authFailed),
    ])
    func register(token: String, refusal: LiveCode?) {
        let inRequest = admit(CallRequest(op: .register, userId: "alice", token: token), userId: "alice")
        let inURL = admit(CallRequest(op: .register, userId: "alice"), userId: "alice", connectionToken: token)
        #expect(Self.code(inRequest) == refusal)
        #expect(Self.code(inURL) == refusal)
        if refusal == nil {
            #expect(inRequest == .admitted(userId: "alice", expiresAtMicros: Self.nowMicros + 20_000_000))
        }
    }

    @Test("no token at all is 213; a renewal brings its own token (the URL's does not count); no verifier admits everyone")
    func missingAndRenewal() {
        #expect(Self.code(admit(CallRequest(op: .register, userId: "alice"), userId: "alice")) == .tokenMustBeVerified)
        let good = Self.token("alice", [(.call, "alice")], ttl: 60)
        #expect(Self.code(admit(CallRequest(op: .renewToken), userId: "alice", connectionToken: good)) == .tokenMustBeVerified)
        #expect(admit(CallRequest(op: .renewToken, token: good), userId: "alice")
                == .admitted(userId: "alice", expiresAtMicros: Self.nowMicros + 60_000_000))
        #expect(CallGate(verifier: nil).admit(CallRequest(op: .register, userId: "x"), userId: "x", connectionToken: nil,
                                              nowSeconds: Self.now, nowMicros: Self.nowMicros) == .open)
    }
}
