/// What an app's token server hands out (the anyRTC SDK token provider's getRTCToken:
/// token, uid, expiry).
public struct IssuedToken: Sendable, Equatable {
    /// What goes on the URL (`?token=`) or in the line's requests.
    public var token: String
    /// The user id the token was issued for.
    public var uid: String
    /// Unix seconds.
    public var expiresAt: Int64

    public init(token: String, uid: String, expiresAt: Int64) {
        self.token = token
        self.uid = uid
        self.expiresAt = expiresAt
    }
}

extension IssuedToken {
    /// A token described by its own claims, read without the secret: `uid` is its `sub` and
    /// `expiresAt` its `exp`; "" and `Int64.max` when it cannot be read (the server then says
    /// why it refuses it).
    public init(peeking token: String) {
        let claims = AccessToken.peek(token)
        self.init(token: token, uid: claims?.sub ?? "", expiresAt: claims?.exp ?? Int64.max)
    }

    /// A provider that always hands out `token` (the anyRTC SDK's setUserToken with a fixed
    /// token): it cannot renew, so the session ends when the token expires.
    public static func fixedProvider(_ token: String) -> TokenProvider {
        let issued = IssuedToken(peeking: token)
        return { issued }
    }
}

/// Called whenever a fresh token is needed (connect, reconnect, renewal before expiry).
public typealias TokenProvider = @Sendable () async throws -> IssuedToken
