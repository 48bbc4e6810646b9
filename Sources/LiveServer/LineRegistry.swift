import Foundation
import LiveCore
import LiveSignal

/// Every co-host line of the server, keyed by live id, and the participants talking to
/// them: routes each request to its room, answers wrong-state calls with the anyRTC SDK's code,
/// limits each participant's request rate, times out applications, silent participants
/// and expired tokens, sends member counts once per tick, lists live rooms and decides
/// who may publish or play a co-host's stream.
///
/// Who may create, join or renew a token is decided outside (`LineGate`: tokens, the
/// relay's publishers) and handed in as a `LineAdmission`; the registry binds the
/// admitted user id and token expiry to the participant.
///
/// Pure: time comes in as `nowMicros` arguments (a monotonic clock in µs), randomness
/// from `makeToken`, and every change returns the `LineDelivery` list to carry out.
/// Not thread-safe by itself: `LineService` keeps it under a lock.
public struct LineRegistry: Sendable {
    /// Stream names with this prefix belong to the line's co-hosts: only the co-host
    /// given a pubId may publish it, with the `line=SECRET` query it was given.
    public static let pubIdPrefix = "line-"

    private struct Participant: Sendable {
        /// Its clocks, request budget, token user and expiry.
        var peer: SignalPeer
        var liveId: String?
    }

    public let limits: LineLimits
    /// Tokens are checked: a participant must have one verified within
    /// `limits.admissionTimeout` (`LineService` sets this when it has a verifier).
    public var requiresAdmission = false
    private let makeToken: @Sendable (_ bytes: Int) -> String
    private var participants: [LineParticipantID: Participant] = [:]
    private var rooms: [String: LineRoom] = [:]
    private var sequence: UInt64 = 0

    /// `makeToken(n)`: n random bytes as URL-safe text (the default draws them from the
    /// system's generator); peerIds use 12 bytes, pubIds and secrets 16 and 24.
    public init(limits: LineLimits = LineLimits(), makeToken: @escaping @Sendable (Int) -> String = LineStreams.randomToken) {
        self.limits = limits
        self.makeToken = makeToken
    }

    // MARK: participants

    /// A connection opened; its heartbeat clock starts now, its request budget full.
    public mutating func connect(_ participant: LineParticipantID, nowMicros: UInt64) {
        participants[participant] = Participant(peer: SignalPeer(nowMicros: nowMicros, burst: limits.requestBurst), liveId: nil)
    }

    /// A sign of life that is not a request (a WebSocket ping or pong, a binary message)
    /// resets the participant's heartbeat clock and counts against its request rate: a
    /// participant far over it is disconnected.
    public mutating func touch(_ participant: LineParticipantID, nowMicros: UInt64) -> [LineDelivery] {
        switch heard(participant, nowMicros: nowMicros) {
        case .allowed, .refused: return []
        case .abusive: return dropAbuser(participant)
        }
    }

    /// A connection closed: the participant leaves its room (a hoster's line closes for all).
    public mutating func disconnect(_ participant: LineParticipantID, reason: String = "left") -> [LineDelivery] {
        guard let liveId = participants.removeValue(forKey: participant)?.liveId, var room = rooms[liveId] else { return [] }
        if room.hoster == participant {
            return closeRoom(room, code: .networkDisconnected, reason: reason)
        }
        let out = room.leave(participant, reason: reason)
        rooms[liveId] = room
        return out
    }

    /// Handles one text message from `participant` (any message counts as a heartbeat);
    /// `admit` decides creates, joins and renewals (see `handle`).
    public mutating func receive(_ text: String, from participant: LineParticipantID, nowMicros: UInt64,
                                 admit: (LineRequest, LineAdmissionContext) -> LineAdmission = { _, _ in .open }) -> [LineDelivery] {
        switch LineRequest.parse(text) {
        case .success(let request):
            return handle(request, from: participant, nowMicros: nowMicros, admit: admit)
        case .failure(let refusal):
            return refuse(refusal, from: participant, nowMicros: nowMicros)
        }
    }

    /// Answers a message that is not a request (it counts against the rate like one).
    public mutating func refuse(_ refusal: LineRefusal, from participant: LineParticipantID, nowMicros: UInt64) -> [LineDelivery] {
        if let limited = limitRate(participant, id: refusal.id, op: nil, nowMicros: nowMicros) { return limited }
        return [.send(LineEvent(.reply, id: refusal.id, code: refusal.code, message: refusal.message), to: participant)]
    }

    /// What the registry tells `admit` about the participant asking.
    public func admissionContext(of participant: LineParticipantID) -> LineAdmissionContext {
        let liveId = participants[participant]?.liveId
        return LineAdmissionContext(userId: participants[participant]?.peer.userId, liveId: liveId,
                                    isHoster: liveId.flatMap { rooms[$0] }?.hoster == participant)
    }

    /// Handles one request from `participant`. Every request gets exactly one `reply`
    /// (over the rate limit: 201; far over: the connection is closed). `admit` is asked
    /// once the cheap checks of a create, join or renewToken passed; the default admits
    /// everyone (no tokens, no publisher check).
    public mutating func handle(_ request: LineRequest, from participant: LineParticipantID, nowMicros: UInt64,
                                admit: (LineRequest, LineAdmissionContext) -> LineAdmission = { _, _ in .open }) -> [LineDelivery] {
        if let limited = limitRate(participant, id: request.id, op: request.op, nowMicros: nowMicros) { return limited }
        switch request.op {
        case .heartbeat:
            return [Self.reply(request, .ok, to: participant)]
        case .create:
            return create(request, from: participant, nowMicros: nowMicros, admit: admit)
        case .join:
            return join(request, from: participant, nowMicros: nowMicros, admit: admit)
        case .renewToken:
            return renew(request, from: participant, nowMicros: nowMicros, admit: admit)
        default:
            break
        }
        guard let liveId = participants[participant]!.liveId, var room = rooms[liveId] else {
            return [Self.reply(request, .lineNotStarted, "not in a line: create or join one first", to: participant)]
        }
        let isHoster = room.hoster == participant
        let hosterOps: Set<LineRequest.Op> = [.accept, .reject, .close, .setMaxCohosts, .setLive, .shareOpen, .shareClose, .audioLevel]
        let guestOps: Set<LineRequest.Op> = [.apply, .cancel, .leave]
        if hosterOps.contains(request.op), !isHoster {
            return [Self.reply(request, .unauthorized, "only the line's hoster may \(request.op.rawValue)", to: participant)]
        }
        if guestOps.contains(request.op), isHoster {
            return [Self.reply(request, .invalidParams, "\(request.op.rawValue) is a guest request", to: participant)]
        }
        var out: [LineDelivery]
        switch request.op {
        case .apply:
            out = room.apply(participant, request: request, nowMicros: nowMicros, peerId: makeToken(12))
        case .cancel:
            out = room.cancel(participant, request: request)
        case .hangup:
            out = isHoster ? room.hosterHangup(request) : room.guestHangup(participant, request: request)
        case .leave:
            participants[participant]!.liveId = nil
            out = [Self.reply(request, .ok, to: participant)] + room.leave(participant, reason: "left")
        case .setAVStatus:
            out = room.setAVStatus(participant, request: request)
        case .accept:
            out = room.accept(request, pubId: Self.pubIdPrefix + makeToken(16), secret: makeToken(24), hearSecret: makeToken(24))
        case .reject:
            out = room.reject(request)
        case .setMaxCohosts:
            guard let maxCohosts = request.maxCohosts, maxCohosts >= 0 else {
                return [Self.reply(request, .invalidParams, "setMaxCohosts needs a maxCohosts of 0 or more", to: participant)]
            }
            room.maxCohosts = min(limits.maxCohosts, maxCohosts)
            out = [Self.reply(request, .ok, to: participant)]
        case .setLive:
            guard let live = request.live else {
                return [Self.reply(request, .invalidParams, "setLive needs live (true or false)", to: participant)]
            }
            out = [Self.reply(request, .ok, to: participant)] + room.setLive(live)
        case .close:
            return [Self.reply(request, .ok, to: participant)] + closeRoom(room, code: .ok, reason: "closed")
        case .message:
            out = message(request, from: participant, in: room)
        case .shareOpen:
            if let info = request.shareInfo, info.utf8.count > limits.maxShareInfo {
                return [Self.reply(request, .invalidParams, "shareInfo is over \(limits.maxShareInfo) bytes", to: participant)]
            }
            out = room.openShare(request)
        case .shareClose:
            out = room.closeShare(request)
        case .audioLevel:
            out = room.audioLevel(request)
        case .heartbeat, .create, .join, .renewToken:
            out = []
        }
        rooms[liveId] = room
        return out
    }

    /// Applications unanswered past `applyTimeout` are cancelled for both sides; tokens
    /// near their expiry are announced (`tokenWillExpire`) and expired ones end their
    /// session (212); participants silent past `heartbeatTimeout` are gone (and
    /// disconnected); rooms whose member count changed send it, once per tick.
    public mutating func tick(nowMicros: UInt64) -> [LineDelivery] {
        var out: [LineDelivery] = []
        let applyMicros = Self.micros(limits.applyTimeout)
        let text = "the hoster did not answer within \(limits.applyTimeout)"
        for liveId in rooms.keys.sorted() {
            out += rooms[liveId]!.expireApplications(nowMicros: nowMicros, timeoutMicros: applyMicros, timeoutText: text)
        }
        out += expireTokens(nowMicros: nowMicros)
        let heartbeatMicros = Self.micros(limits.heartbeatTimeout)
        let silent = participants.filter { $0.value.peer.isSilent(nowMicros: nowMicros, timeoutMicros: heartbeatMicros) }.keys.sorted()
        for participant in silent {
            out += end(participant, reason: "heartbeat", closing: "no message for \(limits.heartbeatTimeout)", code: .networkDisconnected)
        }
        for liveId in rooms.keys.sorted() {
            out += rooms[liveId]!.takeMemberCount()
        }
        return out
    }

    // MARK: queries

    /// Rooms in creation order with their live info and member count (hoster included).
    public var roomSummaries: [(liveId: String, liveInfo: String, members: Int)] {
        roomsInOrder.map { ($0.liveId, $0.liveInfo, $0.memberCount) }
    }

    /// The living list in the anyRTC SDK's shape (getLivingList):
    /// `{"LiveList": [liveInfo...], "LiveMembers": [count...]}`, rooms created with an
    /// empty liveInfo left out. A liveInfo that is a JSON object or array (checked
    /// strictly at create) appears as JSON, other text as a string.
    public func livingListJSON() -> String {
        let listed = roomsInOrder.filter { !$0.liveInfo.isEmpty }
        let infos = listed.map { room -> String in
            if Self.looksLikeJSON(room.liveInfo), LineJSONValidator.isStrict(room.liveInfo) { return room.liveInfo }
            return LineJSON.encode([room.liveInfo]).dropFirst().dropLast().description
        }
        return "{\"LiveList\":[\(infos.joined(separator: ","))],\"LiveMembers\":[\(listed.map { String($0.memberCount) }.joined(separator: ","))]}"
    }

    /// Page `page` (from 1) of `liveId`'s members in join order, `size` to a page (the
    /// limits' `membersPerPage` when nil; at least 1), nil when there is no such line.
    public func memberPage(liveId: String, page: Int, size: Int? = nil) -> LineMemberPage? {
        guard let room = rooms[liveId] else { return nil }
        let size = max(1, size ?? limits.membersPerPage)
        let members = room.membersInOrder
        // `page` comes from a request: only pages that exist reach the multiplication,
        // so no page number can overflow it.
        let index = page > 0 ? page - 1 : 0
        let pages = (members.count + size - 1) / size
        let slice = index < pages ? Array(members[(index * size)..<min(members.count, index * size + size)]) : []
        return LineMemberPage(liveId: liveId, page: page, pageSize: size, total: members.count, members: slice.map { member in
            let role = member.participant == room.hoster ? "hoster" : room.cohost(of: member.participant) != nil ? "cohost" : "guest"
            return LineMemberPage.Member(userId: member.userId, userData: member.userData, role: role)
        })
    }

    /// Why a publish of `streamName` with `query` is refused, nil when it is allowed:
    /// names starting with `line-` are publishable only by their co-host, whose query
    /// carries `line=SECRET`, and a co-host's hear stream (its pubId + `LineStreams.hearSuffix`) only
    /// by its line's hoster, with the `line=` secret the hoster was given for it; every
    /// other name is left to the relay's own rules.
    public func publishRefusal(streamName: String, query: String?) -> String? {
        guard streamName.hasPrefix(Self.pubIdPrefix) else { return nil }
        let given = LineStreams.queryValue("line", in: query)
        if let (_, cohost) = hearStream(streamName) {
            guard let given, Self.sameToken(given, cohost.hearSecret) else {
                return "\(streamName) may be published only by its line's hoster (with its line= secret)"
            }
            return nil
        }
        guard let cohost = rooms.values.lazy.compactMap({ $0.cohost(pubId: streamName) }).first else {
            return "\(streamName) is not the stream of a co-host on a line"
        }
        guard let given, Self.sameToken(given, cohost.secret) else {
            return "\(streamName) may be published only by its co-host (with its line= secret)"
        }
        return nil
    }

    /// Why a player may not play `streamName`, nil when it may. A co-host's hear stream is
    /// played only by that co-host: with tokens (`checksUsers`), the user `userId` its
    /// token names; without, a player whose query carries the co-host's `line=` secret.
    /// With tokens, other `line-…` streams are played only by the members of their line
    /// (the hoster and the co-hosts), known by their user id (nil `userId` is refused);
    /// without tokens they are left to the relay, as every other name is.
    public func playRefusal(streamName: String, query: String?, userId: String?, checksUsers: Bool) -> String? {
        guard streamName.hasPrefix(Self.pubIdPrefix) else { return nil }
        if let (room, cohost) = hearStream(streamName) {
            let allowed = checksUsers
                ? userId.map { !$0.isEmpty && room.member(userId: $0)?.participant == cohost.guest } ?? false
                : LineStreams.queryValue("line", in: query).map { Self.sameToken($0, cohost.secret) } ?? false
            return allowed ? nil : "\(streamName) may be played only by its co-host"
        }
        if streamName.hasSuffix(LineStreams.hearSuffix) { return "\(streamName) is not the hear stream of a co-host on a line" }
        guard checksUsers else { return nil }
        guard let room = rooms.values.first(where: { $0.cohost(pubId: streamName) != nil }) else {
            return "\(streamName) is not the stream of a co-host on a line"
        }
        guard let userId, !userId.isEmpty,
              let member = room.member(userId: userId), room.isOnLine(member.participant) else {
            return "\(streamName) may be played only by the hoster and co-hosts of line \(room.liveId)"
        }
        return nil
    }

    /// The line and co-host whose hear stream `streamName` is (`line-XXX.hear`).
    private func hearStream(_ streamName: String) -> (LineRoom, LineRoom.Cohost)? {
        guard streamName.hasSuffix(LineStreams.hearSuffix) else { return nil }
        let pubId = String(streamName.dropLast(LineStreams.hearSuffix.count))
        return rooms.values.lazy.compactMap { room in room.cohost(pubId: pubId).map { (room, $0) } }.first
    }

    // MARK: private

    private var roomsInOrder: [LineRoom] { rooms.values.sorted { $0.sequence < $1.sequence } }

    private mutating func create(_ request: LineRequest, from participant: LineParticipantID, nowMicros: UInt64,
                                 admit: (LineRequest, LineAdmissionContext) -> LineAdmission) -> [LineDelivery] {
        if let current = participants[participant]!.liveId {
            return Self.lineResult(request, .alreadyOpen, "already in line \(current)", to: participant)
        }
        guard let liveId = request.liveId, !liveId.isEmpty else {
            return Self.lineResult(request, .invalidParams, "create needs a liveId", to: participant)
        }
        if let refusal = checkUser(request) ?? checkLiveInfo(request.liveInfo ?? "") {
            return Self.lineResult(request, .invalidParams, refusal, to: participant)
        }
        if let maxCohosts = request.maxCohosts, maxCohosts < 0 {
            return Self.lineResult(request, .invalidParams, "maxCohosts is \(maxCohosts); it must not be negative", to: participant)
        }
        let admission = admit(request, admissionContext(of: participant))
        if let room = rooms[liveId] {
            guard case .admitted(let userId, _) = admission, Self.isHoster(of: room, userId: userId, request: request) else {
                return Self.lineResult(request, .alreadyOpen, "line \(liveId) already has a hoster", to: participant)
            }
        }
        let member: LineRoom.Member
        switch admittedMember(request, participant, admission, nowMicros: nowMicros) {
        case .failure(let refusal): return Self.lineResult(request, refusal.code, refusal.message, to: participant)
        case .success(let admitted): member = admitted
        }
        participants[participant]!.liveId = liveId
        if var room = rooms[liveId] {
            // The hoster is back: its old connection leaves (closed, as a dead one would be).
            let old = room.hoster
            participants[old]?.liveId = nil
            let out = Self.lineResult(request, .ok, "reclaimed line \(liveId)", to: participant) + room.reclaim(by: member)
                + room.setLive(request.live ?? true)
                + [LineDelivery(to: old, .disconnect(reason: "the hoster of line \(liveId) reconnected", code: .forcedExit))]
            rooms[liveId] = room
            return out
        }
        let maxCohosts = min(limits.maxCohosts, request.maxCohosts ?? limits.maxCohosts)
        rooms[liveId] = LineRoom(liveId: liveId, hoster: member, liveInfo: request.liveInfo ?? "", sequence: sequence,
                                 maxCohosts: maxCohosts, hosterKey: requiresAdmission ? nil : request.lineKey,
                                 audioLine: request.audioLine ?? false, live: request.live ?? true)
        return Self.lineResult(request, .ok, nil, to: participant) + [.send(LineEvent(.memberCount, total: 1), to: participant)]
    }

    /// An admitted create comes from the line's own hoster: with tokens, the same user
    /// (the token's `sub`, allowed `line:host`); without, the same lineKey, which the
    /// gate found on the stream's live publisher.
    private static func isHoster(of room: LineRoom, userId: String?, request: LineRequest) -> Bool {
        if let userId {
            return room.member(room.hoster)?.userId == userId
        }
        guard let key = room.hosterKey, let given = request.lineKey else { return false }
        return sameToken(key, given)
    }

    private mutating func join(_ request: LineRequest, from participant: LineParticipantID, nowMicros: UInt64,
                               admit: (LineRequest, LineAdmissionContext) -> LineAdmission) -> [LineDelivery] {
        if let current = participants[participant]!.liveId {
            return Self.lineResult(request, .alreadyOpen, "already in line \(current)", to: participant)
        }
        guard let liveId = request.liveId, !liveId.isEmpty else {
            return Self.lineResult(request, .invalidParams, "join needs a liveId", to: participant)
        }
        if let refusal = checkUser(request) { return Self.lineResult(request, .invalidParams, refusal, to: participant) }
        guard var room = rooms[liveId] else {
            return Self.lineResult(request, .lineNotStarted, "line \(liveId) has not started", to: participant)
        }
        guard room.memberCount < limits.maxMembers else {
            return Self.lineResult(request, .noResources, "line \(liveId) is full: \(limits.maxMembers) members", to: participant)
        }
        var admission = admit(request, admissionContext(of: participant))
        if case .admitted(let admitted, _) = admission, let taken = admitted ?? request.userId, !taken.isEmpty,
           room.member(userId: taken) != nil {
            // Nobody speaks as someone already in the room (the hoster included).
            admission = .refused(code: .alreadyOpen, message: "user \(taken) is already in line \(liveId)")
        }
        let member: LineRoom.Member
        switch admittedMember(request, participant, admission, nowMicros: nowMicros) {
        case .failure(let refusal): return Self.lineResult(request, refusal.code, refusal.message, to: participant)
        case .success(let admitted): member = admitted
        }
        participants[participant]!.liveId = liveId
        let out = Self.lineResult(request, .ok, nil, to: participant) + room.join(member)
        rooms[liveId] = room
        return out
    }

    /// renewToken: a new token for the same user (and the same role) replaces the old
    /// one's expiry; a refused one leaves the old token in force until it expires.
    private mutating func renew(_ request: LineRequest, from participant: LineParticipantID, nowMicros: UInt64,
                                admit: (LineRequest, LineAdmissionContext) -> LineAdmission) -> [LineDelivery] {
        switch admit(request, admissionContext(of: participant)) {
        case .refused(let code, let message):
            return [Self.reply(request, code, message, to: participant)]
        case .admitted(let userId, let expiresAtMicros):
            if let bound = participants[participant]!.peer.userId, userId != bound {
                return [Self.reply(request, .unauthorized, "the new token is for \(userId ?? "nobody"), not \(bound)", to: participant)]
            }
            bind(participant, userId: userId, expiresAtMicros: expiresAtMicros, nowMicros: nowMicros)
            return [Self.reply(request, .ok, to: participant)]
        }
    }

    /// The member an admitted create or join makes, its user id the token's when there is
    /// one; the refusal otherwise.
    private mutating func admittedMember(_ request: LineRequest, _ participant: LineParticipantID, _ admission: LineAdmission,
                                         nowMicros: UInt64) -> Result<LineRoom.Member, LineRefusal> {
        switch admission {
        case .refused(let code, let message):
            return .failure(LineRefusal(code: code, message: message, id: request.id))
        case .admitted(let userId, let expiresAtMicros):
            bind(participant, userId: userId, expiresAtMicros: expiresAtMicros, nowMicros: nowMicros)
            sequence += 1
            return .success(LineRoom.Member(participant: participant, userId: userId ?? request.userId ?? "",
                                            userData: request.userData ?? "", sequence: sequence))
        }
    }

    /// Binds the admitted user and token expiry (the warning `tokenWillExpireSeconds`
    /// ahead, see `SignalPeer.bind`).
    private mutating func bind(_ participant: LineParticipantID, userId: String?, expiresAtMicros: UInt64?,
                               nowMicros: UInt64) {
        participants[participant]!.peer.bind(userId: userId, expiresAtMicros: expiresAtMicros, nowMicros: nowMicros,
                                             warnAheadSeconds: limits.tokenWillExpireSeconds)
    }

    private func checkUser(_ request: LineRequest) -> String? {
        if let liveId = request.liveId, liveId.utf8.count > limits.maxLiveId {
            return "liveId is \(liveId.utf8.count) bytes, more than \(limits.maxLiveId)"
        }
        if let userId = request.userId, userId.utf8.count > limits.maxUserData {
            return "userId is \(userId.utf8.count) bytes, more than \(limits.maxUserData)"
        }
        if let userData = request.userData, userData.utf8.count > limits.maxUserData {
            return "userData is \(userData.utf8.count) bytes, more than \(limits.maxUserData)"
        }
        return nil
    }

    /// liveInfo is pasted into `/api/live` for every client: one that looks like JSON (an
    /// object or array) must be strict JSON; a byte-order mark is refused; other text is
    /// listed as a JSON string.
    private func checkLiveInfo(_ liveInfo: String) -> String? {
        guard liveInfo.utf8.count <= limits.maxLiveInfo else {
            return "liveInfo is \(liveInfo.utf8.count) bytes, more than \(limits.maxLiveInfo)"
        }
        if liveInfo.unicodeScalars.first == "\u{FEFF}" { return "liveInfo starts with a byte-order mark" }
        if Self.looksLikeJSON(liveInfo), !LineJSONValidator.isStrict(liveInfo) {
            return "liveInfo looks like JSON but is not strict JSON (RFC 8259: no trailing commas, comments or single quotes)"
        }
        return nil
    }

    /// Starts (after whitespace) with `{` or `[`.
    static func looksLikeJSON(_ text: String) -> Bool {
        let first = text.utf8.first { $0 != 0x20 && $0 != 0x09 && $0 != 0x0A && $0 != 0x0D }
        return first == UInt8(ascii: "{") || first == UInt8(ascii: "[")
    }

    // MARK: rate and expiry

    /// Takes one request from the participant's budget: nil when allowed, else what to
    /// answer (201, or the connection closed when far over).
    private mutating func limitRate(_ participant: LineParticipantID, id: Int?, op: LineRequest.Op?, nowMicros: UInt64) -> [LineDelivery]? {
        switch heard(participant, nowMicros: nowMicros) {
        case .allowed:
            return nil
        case .refused:
            let text = "more than \(limits.requestsPerSecond) requests per second (burst \(limits.requestBurst)): slow down"
            return [.send(LineEvent(.reply, id: id, op: op?.rawValue, code: .badRequest, message: text), to: participant)]
        case .abusive:
            return dropAbuser(participant)
        }
    }

    /// A message arrived: the heartbeat clock restarts and one request is taken from the budget.
    private mutating func heard(_ participant: LineParticipantID, nowMicros: UInt64) -> LineRateBucket.Verdict {
        if participants[participant] == nil { connect(participant, nowMicros: nowMicros) }
        return participants[participant]!.peer.heard(nowMicros: nowMicros, perSecond: limits.requestsPerSecond, burst: limits.requestBurst)
    }

    private mutating func dropAbuser(_ participant: LineParticipantID) -> [LineDelivery] {
        end(participant, reason: "rateLimit", closing: "far more than \(limits.requestsPerSecond) requests per second", code: .badRequest)
    }

    /// Ends a participant's session: `event` to it first (if any), its room told it left
    /// for `reason`, its connection closed saying `closing` and the SDK's `code`.
    private mutating func end(_ participant: LineParticipantID, reason: String, closing: String, code: LiveCode,
                              event: LineEvent? = nil) -> [LineDelivery] {
        (event.map { [.send($0, to: participant)] } ?? []) + disconnect(participant, reason: reason)
            + [LineDelivery(to: participant, .disconnect(reason: closing, code: code))]
    }

    /// tokenWillExpire once per token (see `SignalPeer.bind` for when); at the expiry,
    /// tokenExpired (212) and the connection closed.
    private mutating func expireTokens(nowMicros: UInt64) -> [LineDelivery] {
        var out: [LineDelivery] = []
        let admissionMicros = requiresAdmission ? Self.micros(limits.admissionTimeout) : nil
        for participant in participants.keys.sorted() where participants[participant] != nil {
            let text: String, reason: String
            switch participants[participant]!.peer.tokenState(nowMicros: nowMicros, admissionMicros: admissionMicros) {
            case .fine:
                continue
            case .willExpire(let seconds):
                out.append(.send(LineEvent(.tokenWillExpire, seconds: seconds), to: participant))
                continue
            case .expired:
                (text, reason) = ("the token expired without renewal", "tokenExpired")
            case .unadmitted:
                (text, reason) = ("no token verified within \(limits.admissionTimeout)", "authTimeout")
            }
            out += end(participant, reason: reason, closing: "\(text) (212)", code: .authTimeout,
                       event: LineEvent(.tokenExpired, code: .authTimeout, message: text))
        }
        return out
    }

    private func message(_ request: LineRequest, from participant: LineParticipantID, in room: LineRoom) -> [LineDelivery] {
        func refuse(_ text: String) -> [LineDelivery] { [Self.reply(request, .invalidParams, text, to: participant)] }
        guard let member = room.member(participant), !member.userId.isEmpty else {
            return refuse("messages need a userId (give one to create or join)")
        }
        let type = request.type ?? "normal"
        guard type == "normal" || type == "barrage" else { return refuse("message type must be normal or barrage, not '\(type)'") }
        guard let userName = request.userName, !userName.isEmpty else { return refuse("userName is required") }
        guard userName.utf8.count <= limits.maxUserName else {
            return refuse("userName is \(userName.utf8.count) bytes, more than \(limits.maxUserName)")
        }
        let header = request.header ?? ""
        guard header.utf8.count <= limits.maxHeader else { return refuse("header is \(header.utf8.count) bytes, more than \(limits.maxHeader)") }
        guard let content = request.content, !content.isEmpty else { return refuse("content is required") }
        guard content.utf8.count <= limits.maxContent else {
            return refuse("content is \(content.utf8.count) bytes, more than \(limits.maxContent)")
        }
        let event = LineEvent(.message, userId: member.userId, type: type, userName: userName, header: header, content: content)
        return [Self.reply(request, .ok, to: participant)] + room.broadcast(event, from: participant)
    }

    private mutating func closeRoom(_ room: LineRoom, code: LiveCode, reason: String) -> [LineDelivery] {
        rooms[room.liveId] = nil
        for participant in room.everyone where participants[participant]?.liveId == room.liveId {
            participants[participant]!.liveId = nil
        }
        return room.closeAll(code: code, reason: reason)
    }

    static func reply(_ request: LineRequest, _ code: LiveCode, _ message: String? = nil, to participant: LineParticipantID) -> LineDelivery {
        .send(LineEvent(.reply, id: request.id, op: request.op.rawValue, code: code, message: message ?? code.message), to: participant)
    }

    /// The reply to create / join, then the anyRTC SDK's onRTCCreateLineResult / onRTCJoinLineResult.
    static func lineResult(_ request: LineRequest, _ code: LiveCode, _ message: String?, to participant: LineParticipantID) -> [LineDelivery] {
        [reply(request, code, message, to: participant),
         .send(LineEvent(.lineResult, code: code, message: message ?? code.message), to: participant)]
    }

    static func micros(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        return UInt64(max(0, seconds)) * 1_000_000 + UInt64(max(0, attoseconds) / 1_000_000_000_000)
    }

    /// Compares in time independent of where the first difference is.
    static func sameToken(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        guard x.count == y.count else { return false }
        return zip(x, y).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
    }
}

/// A participant's request budget: a token bucket refilled at `perSecond` up to `burst`.
/// A request with no token left is refused; the bucket then goes into debt, and a debt
/// of a whole burst (a client that keeps sending while refused) marks it abusive.
struct LineRateBucket: Sendable {
    enum Verdict: Equatable { case allowed, refused, abusive }

    var tokens: Double
    var atMicros: UInt64

    mutating func take(nowMicros: UInt64, perSecond: Double, burst: Double) -> Verdict {
        if nowMicros > atMicros {
            tokens = min(burst, tokens + Double(nowMicros - atMicros) / 1_000_000 * perSecond)
            atMicros = nowMicros
        }
        tokens -= 1
        if tokens >= 0 { return .allowed }
        return tokens <= -burst ? .abusive : .refused
    }
}
