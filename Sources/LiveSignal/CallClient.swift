import LiveCore
import LiveNet

/// A user's end of the 1v1 call signaling: one WebSocket to `ws://HOST:HTTPPORT/call`
/// speaking `CallRequest` / `CallEvent`, with a heartbeat (a `SignalClient`, whose rules
/// it follows). `CallSession` drives it.
public typealias CallClient = SignalClient<CallRequest, CallEvent>

extension CallRequest: SignalRequest {
    public var opName: String { op.rawValue }
    public static var heartbeat: CallRequest { CallRequest(op: .heartbeat) }
}

extension CallEvent: SignalEvent {
    public var replyID: Int? { event == .reply ? id : nil }
    public static func localRefusal(id: Int, op: String, code: LiveCode, message: String) -> CallEvent {
        CallEvent(.reply, id: id, op: op, code: code, message: message)
    }

    /// The code of a reply or tokenExpired as an anyRTC SDK code.
    public var liveCode: LiveCode? { code.flatMap(LiveCode.init(rawValue:)) }
}

extension SignalClient where Request == CallRequest, Event == CallEvent {
    /// A call client; `heartbeatInterval` should stay well under the server's heartbeat timeout (30 s).
    public convenience init(url: String, loop: EventLoop, heartbeatInterval: Duration = .seconds(10)) {
        self.init(url: url, loop: loop, heartbeatInterval: heartbeatInterval, kind: "call")
    }

    /// Registers this connection as `userId` (with tokens checked, `token`'s `sub` must be
    /// it): the reply's code is 0, 604 when another connection holds the user id, 202 for a
    /// token that does not allow it.
    @discardableResult
    public func register(userId: String, token: String? = nil, reply: (@Sendable (CallEvent) -> Void)? = nil) -> Int {
        send(CallRequest(op: .register, userId: userId, token: token), reply: reply)
    }

    /// Carries `message` to its `remoteUserId`: the reply's code is 0, 203 when the
    /// user is not registered, 4 when the server refuses the message.
    @discardableResult
    public func send(message: CallMessage, reply: (@Sendable (CallEvent) -> Void)? = nil) -> Int {
        send(CallRequest(op: .send, message: message), reply: reply)
    }

    /// renewToken: a fresh token for the same user, after `tokenWillExpire`.
    @discardableResult
    public func renewToken(_ token: String, reply: (@Sendable (CallEvent) -> Void)? = nil) -> Int {
        send(CallRequest(op: .renewToken, token: token), reply: reply)
    }
}
