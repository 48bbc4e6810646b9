import Foundation
import LiveAuth
import LiveRTMP

/// What the relay does with a live RTMP session whose token's `exp` passes
/// (`liveline serve --on-expiry`).
public enum TokenExpiryPolicy: String, Sendable, CaseIterable {
    /// The session goes on: its token was checked when it started publishing or playing,
    /// as nginx-rtmp's and SRS's publish/play hooks do.
    case keep
    /// The session is closed at its first ping tick past `exp` (plus the leeway).
    case close
}

/// The relay's RTMP access checks with auth on, as pure decisions over what the client
/// sent: where the token comes from and which path it must grant.
enum StreamAccess {
    /// The onStatus code of a play refused for its token.
    static let playFailed = "NetStream.Play.Failed"

    /// The token sent with connect: `token=` in the tcUrl's query, else in the app's (a
    /// client given `rtmp://h/live?token=…` as its server URL puts the query in both).
    static func connectToken(_ parameters: RTMPConnectParameters) -> String? {
        for text in [parameters.tcUrl, parameters.app] {
            guard let text, let mark = text.firstIndex(of: "?") else { continue }
            if let token = AccessToken.fromQuery(String(text[text.index(after: mark)...])) { return token }
        }
        return nil
    }

    /// The connect's app without a query ("live?token=…" → "live").
    static func app(_ parameters: RTMPConnectParameters?) -> String {
        let app = parameters?.app ?? ""
        return app.firstIndex(of: "?").map { String(app[..<$0]) } ?? app
    }

    /// The path a token must grant for `key`: "app/name" ("live/room1").
    static func path(_ key: StreamKey) -> String { key.description }

    /// The claims allowing `action` on `key`, from the token of the stream name's query or
    /// else the one sent with connect.
    static func authorize(
        _ verifier: TokenVerifier, _ action: AccessAction, key: StreamKey, query: String?, connectToken: String?,
        nowSeconds: Int64
    ) throws(TokenError) -> AccessClaims {
        try verifier.authorize(AccessToken.fromQuery(query) ?? connectToken, action, path: path(key), nowSeconds: nowSeconds)
    }

    /// Unix seconds now: tokens carry wall-clock times.
    static func nowSeconds() -> Int64 { Int64(Date().timeIntervalSince1970) }
}
