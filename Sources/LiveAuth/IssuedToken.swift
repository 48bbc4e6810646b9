/// What an app's token server hands out (the anyRTC SDK token provider's getRTCToken:
/// token, uid, expiry).
public struct IssuedToken: Sendable, Equatable {
    public var token: String
    public var uid: String
    /// Unix seconds.
    public var expiresAt: Int64

    public init(token: String, uid: String, expiresAt: Int64) {
        self.token = token
        self.uid = uid
        self.expiresAt = expiresAt
    }
}

/// Called whenever a fresh token is needed (connect, reconnect, renewal before expiry).
public typealias TokenProvider = @Sendable () async throws -> IssuedToken
