import LiveCore
import LiveSignal

/// The 1v1 calls of the server (DESIGN.md §5): the users registered on `/call`, the
/// pending and accepted calls between them, the rooms already used, and the secrets of
/// the call streams. Decides every request (register, send, heartbeat, renewToken), what
/// a closed or silent connection ends, when invitations and tokens run out, and who may
/// publish or play a `call-` stream.
///
/// The rules:
/// - A user id is registered by one connection at a time (604 for a second); a
///   connection registers one user id.
/// - `send` carries a `CallMessage` to the connection of its `remoteUserId` (203 when
///   nobody registered it) as event `message`, only when its `fromUserId` is the
///   sender's registered id and it belongs to a call: an invitation starts one (in a room
///   no call on this server used before, the caller in no other call); accept comes from
///   the invitation's callee; cancelCall, reject and hangup come from either user of the
///   call and end it; mute, unmute, hold and unhold only within an accepted call. Anything
///   else is refused with 4 and carried nowhere.
/// - accept gives each user a secret and both users `callMedia`; while the call lasts,
///   `call-ROOM-1` (the caller's) and `call-ROOM-2` (the callee's) may be published only
///   by their own user and played only by the other, each with its own `call=SECRET`.
///   When the call ends the relay ends both publishers and every later publish or play
///   of the room's streams is refused.
/// - A user whose connection closes or goes silent ends its calls: the peer gets
///   `peerGone`. Invitations nobody answers are forgotten after `pendingTimeout`.
///
/// Pure: time comes in as `nowMicros` (a monotonic clock in µs), secrets from
/// `makeToken`, and every change returns the `CallDelivery` list to carry out. Not
/// thread-safe by itself: `CallService` keeps it under a lock.
public struct CallRegistry: Sendable {
    /// A call between two registered users, from the invitation on.
    public struct Call: Equatable, Sendable {
        /// The id the caller minted for the call (every message of the call carries it).
        public let callId: String
        /// The caller's fresh room: the call's streams are `call-ROOM-1` and `call-ROOM-2`.
        public let roomId: String
        /// The user ids of the caller (who invited) and the callee.
        public let caller: String
        public let callee: String
        /// Invited with audioCall rather than videoCall.
        public let audioOnly: Bool
        /// When the invitation came, on the registry's clock (for `pendingTimeout`).
        public let invitedAtMicros: UInt64
        /// Each user's secret for the call's streams, made at accept; empty while pending.
        public fileprivate(set) var secrets: [String: String] = [:]

        /// Accepted (the streams exist).
        public var isActive: Bool { !secrets.isEmpty }

        /// The other user of the call, nil when `user` is not in it.
        public func peer(of user: String) -> String? {
            user == caller ? callee : user == callee ? caller : nil
        }
    }

    public let limits: CallLimits
    /// Tokens are checked: a connection must register with a verified token within
    /// `limits.admissionTimeout` (`CallService` sets this when it has a verifier).
    public var requiresAdmission = false
    private let makeToken: @Sendable (_ bytes: Int) -> String
    private var connections: [CallConnectionID: SignalPeer] = [:]
    /// Registered user id → its connection.
    private var users: [String: CallConnectionID] = [:]
    /// Pending and accepted calls by callId; their room ids; each user's calls.
    private var calls: [String: Call] = [:]
    private var rooms: [String: String] = [:]
    private var callsOfUser: [String: Set<String>] = [:]
    /// Room ids of ended calls, never to be used again (as far as remembered).
    private var endedRooms: RecentSet

    /// `makeToken(n)`: n random bytes as URL-safe text (the default draws them from the
    /// system's generator); the streams' secrets use 16.
    public init(limits: CallLimits = CallLimits(), makeToken: @escaping @Sendable (Int) -> String = LineStreams.randomToken) {
        self.limits = limits
        self.makeToken = makeToken
        endedRooms = RecentSet(capacity: limits.maxRememberedRooms)
    }

    // MARK: connections

    /// A connection opened; its heartbeat clock starts now, its request budget full.
    public mutating func connect(_ connection: CallConnectionID, nowMicros: UInt64) {
        connections[connection] = SignalPeer(nowMicros: nowMicros, burst: limits.requestBurst)
    }

    /// A sign of life that is not a request (a WebSocket ping or pong) resets the
    /// heartbeat clock and counts against the request rate: far over it, the connection
    /// is closed.
    public mutating func touch(_ connection: CallConnectionID, nowMicros: UInt64) -> [CallDelivery] {
        switch heard(connection, nowMicros: nowMicros) {
        case .allowed, .refused: return []
        case .abusive: return dropAbuser(connection)
        }
    }

    /// A connection closed: its user is unregistered and its calls end (the peers get
    /// `peerGone`).
    public mutating func disconnect(_ connection: CallConnectionID) -> [CallDelivery] {
        guard let user = connections.removeValue(forKey: connection)?.userId, users[user] == connection else { return [] }
        users[user] = nil
        var out: [CallDelivery] = []
        for callId in (callsOfUser[user] ?? []).sorted() {
            guard let call = calls[callId], let peer = call.peer(of: user) else { continue }
            if let peerConnection = users[peer] {
                out.append(.send(CallEvent(.peerGone, callId: callId, userId: user, reason: "networkUnstable"), to: peerConnection))
            }
            out += end(call)
        }
        return out
    }

    /// Handles one text message from `connection` (any message counts as a heartbeat).
    public mutating func receive(_ text: String, from connection: CallConnectionID, nowMicros: UInt64,
                                 admit: (CallRequest, String) -> LineAdmission = { _, _ in .open }) -> [CallDelivery] {
        switch CallRequest.parse(text) {
        case .success(let request): handle(request, from: connection, nowMicros: nowMicros, admit: admit)
        case .failure(let refusal): refuse(refusal, from: connection, nowMicros: nowMicros)
        }
    }

    /// Answers a message that is not a request (it counts against the rate like one).
    public mutating func refuse(_ refusal: LineRefusal, from connection: CallConnectionID, nowMicros: UInt64) -> [CallDelivery] {
        if let limited = limitRate(connection, id: refusal.id, op: nil, nowMicros: nowMicros) { return limited }
        return [.send(CallEvent(.reply, id: refusal.id, code: refusal.code, message: refusal.message), to: connection)]
    }

    /// Handles one request. Every request gets exactly one `reply`, before any event it
    /// causes (over the rate limit: 201; far over: the connection is closed). `admit`
    /// decides register and renewToken once their cheap checks passed: it is given the
    /// request and the user id to admit (the registering one, or the registered one for a
    /// renewal); the default admits everyone (no tokens).
    public mutating func handle(_ request: CallRequest, from connection: CallConnectionID, nowMicros: UInt64,
                                admit: (CallRequest, String) -> LineAdmission = { _, _ in .open }) -> [CallDelivery] {
        if let limited = limitRate(connection, id: request.id, op: request.op, nowMicros: nowMicros) { return limited }
        switch request.op {
        case .heartbeat:
            return [Self.reply(request, .ok, to: connection)]
        case .register:
            return register(request, from: connection, nowMicros: nowMicros, admit: admit)
        case .renewToken:
            return renew(request, from: connection, nowMicros: nowMicros, admit: admit)
        case .send:
            return send(request, from: connection, nowMicros: nowMicros)
        }
    }

    /// Invitations unanswered past `pendingTimeout` are forgotten (their rooms stay
    /// used); tokens near their expiry are announced (`tokenWillExpire`) and expired ones
    /// end their registration (212); connections silent past `heartbeatTimeout` are gone
    /// (their calls end with `peerGone`, and they are closed).
    public mutating func tick(nowMicros: UInt64) -> [CallDelivery] {
        var out: [CallDelivery] = []
        let pendingMicros = LineRegistry.micros(limits.pendingTimeout)
        let unanswered = calls.values.filter { !$0.isActive && nowMicros >= $0.invitedAtMicros + pendingMicros }
        for call in unanswered.sorted(by: { $0.callId < $1.callId }) {
            out += end(call)
        }
        let admissionMicros = requiresAdmission ? LineRegistry.micros(limits.admissionTimeout) : nil
        for connection in connections.keys.sorted() {
            switch connections[connection]!.tokenState(nowMicros: nowMicros, admissionMicros: admissionMicros) {
            case .fine:
                break
            case .willExpire(let seconds):
                out.append(.send(CallEvent(.tokenWillExpire, seconds: seconds), to: connection))
            case .expired:
                out += expire(connection, "the token expired without renewal")
            case .unadmitted:
                out += expire(connection, "no token verified within \(limits.admissionTimeout)")
            }
        }
        let heartbeatMicros = LineRegistry.micros(limits.heartbeatTimeout)
        for connection in connections.keys.sorted() where connections[connection]!.isSilent(nowMicros: nowMicros, timeoutMicros: heartbeatMicros) {
            out += end(connection, closing: "no message for \(limits.heartbeatTimeout)", code: .networkDisconnected)
        }
        return out
    }

    // MARK: queries

    /// Registered users.
    public var userCount: Int { users.count }
    /// The connection that registered `userId`.
    public func connection(of userId: String) -> CallConnectionID? { users[userId] }
    /// The call `callId`, pending or accepted.
    public func call(_ callId: String) -> Call? { calls[callId] }
    /// Pending and accepted calls.
    public var callCount: Int { calls.count }
    /// Room ids of ended calls still remembered (at most `limits.maxRememberedRooms`).
    public var rememberedRoomCount: Int { endedRooms.count }
    /// A call (current or ended, as far as remembered) used `roomId`.
    public func isUsed(roomId: String) -> Bool { rooms[roomId] != nil || endedRooms.contains(roomId) }

    /// Why a publish of `streamName` with `query` is refused, nil when it is allowed:
    /// a `call-ROOM-1|2` stream only by its own user of an accepted call, with that user's
    /// `call=SECRET` and, when tokens are checked (`checksUsers`), a token of that user
    /// (`userId`, its `sub`). Every other `call-` name is refused; other names are left
    /// to the relay's other rules.
    public func publishRefusal(streamName: String, query: String?, userId: String?, checksUsers: Bool) -> String? {
        guard streamName.hasPrefix(CallStreams.prefix) else { return nil }
        guard let (call, callerStream) = callStream(streamName) else { return "\(streamName) is not a stream of a call in progress" }
        let owner = callerStream ? call.caller : call.callee
        return allowed(call, user: owner, query: query, userId: userId, checksUsers: checksUsers)
            ? nil : "\(streamName) may be published only by \(owner), with its call= secret"
    }

    /// Why a player may not play `streamName`, nil when it may: a `call-ROOM-1|2` stream
    /// only by the other user of its accepted call, with that user's own `call=SECRET`
    /// and, with tokens, a token of that user. Every other `call-` name is refused; other
    /// names are left to the relay.
    public func playRefusal(streamName: String, query: String?, userId: String?, checksUsers: Bool) -> String? {
        guard streamName.hasPrefix(CallStreams.prefix) else { return nil }
        guard let (call, callerStream) = callStream(streamName) else { return "\(streamName) is not a stream of a call in progress" }
        let player = callerStream ? call.callee : call.caller
        return allowed(call, user: player, query: query, userId: userId, checksUsers: checksUsers)
            ? nil : "\(streamName) may be played only by \(player), with its call= secret"
    }

    // MARK: private

    /// The accepted call whose stream `name` is, and whether it is the caller's.
    private func callStream(_ name: String) -> (Call, Bool)? {
        let body = name.dropFirst(CallStreams.prefix.count)
        guard body.count > 2, body.hasSuffix("-1") || body.hasSuffix("-2") else { return nil }
        guard let callId = rooms[String(body.dropLast(2))], let call = calls[callId], call.isActive else { return nil }
        return (call, body.hasSuffix("-1"))
    }

    private func allowed(_ call: Call, user: String, query: String?, userId: String?, checksUsers: Bool) -> Bool {
        guard let secret = call.secrets[user], let given = LineStreams.queryValue(CallStreams.queryName, in: query),
              LineRegistry.sameToken(given, secret) else { return false }
        return !checksUsers || userId == user
    }

    private mutating func register(_ request: CallRequest, from connection: CallConnectionID, nowMicros: UInt64,
                                   admit: (CallRequest, String) -> LineAdmission) -> [CallDelivery] {
        guard let userId = request.userId else { return [Self.reply(request, .invalidParams, "register needs a userId", to: connection)] }
        if let problem = limits.userIdProblem(userId) { return [Self.reply(request, .invalidParams, problem, to: connection)] }
        if let current = connections[connection]!.userId {
            return current == userId ? [Self.reply(request, .ok, "already registered as \(userId)", to: connection)]
                : [Self.reply(request, .invalidParams, "this connection is registered as \(current); open another for \(userId)", to: connection)]
        }
        if users[userId] != nil {
            return [Self.reply(request, .alreadyOpen, "user \(userId) is registered by another connection", to: connection)]
        }
        guard users.count < limits.maxUsers else {
            return [Self.reply(request, .noResources, "the server has its \(limits.maxUsers) users registered", to: connection)]
        }
        switch admit(request, userId) {
        case .refused(let code, let message):
            return [Self.reply(request, code, message, to: connection)]
        case .admitted(let sub, let expiresAtMicros):
            if let sub, sub != userId {
                return [Self.reply(request, .unauthorized, "the token is for \(sub), not \(userId)", to: connection)]
            }
            connections[connection]!.bind(userId: userId, expiresAtMicros: expiresAtMicros, nowMicros: nowMicros,
                                          warnAheadSeconds: limits.tokenWillExpireSeconds)
            users[userId] = connection
            return [Self.reply(request, .ok, to: connection)]
        }
    }

    /// renewToken: a new token for the same user replaces the old one's expiry; a refused
    /// one leaves the old token in force until it expires.
    private mutating func renew(_ request: CallRequest, from connection: CallConnectionID, nowMicros: UInt64,
                                admit: (CallRequest, String) -> LineAdmission) -> [CallDelivery] {
        guard let userId = connections[connection]!.userId else {
            return [Self.reply(request, .notInitialized, "not registered: register first", to: connection)]
        }
        switch admit(request, userId) {
        case .refused(let code, let message):
            return [Self.reply(request, code, message, to: connection)]
        case .admitted(let sub, let expiresAtMicros):
            if let sub, sub != userId {
                return [Self.reply(request, .unauthorized, "the new token is for \(sub), not \(userId)", to: connection)]
            }
            connections[connection]!.bind(userId: userId, expiresAtMicros: expiresAtMicros, nowMicros: nowMicros,
                                          warnAheadSeconds: limits.tokenWillExpireSeconds)
            return [Self.reply(request, .ok, to: connection)]
        }
    }

    private mutating func send(_ request: CallRequest, from connection: CallConnectionID, nowMicros: UInt64) -> [CallDelivery] {
        func refuse(_ code: LiveCode, _ text: String) -> [CallDelivery] { [Self.reply(request, code, text, to: connection)] }
        guard let user = connections[connection]!.userId else { return refuse(.notInitialized, "not registered: register first") }
        guard let message = request.message else { return refuse(.invalidParams, "send needs a message") }
        if let problem = problem(message, from: user) { return refuse(.invalidParams, problem) }
        let remote = message.remoteUserId
        guard let peerConnection = users[remote] else { return refuse(.noSuchUser, "\(remote) is not registered (offline)") }
        let call = calls[message.callId]
        let carried = CallDelivery.send(CallEvent(.message, call: message), to: peerConnection)
        switch message.action {
        case .videoCall, .audioCall:
            if let refusal = invitationProblem(message, from: user) { return refuse(.invalidParams, refusal) }
            let roomId = message.fromRoomId!
            calls[message.callId] = Call(callId: message.callId, roomId: roomId, caller: user, callee: remote,
                                         audioOnly: message.action == .audioCall, invitedAtMicros: nowMicros)
            rooms[roomId] = message.callId
            callsOfUser[user, default: []].insert(message.callId)
            callsOfUser[remote, default: []].insert(message.callId)
            return [Self.reply(request, .ok, to: connection), carried]
        case .accept:
            guard var call, !call.isActive, call.callee == user, call.caller == remote else {
                return refuse(.invalidParams, "there is no invitation \(message.callId) from \(remote) to \(user) to accept")
            }
            // One accepted call per user: its streams and secret are that call's.
            if let busy = activeCall(of: user) {
                return refuse(.invalidParams, "\(user) is already in call \(busy.callId): hang it up first")
            }
            if let busy = activeCall(of: remote) {
                return refuse(.invalidParams, "\(remote) is already in call \(busy.callId)")
            }
            call.secrets = [call.caller: makeToken(16), call.callee: makeToken(16)]
            calls[call.callId] = call
            return [Self.reply(request, .ok, to: connection), .send(media(call, for: user), to: connection),
                    .send(media(call, for: remote), to: peerConnection), carried]
        case .cancelCall, .reject, .hangup:
            guard let call, call.peer(of: user) == remote else {
                return refuse(.invalidParams, "there is no call \(message.callId) between \(user) and \(remote)")
            }
            return [Self.reply(request, .ok, to: connection), carried] + end(call)
        case .mute, .unmute, .hold, .unhold:
            guard let call, call.isActive, call.peer(of: user) == remote else {
                return refuse(.invalidParams, "there is no accepted call \(message.callId) between \(user) and \(remote)")
            }
            return [Self.reply(request, .ok, to: connection), carried]
        }
    }

    /// What is wrong with a message `user` sends, nil when nothing is.
    private func problem(_ message: CallMessage, from user: String) -> String? {
        if message.fromUserId != user { return "fromUserId \(message.fromUserId) is not the registered user \(user)" }
        if let problem = limits.userIdProblem(message.remoteUserId) { return "remoteUserId: \(problem)" }
        if message.remoteUserId == user { return "\(user) cannot call itself" }
        if message.callId.isEmpty || message.callId.utf8.count > limits.maxCallId {
            return "a callId must be 1…\(limits.maxCallId) bytes"
        }
        if message.version.utf8.count > limits.maxReason { return "message_version is over \(limits.maxReason) bytes" }
        if let text = message.fromUserExtension, text.utf8.count > limits.maxExtension {
            return "fromUserExtension is \(text.utf8.count) bytes, more than \(limits.maxExtension)"
        }
        for (name, text) in [("rejectReason", message.rejectReason), ("hangupReason", message.hangupReason)] {
            if let text, text.utf8.count > limits.maxReason { return "\(name) is \(text.utf8.count) bytes, more than \(limits.maxReason)" }
        }
        return nil
    }

    /// Why `user` may not start this call, nil when it may.
    private func invitationProblem(_ message: CallMessage, from user: String) -> String? {
        let roomId = message.fromRoomId ?? ""
        if let problem = limits.roomIdProblem(roomId) { return problem }
        if isUsed(roomId: roomId) { return "room \(roomId) already used: every call needs a fresh room id" }
        if calls[message.callId] != nil { return "call \(message.callId) already exists" }
        if let current = (callsOfUser[user] ?? []).sorted().compactMap({ calls[$0] }).first(where: { $0.caller == user || $0.isActive }) {
            return "\(user) is already in call \(current.callId): end it first"
        }
        return nil
    }

    private func activeCall(of user: String) -> Call? {
        (callsOfUser[user] ?? []).sorted().compactMap { calls[$0] }.first { $0.isActive }
    }

    /// The `callMedia` event for `user` of the accepted `call`.
    private func media(_ call: Call, for user: String) -> CallEvent {
        let query = "\(CallStreams.queryName)=\(call.secrets[user] ?? "")"
        let isCaller = user == call.caller
        return CallEvent(.callMedia, callId: call.callId, roomId: call.roomId,
                         publishStream: CallStreams.streamName(roomId: call.roomId, caller: isCaller), publishQuery: query,
                         playStream: CallStreams.streamName(roomId: call.roomId, caller: !isCaller), playQuery: query)
    }

    /// Forgets `call` (its room stays used); an accepted one's streams end.
    private mutating func end(_ call: Call) -> [CallDelivery] {
        calls[call.callId] = nil
        rooms[call.roomId] = nil
        endedRooms.insert(call.roomId)
        for user in [call.caller, call.callee] {
            callsOfUser[user]?.remove(call.callId)
            if callsOfUser[user]?.isEmpty == true { callsOfUser[user] = nil }
        }
        return call.isActive ? [CallDelivery(to: [], .endStreams(roomId: call.roomId))] : []
    }

    // MARK: rate and expiry

    private mutating func heard(_ connection: CallConnectionID, nowMicros: UInt64) -> LineRateBucket.Verdict {
        if connections[connection] == nil { connect(connection, nowMicros: nowMicros) }
        return connections[connection]!.heard(nowMicros: nowMicros, perSecond: limits.requestsPerSecond, burst: limits.requestBurst)
    }

    /// Takes one request from the connection's budget: nil when allowed, else what to
    /// answer (201, or the connection closed when far over).
    private mutating func limitRate(_ connection: CallConnectionID, id: Int?, op: CallRequest.Op?, nowMicros: UInt64) -> [CallDelivery]? {
        switch heard(connection, nowMicros: nowMicros) {
        case .allowed:
            return nil
        case .refused:
            let text = "more than \(limits.requestsPerSecond) requests per second (burst \(limits.requestBurst)): slow down"
            return [.send(CallEvent(.reply, id: id, op: op?.rawValue, code: .badRequest, message: text), to: connection)]
        case .abusive:
            return dropAbuser(connection)
        }
    }

    private mutating func dropAbuser(_ connection: CallConnectionID) -> [CallDelivery] {
        end(connection, closing: "far more than \(limits.requestsPerSecond) requests per second", code: .badRequest)
    }

    private mutating func expire(_ connection: CallConnectionID, _ text: String) -> [CallDelivery] {
        end(connection, closing: "\(text) (212)", code: .authTimeout, event: CallEvent(.tokenExpired, code: .authTimeout, message: text))
    }

    /// Ends a connection's session: `event` to it first (if any), its calls ended, the
    /// connection closed saying `closing` and the SDK's `code`.
    private mutating func end(_ connection: CallConnectionID, closing: String, code: LiveCode, event: CallEvent? = nil) -> [CallDelivery] {
        (event.map { [.send($0, to: connection)] } ?? []) + disconnect(connection)
            + [CallDelivery(to: connection, .disconnect(reason: closing, code: code))]
    }

    static func reply(_ request: CallRequest, _ code: LiveCode, _ message: String? = nil, to connection: CallConnectionID) -> CallDelivery {
        .send(CallEvent(.reply, id: request.id, op: request.op.rawValue, code: code, message: message ?? code.message), to: connection)
    }
}
