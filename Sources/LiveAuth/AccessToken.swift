import Foundation
import LiveCore

/// Access tokens are JWTs signed with HS256 (RFC 7519, RFC 7515), so an app's own server
/// can mint them with any stock JWT library and the shared secret:
/// `base64url(header).base64url(claims JSON).base64url(HMAC-SHA256(secret, first two parts))`.
public enum AccessToken {
    /// The header every token minted here carries.
    static let header = #"{"alg":"HS256","typ":"JWT"}"#

    /// A signed token carrying `claims`. The secret is the bytes of `TokenSecret.load`.
    public static func mint(_ claims: AccessClaims, secret: [UInt8]) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let payload = try? encoder.encode(claims) else {
            // Claims hold only strings, integers and arrays of them, which always encode.
            fatalError("JSONEncoder refused AccessClaims")
        }
        let signingInput = Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode([UInt8](payload))
        return signingInput + "." + Base64URL.encode(HMACSHA256.mac(key: secret, Array(signingInput.utf8)))
    }

    /// The claims WITHOUT checking the signature (a client reading its own token's exp);
    /// nil if unreadable.
    public static func peek(_ token: String) -> AccessClaims? {
        guard token.utf8.count <= peekLimit, let parts = try? split(token) else { return nil }
        return try? claims(parts.payload)
    }

    /// The `token=` value of a URL query ("a=1&token=XYZ"), percent-decoded; nil when absent
    /// or empty. A value that is not valid percent-encoding is returned as it is (verifying
    /// it then fails with a clear reason).
    public static func fromQuery(_ query: String?) -> String? {
        guard let query else { return nil }
        for pair in query.split(separator: "&") {
            guard let equals = pair.firstIndex(of: "="), pair[..<equals] == "token" else { continue }
            let raw = String(pair[pair.index(after: equals)...])
            let value = raw.removingPercentEncoding ?? raw
            return value.isEmpty ? nil : value
        }
        return nil
    }

    /// `url` with `token=` (percent-encoded) added to its query, replacing a `token=` already
    /// there: what a client appends to an RTMP URL (`rtmp://h/live/room1?token=…`).
    public static func appending(_ token: String, to url: String) -> String {
        guard let mark = url.firstIndex(of: "?") else { return url + "?" + query(nil, setting: token) }
        return String(url[..<mark]) + "?" + query(String(url[url.index(after: mark)...]), setting: token)
    }

    /// `query` ("line=s&token=old", or nil) with its `token=` set to `token`, percent-encoded.
    public static func query(_ query: String?, setting token: String) -> String {
        let encoded = token.addingPercentEncoding(withAllowedCharacters: unreserved) ?? token
        let kept = (query ?? "").split(separator: "&").filter { !$0.hasPrefix("token=") }
        return (kept + ["token=" + encoded[...]]).joined(separator: "&")
    }

    /// RFC 3986's unreserved characters, ASCII only (`CharacterSet.alphanumerics` would let
    /// any Unicode letter through unencoded).
    private static let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    /// The most `peek` reads; a client's own token is never near it.
    static let peekLimit = 65536

    /// The three encoded parts of a token.
    struct Parts {
        var header: Substring
        var payload: Substring
        var signature: Substring
        /// What the signature covers: header "." payload.
        var signingInput: Substring
    }

    static func split(_ token: String) throws(TokenError) -> Parts {
        let pieces = token.split(separator: ".", omittingEmptySubsequences: false)
        guard pieces.count == 3 else {
            throw .malformed("expected 3 dot-separated parts, found \(pieces.count)")
        }
        return Parts(
            header: pieces[0], payload: pieces[1], signature: pieces[2],
            signingInput: token[pieces[0].startIndex..<pieces[1].endIndex])
    }

    private struct Header: Decodable {
        var alg: String
    }

    /// The header's `alg`.
    static func algorithm(_ header: Substring) throws(TokenError) -> String {
        guard let bytes = Base64URL.decode(header) else { throw .malformed("header is not base64url") }
        guard let decoded = try? JSONDecoder().decode(Header.self, from: Data(bytes)) else {
            throw .malformed("header is not a JSON object with \"alg\"")
        }
        return decoded.alg
    }

    static func claims(_ payload: Substring) throws(TokenError) -> AccessClaims {
        guard let bytes = Base64URL.decode(payload) else { throw .malformed("payload is not base64url") }
        do {
            return try JSONDecoder().decode(AccessClaims.self, from: Data(bytes))
        } catch {
            throw .malformed("payload is not JSON claims with sub, exp and perm (\(reason(error)))")
        }
    }

    /// A short reason from a DecodingError (which field), not its whole debug text.
    private static func reason(_ error: Error) -> String {
        switch error as? DecodingError {
        case let .keyNotFound(key, _)?: "no \"\(key.stringValue)\""
        case let .typeMismatch(_, context)?, let .valueNotFound(_, context)?, let .dataCorrupted(context)?:
            context.codingPath.isEmpty
                ? "not a JSON object" : "bad \"\(context.codingPath.map(\.stringValue).joined(separator: "."))\""
        default: "unreadable"
        }
    }
}
