import LiveAuth
import LiveCore
import LiveSignal

/// The call signaling's door: with tokens (`verifier`), `register` and `renewToken` need
/// a token whose `sub` is the user id and that grants `call` on it (path = the user id,
/// `*` patterns as for the other actions). The token comes from the request's `token`
/// field or, for register, the `?token=` of the WebSocket's URL; a renewal brings its
/// own. Refusals carry TokenError's code: 213 no token, 202 bad token, 212 expired,
/// 104 not allowed or another user's. Without tokens everyone is admitted.
///
/// Pure: the clock readings come in as arguments.
public struct CallGate: Sendable {
    public let verifier: TokenVerifier?

    public init(verifier: TokenVerifier?) {
        self.verifier = verifier
    }

    /// Decides a register or renewToken for `userId` (the registering or the registered
    /// user). `nowSeconds` is unix time, `nowMicros` the registry's clock.
    public func admit(_ request: CallRequest, userId: String, connectionToken: String?, nowSeconds: Int64,
                      nowMicros: UInt64) -> LineAdmission {
        guard let verifier else { return .open }
        let token = request.op == .renewToken ? request.token : request.token ?? connectionToken
        do throws(TokenError) {
            let claims = try verifier.authorize(token, .call, path: userId, nowSeconds: nowSeconds)
            guard claims.sub == userId else {
                return .refused(code: .unauthorized, message: "the token is for \(claims.sub), not \(userId)")
            }
            return LineGate.admission(claims, nowSeconds: nowSeconds, nowMicros: nowMicros)
        } catch {
            return .refused(code: error.code, message: "\(error)")
        }
    }
}
