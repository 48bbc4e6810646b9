import LiveCore

/// Why a token was refused, each case tied to the anyRTC SDK code a client sees.
public enum TokenError: Error, Equatable, Sendable, CustomStringConvertible {
    /// No token where one is required (213 token must be verified).
    case missing
    /// Longer than the verifier reads (202).
    case tooLong(bytes: Int, limit: Int)
    /// Not three base64url parts of JSON with the required claims (202).
    case malformed(String)
    /// A header `alg` other than HS256, "none" included (202).
    case unsupportedAlgorithm(String)
    /// The MAC does not match: another secret, or a changed header or payload (202).
    case badSignature
    /// `exp` has passed (212 auth timeout).
    case expired(exp: Int64)
    /// `nbf` is still ahead (202).
    case notYetValid(nbf: Int64)
    /// A valid token that does not grant this action on this path (104 unauthorized).
    case forbidden(action: AccessAction, path: String)

    /// The anyRTC SDK code for this refusal.
    public var code: LiveCode {
        switch self {
        case .missing: .tokenMustBeVerified
        case .tooLong, .malformed, .unsupportedAlgorithm, .badSignature, .notYetValid: .authFailed
        case .expired: .authTimeout
        case .forbidden: .unauthorized
        }
    }

    public var description: String {
        switch self {
        case .missing: "no token given"
        case let .tooLong(bytes, limit): "token is \(bytes) bytes, more than the \(limit) accepted"
        case let .malformed(why): "malformed token: \(why)"
        case let .unsupportedAlgorithm(alg): "token algorithm \"\(alg)\" is not accepted (only HS256)"
        case .badSignature: "bad signature"
        case let .expired(exp): "token expired at \(exp) (unix seconds)"
        case let .notYetValid(nbf): "token not valid before \(nbf) (unix seconds)"
        case let .forbidden(action, path): "token does not allow \(action.rawValue) on \"\(path)\""
        }
    }

    /// The refusal as a server states it: code, the code's meaning, then the reason, e.g.
    /// "202 authentication failed: bad signature".
    public var statusText: String { "\(code.rawValue) \(code.message): \(description)" }
}
