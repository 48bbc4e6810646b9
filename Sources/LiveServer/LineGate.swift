import LiveAuth
import LiveCore
import LiveSignal

/// What the registry learns about a create, join or renewToken before acting on it.
public enum LineAdmission: Equatable, Sendable {
    /// Go ahead: `userId` is the verified user (the token's `sub`; nil without tokens)
    /// and `expiresAtMicros` when its token expires, on the registry's clock (nil: never).
    case admitted(userId: String?, expiresAtMicros: UInt64?)
    /// Refused with the SDK's code (104, 202, 212, 213) and why.
    case refused(code: LiveCode, message: String)

    /// Admitted with no user and no expiry (a server without tokens).
    public static let open = LineAdmission.admitted(userId: nil, expiresAtMicros: nil)
}

/// What the registry knows of the participant asking for an admission.
public struct LineAdmissionContext: Equatable, Sendable {
    /// The user its token named at create or join, if any.
    public var userId: String?
    /// The line it is in.
    public var liveId: String?
    public var isHoster: Bool

    public init(userId: String? = nil, liveId: String? = nil, isHoster: Bool = false) {
        self.userId = userId
        self.liveId = liveId
        self.isHoster = isHoster
    }
}

/// The line's door: who may create a line, join one or renew a token.
///
/// With tokens (`verifier`): the token comes from the request's `token` field or the
/// `?token=` of the WebSocket's URL; create needs `line:host` on the live id, join
/// `line:guest` or `line:host`, renewToken (a new token in the request) the same as the
/// participant's role, or just a valid token outside a line. The token's `sub` is the
/// user id: a request naming another is refused (104). Refusals carry TokenError's code:
/// 213 no token, 202 bad token, 212 expired, 104 not allowed.
///
/// Without tokens only create is checked: the creator must publish the stream named like
/// the line. It proves it with a secret of its own choosing: it publishes
/// `rtmp://HOST/APP/LIVEID?lineKey=SECRET` and creates with `stream` "APP/LIVEID" and
/// `lineKey` SECRET; the relay tells what query the stream's live publisher gave. Only
/// that publisher knows the secret (players and other publishers never see a
/// publisher's query), so nobody can open a line before or instead of its hoster, also
/// not from the same address (a peer-address check would let anyone behind the same
/// NAT, or on the same machine, in).
///
/// Pure: the clock readings and the relay's answer come in as arguments.
public struct LineGate: Sendable {
    public let verifier: TokenVerifier?

    public init(verifier: TokenVerifier?) {
        self.verifier = verifier
    }

    /// Longest token lifetime the registry schedules (ten years): a later `exp` is cut to it.
    static let maxLifetimeSeconds: Int64 = 10 * 365 * 86_400

    /// The stream a create without tokens names: "APP/NAME" split at the last slash
    /// (the app may hold an instance, "live/inst/NAME"); nil when it names none.
    public static func stream(of request: LineRequest) -> StreamKey? {
        guard let text = request.stream, let slash = text.lastIndex(of: "/") else { return nil }
        let app = String(text[..<slash]), name = String(text[text.index(after: slash)...])
        guard !app.isEmpty, !name.isEmpty else { return nil }
        return StreamKey(app: app, name: name)
    }

    /// Decides a create, join or renewToken. `connectionToken`: the WebSocket URL's
    /// `?token=`. `publisherQuery`: for a create without tokens, the publish query of the
    /// live publisher of `stream(of: request)` ("" when it gave none), nil when nobody
    /// publishes it. `nowSeconds` is unix time, `nowMicros` the registry's clock.
    public func admit(_ request: LineRequest, _ context: LineAdmissionContext, connectionToken: String?,
                      publisherQuery: String?, nowSeconds: Int64, nowMicros: UInt64) -> LineAdmission {
        guard let verifier else {
            return request.op == .create ? publisherAdmission(request, publisherQuery: publisherQuery) : .open
        }
        let token = request.op == .renewToken ? request.token : request.token ?? connectionToken
        do throws(TokenError) {
            let claims = try authorize(verifier, token: token, request: request, context: context, nowSeconds: nowSeconds)
            if let userId = request.userId, !userId.isEmpty, userId != claims.sub {
                return .refused(code: .unauthorized, message: "userId \(userId) is not the token's user \(claims.sub)")
            }
            return Self.admission(claims, nowSeconds: nowSeconds, nowMicros: nowMicros)
        } catch {
            return .refused(code: error.code, message: "\(error)")
        }
    }

    /// Admitted as the verified claims' user, until their expiry on the registry's clock
    /// (at most `maxLifetimeSeconds` ahead).
    static func admission(_ claims: AccessClaims, nowSeconds: Int64, nowMicros: UInt64) -> LineAdmission {
        let exp = max(claims.exp, nowSeconds)
        let left = min(exp, nowSeconds + maxLifetimeSeconds) - nowSeconds
        return .admitted(userId: claims.sub, expiresAtMicros: nowMicros + UInt64(left) * 1_000_000)
    }

    private func authorize(_ verifier: TokenVerifier, token: String?, request: LineRequest, context: LineAdmissionContext,
                           nowSeconds: Int64) throws(TokenError) -> AccessClaims {
        func asGuest(_ liveId: String) throws(TokenError) -> AccessClaims {
            do {
                return try verifier.authorize(token, .lineGuest, path: liveId, nowSeconds: nowSeconds)
            } catch .forbidden {
                return try verifier.authorize(token, .lineHost, path: liveId, nowSeconds: nowSeconds)
            }
        }
        switch request.op {
        case .create:
            return try verifier.authorize(token, .lineHost, path: request.liveId ?? "", nowSeconds: nowSeconds)
        case .join:
            return try asGuest(request.liveId ?? "")
        default:
            guard let liveId = context.liveId else {
                guard let token else { throw .missing }
                return try verifier.verify(token, nowSeconds: nowSeconds)
            }
            return context.isHoster ? try verifier.authorize(token, .lineHost, path: liveId, nowSeconds: nowSeconds)
                : try asGuest(liveId)
        }
    }

    private func publisherAdmission(_ request: LineRequest, publisherQuery: String?) -> LineAdmission {
        let liveId = request.liveId ?? ""
        guard let stream = Self.stream(of: request), stream.name == liveId, let lineKey = request.lineKey, !lineKey.isEmpty else {
            return .refused(code: .unauthorized, message: "line \(liveId) may be created only by the publisher of a stream named "
                + "\(liveId): publish rtmp://HOST/APP/\(liveId)?lineKey=SECRET and create with stream \"APP/\(liveId)\" and that lineKey")
        }
        guard let publisherQuery else {
            return .refused(code: .unauthorized, message: "nobody publishes \(stream): start its push before creating line \(liveId)")
        }
        guard let given = LineStreams.queryValue("lineKey", in: publisherQuery), LineRegistry.sameToken(given, lineKey) else {
            return .refused(code: .unauthorized, message: "\(stream) is published without this lineKey: only its publisher may create line \(liveId)")
        }
        return .open
    }
}
