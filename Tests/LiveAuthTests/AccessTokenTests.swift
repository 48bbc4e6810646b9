import Foundation
import LiveCore
import Testing

@testable import LiveAuth

/// The HS256 secret of the fixtures, as a stock JWT library is given it.
private let secret = Array("fixture-secret-0123456789abcdef".utf8)
private let now: Int64 = 1_767_226_000

private func claims(
    sub: String = "alice", nbf: Int64? = nil, exp: Int64 = now + 3600,
    perm: [AccessPermission] = [AccessPermission(action: .publish, path: "live/room1")]
) -> AccessClaims {
    AccessClaims(sub: sub, iat: now, nbf: nbf, exp: exp, perm: perm)
}

/// A token signed with `secret` whose header and payload are the given JSON texts.
private func signed(header: String, payload: String, key: [UInt8] = secret) -> String {
    let input = Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(Array(payload.utf8))
    return input + "." + Base64URL.encode(HMACSHA256.mac(key: key, Array(input.utf8)))
}

/// The TokenError `body` throws; nil when it returns (any other error fails the test).
private func refusal(_ body: () throws -> AccessClaims) -> TokenError? {
    do {
        _ = try body()
        return nil
    } catch {
        #expect(error is TokenError)
        return error as? TokenError
    }
}

@Suite("AccessToken")
struct AccessTokenTests {
    let verifier = TokenVerifier(secret: secret)

    @Test("a minted token verifies and carries its claims")
    func goodToken() throws {
        let token = AccessToken.mint(claims(), secret: secret)
        let read = try verifier.authorize(token, .publish, path: "live/room1", nowSeconds: now)
        #expect(read == claims())
        #expect(AccessToken.peek(token) == claims())
    }

    @Test("mint writes the bytes python3's hmac/base64/json write for the same claims")
    func mintMatchesIndependentEncoding() {
        // python3: header {"alg":"HS256","typ":"JWT"}, json.dumps(claims, separators=(",",":"),
        // sort_keys=True), base64.urlsafe_b64encode without "=", hmac.new(secret, input, sha256).
        let expected = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJleHAiOjIwMDAwMDAwMDAsImlhdCI6MTAwMCwicGVybSI6W3siYWN0aW9uIjoibGluZTpob3N0IiwicGF0aCI6InJvb20xIn1dLCJzdWIiOiJib2IifQ.svJw29vl5C_AnNQF6nFecbqE6L5KH82w4WDOE8QL4k0"
        let minted = AccessToken.mint(
            AccessClaims(sub: "bob", iat: 1000, exp: 2_000_000_000, perm: [AccessPermission(action: .lineHost, path: "room1")]),
            secret: secret)
        #expect(minted == expected)
    }

    @Test("a token minted elsewhere (other key order, extra claim) verifies")
    func stockLibraryToken() throws {
        // python3: header {"typ":"JWT","alg":"HS256"}, payload with "iss", compact separators, no sorting.
        let fixture = "eyJ0eXAiOiJKV1QiLCJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbGljZSIsImlhdCI6MTc2NzIyNTYwMCwiZXhwIjoxNzY3MjI5MjAwLCJwZXJtIjpbeyJhY3Rpb24iOiJwdWJsaXNoIiwicGF0aCI6ImxpdmUvcm9vbTEifSx7ImFjdGlvbiI6InBsYXkiLCJwYXRoIjoibGl2ZS8qIn1dLCJpc3MiOiJhcHAtc2VydmVyIn0.to08Cr95gLT8irp2GQ9JKrY_OvE1w-hBxyZCcd4FPmQ"
        let read = try verifier.authorize(fixture, .play, path: "live/other", nowSeconds: now)
        #expect(read.sub == "alice")
        #expect(read.exp == 1_767_229_200)
        #expect(read.perm == [AccessPermission(action: .publish, path: "live/room1"), AccessPermission(action: .play, path: "live/*")])
        #expect(refusal { try TokenVerifier(secret: Array("another-secret-0123456789".utf8)).verify(fixture, nowSeconds: now) } == .badSignature)
    }

    @Test("another secret's signature is refused with 202")
    func wrongSignature() {
        let token = AccessToken.mint(claims(), secret: Array("some-other-secret-0123456789".utf8))
        let error = refusal { try verifier.verify(token, nowSeconds: now) }
        #expect(error == .badSignature)
        #expect(error?.code == .authFailed)
        #expect(error?.statusText == "202 authentication failed: bad signature")
    }

    @Test("a changed payload or header breaks the signature")
    func tamperedPayload() throws {
        let token = AccessToken.mint(claims(), secret: secret)
        let parts = token.split(separator: ".")
        let wider = Base64URL.encode(Array(#"{"exp":9999999999,"perm":[{"action":"publish","path":"*"}],"sub":"alice"}"#.utf8))
        let forged = [parts[0], wider[...], parts[2]].joined(separator: ".")
        #expect(refusal { try verifier.verify(forged, nowSeconds: now) } == .badSignature)
        // One character of the payload changed.
        var bytes = Array(token.utf8)
        let index = parts[0].utf8.count + 5
        bytes[index] = bytes[index] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        #expect(refusal { try verifier.verify(String(decoding: bytes, as: UTF8.self), nowSeconds: now) } == .badSignature)
        // A truncated signature.
        #expect(refusal { try verifier.verify(String(token.dropLast(2)), nowSeconds: now) } == .badSignature)
    }

    @Test("changing any one character of a token, or cutting it anywhere, makes it fail")
    func everyMutationFails() throws {
        let token = AccessToken.mint(claims(), secret: secret)
        let characters = Array(token)
        for index in characters.indices {
            for replacement: Character in ["A", "B", "Q", "g", "w", "-", "_", ".", "="] where replacement != characters[index] {
                var mutated = characters
                mutated[index] = replacement
                #expect(refusal { try verifier.verify(String(mutated), nowSeconds: now) } != nil, "index \(index) → \(replacement)")
            }
            #expect(refusal { try verifier.verify(String(characters[..<index]), nowSeconds: now) } != nil)
        }
    }

    @Test("base64url with non-zero unused bits is not a second spelling of the same bytes")
    func canonicalBase64() {
        #expect(Base64URL.decode("QQ") == [0x41])
        #expect(Base64URL.decode("QR") == nil)
        #expect(Base64URL.decode("QUI") == [0x41, 0x42])
        #expect(Base64URL.decode("QUJ") == nil)
        #expect(Base64URL.decode("QQ==") == nil)
        #expect(Base64URL.decode("Q") == nil)
        #expect(Base64URL.decode("") == [])
    }

    @Test("an expired token is refused with 212, within the leeway it passes")
    func expired() throws {
        let token = AccessToken.mint(claims(exp: now - 10), secret: secret)
        let error = refusal { try verifier.verify(token, nowSeconds: now) }
        #expect(error == .expired(exp: now - 10))
        #expect(error?.code == .authTimeout)
        let justNow = AccessToken.mint(claims(exp: now - 3), secret: secret)
        #expect(try verifier.verify(justNow, nowSeconds: now).sub == "alice")
        #expect(refusal { try TokenVerifier(secret: secret, leewaySeconds: 0).verify(justNow, nowSeconds: now) } == .expired(exp: now - 3))
    }

    @Test("hasExpired applies the leeway the way verify does")
    func hasExpired() {
        #expect(!verifier.hasExpired(exp: now, nowSeconds: now))
        #expect(!verifier.hasExpired(exp: now, nowSeconds: now + 4))
        #expect(verifier.hasExpired(exp: now, nowSeconds: now + 5))
        #expect(!verifier.hasExpired(exp: Int64.min, nowSeconds: Int64.min))
    }

    @Test("a token before its nbf is refused with 202")
    func notYetValid() throws {
        let token = AccessToken.mint(claims(nbf: now + 60), secret: secret)
        let error = refusal { try verifier.verify(token, nowSeconds: now) }
        #expect(error == .notYetValid(nbf: now + 60))
        #expect(error?.code == .authFailed)
        #expect(try verifier.verify(token, nowSeconds: now + 60).sub == "alice")
    }

    @Test("extreme exp and nbf values are compared, not added to")
    func extremeTimes() throws {
        let forever = AccessToken.mint(claims(nbf: Int64.min, exp: Int64.max), secret: secret)
        #expect(try verifier.verify(forever, nowSeconds: now).exp == Int64.max)
        let never = AccessToken.mint(claims(exp: Int64.min), secret: secret)
        #expect(refusal { try verifier.verify(never, nowSeconds: now) } == .expired(exp: Int64.min))
        #expect(try verifier.verify(forever, nowSeconds: Int64.max).exp == Int64.max)
    }

    @Test("a valid token for another action or path is refused with 104")
    func wrongActionAndPath() {
        let token = AccessToken.mint(claims(), secret: secret)
        let action = refusal { try verifier.authorize(token, .play, path: "live/room1", nowSeconds: now) }
        #expect(action == .forbidden(action: .play, path: "live/room1"))
        #expect(action?.code == .unauthorized)
        let path = refusal { try verifier.authorize(token, .publish, path: "live/room2", nowSeconds: now) }
        #expect(path == .forbidden(action: .publish, path: "live/room2"))
        #expect(refusal { try verifier.authorize(token, .publish, path: "live/room10", nowSeconds: now) } != nil)
    }

    @Test("wildcard paths cover what starts with their prefix, and only that")
    func wildcards() {
        let family = AccessPermission(action: .play, path: "live/*")
        #expect(family.covers(.play, path: "live/room1"))
        #expect(family.covers(.play, path: "live/line-abc"))
        #expect(!family.covers(.play, path: "other/room1"))
        #expect(!family.covers(.play, path: "live"))
        #expect(!family.covers(.publish, path: "live/room1"))
        let prefix = AccessPermission(action: .api, path: "api/live*")
        #expect(prefix.covers(.api, path: "api/live/room1/members"))
        #expect(!prefix.covers(.api, path: "api/streams"))
        let all = AccessPermission(action: .api, path: "*")
        #expect(all.covers(.api, path: "api/streams"))
        #expect(all.covers(.api, path: ""))
        let exact = AccessPermission(action: .lineGuest, path: "room1")
        #expect(exact.covers(.lineGuest, path: "room1"))
        #expect(!exact.covers(.lineGuest, path: "room12"))
        #expect(!AccessPermission(action: .play, path: "live/room*x").covers(.play, path: "live/room1x"))
    }

    @Test("alg none and other algorithms are refused even with a matching payload")
    func algNone() {
        let payload = #"{"exp":9999999999,"perm":[{"action":"publish","path":"*"}],"sub":"mallory"}"#
        let none = Base64URL.encode(Array(#"{"alg":"none","typ":"JWT"}"#.utf8)) + "." + Base64URL.encode(Array(payload.utf8)) + "."
        let error = refusal { try verifier.verify(none, nowSeconds: now) }
        #expect(error == .unsupportedAlgorithm("none"))
        #expect(error?.code == .authFailed)
        // Even signed with the right secret, only HS256 is accepted.
        #expect(refusal { try verifier.verify(signed(header: #"{"alg":"HS512"}"#, payload: payload), nowSeconds: now) } == .unsupportedAlgorithm("HS512"))
        #expect(refusal { try verifier.verify(signed(header: #"{"typ":"JWT"}"#, payload: payload), nowSeconds: now) } == .malformed(#"header is not a JSON object with "alg""#))
    }

    @Test("malformed tokens say what is wrong")
    func malformed() {
        #expect(refusal { try verifier.verify("abc", nowSeconds: now) } == .malformed("expected 3 dot-separated parts, found 1"))
        #expect(refusal { try verifier.verify("a.b.c.d", nowSeconds: now) } == .malformed("expected 3 dot-separated parts, found 4"))
        #expect(refusal { try verifier.verify("e$J.e30.", nowSeconds: now) } == .malformed("header is not base64url"))
        let noExp = signed(header: #"{"alg":"HS256"}"#, payload: #"{"sub":"a","perm":[]}"#)
        #expect(refusal { try verifier.verify(noExp, nowSeconds: now) } == .malformed(#"payload is not JSON claims with sub, exp and perm (no "exp")"#))
        let badAction = signed(header: #"{"alg":"HS256"}"#, payload: #"{"sub":"a","exp":9999999999,"perm":[{"action":"root","path":"*"}]}"#)
        #expect(refusal { try verifier.verify(badAction, nowSeconds: now) }?.code == .authFailed)
        let noPerm = signed(header: #"{"alg":"HS256"}"#, payload: #"{"sub":"a","exp":9999999999}"#)
        #expect(refusal { try verifier.authorize(noPerm, .play, path: "live/x", nowSeconds: now) } == .forbidden(action: .play, path: "live/x"))
    }

    @Test("a token over the byte budget is refused before decoding")
    func oversize() throws {
        let token = AccessToken.mint(claims(sub: String(repeating: "a", count: 5000)), secret: secret)
        let error = refusal { try verifier.verify(token, nowSeconds: now) }
        #expect(error == .tooLong(bytes: token.utf8.count, limit: 4096))
        #expect(error?.code == .authFailed)
        let roomier = TokenVerifier(secret: secret, maxTokenBytes: 16384)
        #expect(try roomier.verify(token, nowSeconds: now).sub.count == 5000)
        // Garbage over the budget is refused as too long, not parsed.
        #expect(refusal { try verifier.verify(String(repeating: ".", count: 4097), nowSeconds: now) } == .tooLong(bytes: 4097, limit: 4096))
    }

    @Test("no token or an empty one is refused with 213")
    func missing() {
        #expect(refusal { try verifier.authorize(nil, .play, path: "live/a", nowSeconds: now) } == .missing)
        let empty = refusal { try verifier.authorize("", .play, path: "live/a", nowSeconds: now) }
        #expect(empty == .missing)
        #expect(empty?.code == .tokenMustBeVerified)
    }

    @Test("fromQuery finds token= among other parameters and percent-decodes it")
    func fromQuery() {
        #expect(AccessToken.fromQuery("a=1&token=XYZ") == "XYZ")
        #expect(AccessToken.fromQuery("token=a%2Eb.c&b=2") == "a.b.c")
        #expect(AccessToken.fromQuery("mytoken=1&tokens=2") == nil)
        #expect(AccessToken.fromQuery("token=") == nil)
        #expect(AccessToken.fromQuery(nil) == nil)
        #expect(AccessToken.fromQuery("") == nil)
        #expect(AccessToken.fromQuery("token=%zz") == "%zz")
    }

    @Test("appending puts token= on a URL, replacing an old one")
    func appending() {
        #expect(AccessToken.appending("a.b.c", to: "rtmp://h:1935/live/room1") == "rtmp://h:1935/live/room1?token=a.b.c")
        #expect(AccessToken.appending("new", to: "rtmp://h/live/r?line=s&token=old") == "rtmp://h/live/r?line=s&token=new")
        #expect(AccessToken.appending("a+b", to: "rtmp://h/live/r?") == "rtmp://h/live/r?token=a%2Bb")
        #expect(AccessToken.fromQuery("line=s&token=a%2Bb") == "a+b")
    }

    @Test("peek reads claims without the secret and nil for garbage")
    func peek() {
        let token = AccessToken.mint(claims(exp: now - 100), secret: Array("unknown-to-the-client-0123".utf8))
        #expect(AccessToken.peek(token)?.exp == now - 100)
        #expect(AccessToken.peek("not a token") == nil)
        #expect(AccessToken.peek("a.b.c") == nil)
    }
}

@Suite("IssuedToken")
struct IssuedTokenTests {
    @Test("peeking reads uid and expiry from the token; an unreadable one gets empty uid and no expiry")
    func peeking() async throws {
        let token = AccessToken.mint(AccessClaims(sub: "bob", exp: 1234, perm: []), secret: Array("whatever-secret-0123456789".utf8))
        #expect(IssuedToken(peeking: token) == IssuedToken(token: token, uid: "bob", expiresAt: 1234))
        #expect(IssuedToken(peeking: "opaque") == IssuedToken(token: "opaque", uid: "", expiresAt: Int64.max))
        let provider = IssuedToken.fixedProvider(token)
        #expect(try await provider().uid == "bob")
    }

    @Test("query(_:setting:) keeps the other parameters and replaces token=")
    func query() {
        #expect(AccessToken.query(nil, setting: "a.b") == "token=a.b")
        #expect(AccessToken.query("line=s&token=old&x=1", setting: "n") == "line=s&x=1&token=n")
        #expect(AccessToken.query("", setting: "a b") == "token=a%20b")
    }
}
