import LiveCore

/// Checks access tokens against the server's secret. Pure: the time comes in as an
/// argument, so a caller decides the clock (and tests choose it).
public struct TokenVerifier: Sendable {
    private let secret: [UInt8]
    /// Seconds of clock difference forgiven on `exp` and `nbf`.
    public let leewaySeconds: Int64
    /// Longer tokens are refused before any decoding.
    public let maxTokenBytes: Int

    /// - Parameters:
    ///   - secret: the bytes of `TokenSecret.load`.
    ///   - leewaySeconds: clock difference forgiven, clamped to 0...3600.
    ///   - maxTokenBytes: the budget for one token, checked before decoding.
    public init(secret: [UInt8], leewaySeconds: Int64 = 5, maxTokenBytes: Int = 4096) {
        self.secret = secret
        self.leewaySeconds = min(max(leewaySeconds, 0), 3600)
        self.maxTokenBytes = max(maxTokenBytes, 0)
    }

    /// The token's claims once its signature (compared in constant time), its algorithm
    /// (HS256 only; `alg: none` is refused) and its `exp`/`nbf` against `nowSeconds` ±
    /// leeway are checked.
    public func verify(_ token: String, nowSeconds: Int64) throws(TokenError) -> AccessClaims {
        let bytes = token.utf8.count
        guard bytes <= maxTokenBytes else { throw .tooLong(bytes: bytes, limit: maxTokenBytes) }
        let parts = try AccessToken.split(token)
        let alg = try AccessToken.algorithm(parts.header)
        guard alg == "HS256" else { throw .unsupportedAlgorithm(alg) }
        guard let signature = Base64URL.decode(parts.signature) else { throw .badSignature }
        let expected = HMACSHA256.mac(key: secret, Array(parts.signingInput.utf8))
        guard Self.constantTimeEqual(signature, expected) else { throw .badSignature }
        let claims = try AccessToken.claims(parts.payload)
        if hasExpired(exp: claims.exp, nowSeconds: nowSeconds) { throw .expired(exp: claims.exp) }
        // Only our own values take part in arithmetic; the token's are only compared.
        let (early, earlyOverflow) = nowSeconds.addingReportingOverflow(leewaySeconds)
        if let nbf = claims.nbf, !earlyOverflow, early < nbf { throw .notYetValid(nbf: nbf) }
        return claims
    }

    /// `verify`, then that the claims allow `action` on `path`; a nil or empty token is
    /// `.missing`.
    public func authorize(
        _ token: String?, _ action: AccessAction, path: String, nowSeconds: Int64
    ) throws(TokenError) -> AccessClaims {
        guard let token, !token.isEmpty else { throw .missing }
        let claims = try verify(token, nowSeconds: nowSeconds)
        guard claims.allows(action, path: path) else { throw .forbidden(action: action, path: path) }
        return claims
    }

    /// Whether a token expiring at `exp` is past it at `nowSeconds`, leeway forgiven: what a
    /// server checks again on a live session (`verify` checks it at the start).
    public func hasExpired(exp: Int64, nowSeconds: Int64) -> Bool {
        // Only our own values take part in arithmetic; `exp` is only compared.
        let (late, overflow) = nowSeconds.subtractingReportingOverflow(leewaySeconds)
        return !overflow && late >= exp
    }

    /// Equal lengths and bytes, taking the same time wherever the first difference is.
    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in a.indices { difference |= a[index] ^ b[index] }
        return difference == 0
    }
}
