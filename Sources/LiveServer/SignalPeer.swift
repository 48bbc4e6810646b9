/// One signaling connection as the line's and the call's registries track it: when it was
/// last heard, its request budget, the user a verified token named and when that token
/// expires. Pure: every reading of the clock comes in as `nowMicros`.
struct SignalPeer: Sendable {
    let connectedAtMicros: UInt64
    var lastSeenMicros: UInt64
    var rate: LineRateBucket
    /// The user a verified token named (its `sub`); nil without tokens (or not yet).
    var userId: String?
    /// When the token expires; nil: never (no tokens).
    var expiresAtMicros: UInt64?
    /// When tokenWillExpire goes out for the current token; nil once sent (or no token).
    var warnAtMicros: UInt64?

    /// A connection opened now, its request budget full.
    init(nowMicros: UInt64, burst: Double) {
        connectedAtMicros = nowMicros
        lastSeenMicros = nowMicros
        rate = LineRateBucket(tokens: burst, atMicros: nowMicros)
    }

    /// A message (a request or a ping) arrived: the heartbeat clock restarts and one
    /// request is taken from the budget.
    mutating func heard(nowMicros: UInt64, perSecond: Double, burst: Double) -> LineRateBucket.Verdict {
        lastSeenMicros = nowMicros
        return rate.take(nowMicros: nowMicros, perSecond: perSecond, burst: burst)
    }

    /// Silent for `timeoutMicros` or longer.
    func isSilent(nowMicros: UInt64, timeoutMicros: UInt64) -> Bool {
        nowMicros >= lastSeenMicros + timeoutMicros
    }

    /// Binds the admitted user and token expiry. The warning goes out `warnAheadSeconds`
    /// before the expiry, or at half the token's remaining life when that is later (a
    /// 20 s token is not renewed every tick under a 300 s warning).
    mutating func bind(userId: String?, expiresAtMicros: UInt64?, nowMicros: UInt64, warnAheadSeconds: Int64) {
        self.userId = userId
        self.expiresAtMicros = expiresAtMicros
        warnAtMicros = expiresAtMicros.map { expiresAt in
            let left = expiresAt > nowMicros ? expiresAt - nowMicros : 0
            let ahead = UInt64(max(0, min(warnAheadSeconds, 1 << 32))) * 1_000_000
            return expiresAt - min(ahead, left / 2)
        }
    }

    /// Where the connection's token stands at a tick.
    enum TokenState: Equatable {
        case fine
        /// Warn now (once per token): this many seconds are left.
        case willExpire(seconds: Int)
        case expired
        /// Tokens are required and none was verified within the admission timeout.
        case unadmitted
    }

    /// The token's state now; a `willExpire` is answered once (the warning is marked sent).
    /// `admissionMicros`: with tokens required, how long a connection may stay without a
    /// verified one (nil: tokens are not required).
    mutating func tokenState(nowMicros: UInt64, admissionMicros: UInt64?) -> TokenState {
        if let admissionMicros, userId == nil, nowMicros >= connectedAtMicros + admissionMicros { return .unadmitted }
        guard let expiresAt = expiresAtMicros else { return .fine }
        if nowMicros >= expiresAt { return .expired }
        guard let warnAt = warnAtMicros, nowMicros >= warnAt else { return .fine }
        warnAtMicros = nil
        return .willExpire(seconds: Int((expiresAt - nowMicros + 999_999) / 1_000_000))
    }
}
