/// The payload of an access token: who (`sub`), when (`iat`, `nbf`, `exp` in unix
/// seconds, as RFC 7519 §4.1 names them) and what (`perm`).
public struct AccessClaims: Codable, Sendable, Equatable {
    /// The user id (the anyRTC SDK's uid).
    public var sub: String
    /// Issued at.
    public var iat: Int64?
    /// Not valid before.
    public var nbf: Int64?
    /// Expires at; required, so no token lives for ever.
    public var exp: Int64
    /// The grants; a token without any grants nothing.
    public var perm: [AccessPermission]

    public init(sub: String, iat: Int64? = nil, nbf: Int64? = nil, exp: Int64, perm: [AccessPermission]) {
        self.sub = sub
        self.iat = iat
        self.nbf = nbf
        self.exp = exp
        self.perm = perm
    }

    private enum CodingKeys: String, CodingKey { case sub, iat, nbf, exp, perm }

    /// Like the synthesized decoder, except that a missing `perm` reads as no grants, so a
    /// token from a stock library that only carries `sub` and `exp` is readable (and allows
    /// nothing).
    public init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        sub = try container.decode(String.self, forKey: .sub)
        iat = try container.decodeIfPresent(Int64.self, forKey: .iat)
        nbf = try container.decodeIfPresent(Int64.self, forKey: .nbf)
        exp = try container.decode(Int64.self, forKey: .exp)
        perm = try container.decodeIfPresent([AccessPermission].self, forKey: .perm) ?? []
    }

    /// Whether any grant covers `action` on `path`.
    public func allows(_ action: AccessAction, path: String) -> Bool {
        perm.contains { $0.covers(action, path: path) }
    }
}
