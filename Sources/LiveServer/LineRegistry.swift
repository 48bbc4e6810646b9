import Foundation
import LiveCore

/// Every co-host line of the server, keyed by live id, and the participants talking to
/// them: routes each request to its room, answers wrong-state calls with the seed's code,
/// times out applications and silent participants, lists live rooms and decides who may
/// publish a co-host's stream.
///
/// Pure: time comes in as `nowMicros` arguments (a monotonic clock in µs), randomness
/// from `makeToken`, and every change returns the `LineDelivery` list to carry out.
/// Not thread-safe by itself: `LineService` keeps it under a lock.
public struct LineRegistry: Sendable {
    /// Stream names with this prefix belong to the line's co-hosts: only the co-host
    /// given a pubId may publish it, with the `line=SECRET` query it was given.
    public static let pubIdPrefix = "line-"

    private struct Participant: Sendable {
        var lastSeenMicros: UInt64
        var liveId: String?
    }

    public let limits: LineLimits
    private let makeToken: @Sendable (_ bytes: Int) -> String
    private var participants: [LineParticipantID: Participant] = [:]
    private var rooms: [String: LineRoom] = [:]
    private var sequence: UInt64 = 0

    /// `makeToken(n)`: n random bytes as URL-safe text (the default draws them from the
    /// system's generator); peerIds use 12 bytes, pubIds and secrets 16 and 24.
    public init(limits: LineLimits = LineLimits(), makeToken: @escaping @Sendable (Int) -> String = LineRegistry.randomToken) {
        self.limits = limits
        self.makeToken = makeToken
    }

    /// `bytes` random bytes in unpadded base64url.
    @Sendable public static func randomToken(_ bytes: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        let data = Data((0..<bytes).map { _ in UInt8.random(in: 0...255, using: &generator) })
        return data.base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    // MARK: participants

    /// A connection opened; its heartbeat clock starts now.
    public mutating func connect(_ participant: LineParticipantID, nowMicros: UInt64) {
        participants[participant] = Participant(lastSeenMicros: nowMicros, liveId: nil)
    }

    /// A sign of life that is not a request (a WebSocket ping or pong) resets the
    /// participant's heartbeat clock.
    public mutating func touch(_ participant: LineParticipantID, nowMicros: UInt64) {
        participants[participant]?.lastSeenMicros = nowMicros
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

    /// Handles one text message from `participant` (any message counts as a heartbeat).
    public mutating func receive(_ text: String, from participant: LineParticipantID, nowMicros: UInt64) -> [LineDelivery] {
        switch LineRequest.parse(text) {
        case .success(let request):
            return handle(request, from: participant, nowMicros: nowMicros)
        case .failure(let refusal):
            participants[participant]?.lastSeenMicros = nowMicros
            return [.send(LineEvent(.reply, id: refusal.id, code: refusal.code, message: refusal.message), to: participant)]
        }
    }

    /// Handles one request from `participant`. Every request gets exactly one `reply`.
    public mutating func handle(_ request: LineRequest, from participant: LineParticipantID, nowMicros: UInt64) -> [LineDelivery] {
        if participants[participant] == nil { connect(participant, nowMicros: nowMicros) }
        participants[participant]!.lastSeenMicros = nowMicros
        switch request.op {
        case .heartbeat:
            return [Self.reply(request, .ok, to: participant)]
        case .create:
            return create(request, from: participant)
        case .join:
            return join(request, from: participant)
        default:
            break
        }
        guard let liveId = participants[participant]!.liveId, var room = rooms[liveId] else {
            return [Self.reply(request, .lineNotStarted, "not in a line: create or join one first", to: participant)]
        }
        let isHoster = room.hoster == participant
        let hosterOps: Set<LineRequest.Op> = [.accept, .reject, .close]
        let guestOps: Set<LineRequest.Op> = [.apply, .cancel, .leave]
        if hosterOps.contains(request.op), !isHoster {
            return [Self.reply(request, .invalidParams, "\(request.op.rawValue) is a hoster request", to: participant)]
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
            out = room.accept(request, maxCohosts: limits.maxCohosts,
                              pubId: Self.pubIdPrefix + makeToken(16), secret: makeToken(24))
        case .reject:
            out = room.reject(request)
        case .close:
            return [Self.reply(request, .ok, to: participant)] + closeRoom(room, code: .ok, reason: "closed")
        case .message:
            out = message(request, from: participant, in: room)
        case .heartbeat, .create, .join:
            out = []
        }
        rooms[liveId] = room
        return out
    }

    /// Applications unanswered past `applyTimeout` are cancelled for both sides;
    /// participants silent past `heartbeatTimeout` are gone (and disconnected).
    public mutating func tick(nowMicros: UInt64) -> [LineDelivery] {
        var out: [LineDelivery] = []
        let applyMicros = Self.micros(limits.applyTimeout)
        let text = "the hoster did not answer within \(limits.applyTimeout)"
        for liveId in rooms.keys.sorted() {
            out += rooms[liveId]!.expireApplications(nowMicros: nowMicros, timeoutMicros: applyMicros, timeoutText: text)
        }
        let heartbeatMicros = Self.micros(limits.heartbeatTimeout)
        let silent = participants.filter { nowMicros >= $0.value.lastSeenMicros + heartbeatMicros }.keys.sorted()
        for participant in silent {
            out += disconnect(participant, reason: "heartbeat")
            out.append(LineDelivery(to: participant, .disconnect(reason: "no message for \(limits.heartbeatTimeout)")))
        }
        return out
    }

    // MARK: queries

    /// Rooms in creation order with their live info and member count (hoster included).
    public var roomSummaries: [(liveId: String, liveInfo: String, members: Int)] {
        roomsInOrder.map { ($0.liveId, $0.liveInfo, $0.memberCount) }
    }

    /// The living list in the seed's shape (getLivingList):
    /// `{"LiveList": [liveInfo...], "LiveMembers": [count...]}`, rooms created with an
    /// empty liveInfo left out. A liveInfo that is JSON appears as JSON, other text as a string.
    public func livingListJSON() -> String {
        let listed = roomsInOrder.filter { !$0.liveInfo.isEmpty }
        let infos = listed.map { room -> String in
            let data = Data(room.liveInfo.utf8)
            if (try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])) != nil { return room.liveInfo }
            return LineJSON.encode([room.liveInfo]).dropFirst().dropLast().description
        }
        return "{\"LiveList\":[\(infos.joined(separator: ","))],\"LiveMembers\":[\(listed.map { String($0.memberCount) }.joined(separator: ","))]}"
    }

    /// Page `page` (from 1) of `liveId`'s members in join order, nil when there is no such line.
    public func memberPage(liveId: String, page: Int) -> LineMemberPage? {
        guard let room = rooms[liveId] else { return nil }
        let size = limits.membersPerPage
        let members = room.membersInOrder
        let start = max(0, page - 1) * size
        let slice = start < members.count ? Array(members[start..<min(members.count, start + size)]) : []
        return LineMemberPage(liveId: liveId, page: page, pageSize: size, total: members.count, members: slice.map { member in
            let role = member.participant == room.hoster ? "hoster" : room.cohost(of: member.participant) != nil ? "cohost" : "guest"
            return LineMemberPage.Member(userId: member.userId, userData: member.userData, role: role)
        })
    }

    /// Why a publish of `streamName` with `query` is refused, nil when it is allowed:
    /// names starting with `line-` are publishable only by their co-host, whose query
    /// carries `line=SECRET`; every other name is left to the relay's own rules.
    public func publishRefusal(streamName: String, query: String?) -> String? {
        guard streamName.hasPrefix(Self.pubIdPrefix) else { return nil }
        guard let cohost = rooms.values.lazy.compactMap({ $0.cohost(pubId: streamName) }).first else {
            return "\(streamName) is not the stream of a co-host on a line"
        }
        let given = (query ?? "").split(separator: "&").first { $0.hasPrefix("line=") }.map { String($0.dropFirst(5)) }
        guard let given, Self.sameToken(given, cohost.secret) else {
            return "\(streamName) may be published only by its co-host (with its line= secret)"
        }
        return nil
    }

    // MARK: private

    private var roomsInOrder: [LineRoom] { rooms.values.sorted { $0.sequence < $1.sequence } }

    private mutating func create(_ request: LineRequest, from participant: LineParticipantID) -> [LineDelivery] {
        if let current = participants[participant]!.liveId {
            return Self.lineResult(request, .alreadyOpen, "already in line \(current)", to: participant)
        }
        guard let liveId = request.liveId, !liveId.isEmpty else {
            return Self.lineResult(request, .invalidParams, "create needs a liveId", to: participant)
        }
        if let refusal = checkUser(request) { return Self.lineResult(request, .invalidParams, refusal, to: participant) }
        let liveInfo = request.liveInfo ?? ""
        guard liveInfo.utf8.count <= limits.maxLiveInfo else {
            return Self.lineResult(request, .invalidParams, "liveInfo is \(liveInfo.utf8.count) bytes, more than \(limits.maxLiveInfo)",
                                   to: participant)
        }
        guard rooms[liveId] == nil else {
            return Self.lineResult(request, .alreadyOpen, "line \(liveId) already has a hoster", to: participant)
        }
        sequence += 1
        let member = LineRoom.Member(participant: participant, userId: request.userId ?? "", userData: request.userData ?? "",
                                     sequence: sequence)
        rooms[liveId] = LineRoom(liveId: liveId, hoster: member, liveInfo: liveInfo, sequence: sequence)
        participants[participant]!.liveId = liveId
        return Self.lineResult(request, .ok, nil, to: participant) + [.send(LineEvent(.memberCount, total: 1), to: participant)]
    }

    private mutating func join(_ request: LineRequest, from participant: LineParticipantID) -> [LineDelivery] {
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
        sequence += 1
        let member = LineRoom.Member(participant: participant, userId: request.userId ?? "", userData: request.userData ?? "",
                                     sequence: sequence)
        participants[participant]!.liveId = liveId
        let out = Self.lineResult(request, .ok, nil, to: participant) + room.join(member)
        rooms[liveId] = room
        return out
    }

    private func checkUser(_ request: LineRequest) -> String? {
        if let userId = request.userId, userId.utf8.count > limits.maxUserData {
            return "userId is \(userId.utf8.count) bytes, more than \(limits.maxUserData)"
        }
        if let userData = request.userData, userData.utf8.count > limits.maxUserData {
            return "userData is \(userData.utf8.count) bytes, more than \(limits.maxUserData)"
        }
        return nil
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

    /// The reply to create / join, then the seed's onRTCCreateLineResult / onRTCJoinLineResult.
    static func lineResult(_ request: LineRequest, _ code: LiveCode, _ message: String?, to participant: LineParticipantID) -> [LineDelivery] {
        [reply(request, code, message, to: participant),
         .send(LineEvent(.lineResult, code: code, message: message ?? code.message), to: participant)]
    }

    static func micros(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        return UInt64(max(0, seconds)) * 1_000_000 + UInt64(max(0, attoseconds) / 1_000_000_000_000)
    }

    /// Compares in time independent of where the first difference is.
    private static func sameToken(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        guard x.count == y.count else { return false }
        return zip(x, y).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
    }
}

/// One page of `GET /api/live/{liveId}/members?page=N`.
public struct LineMemberPage: Codable, Equatable, Sendable {
    public struct Member: Codable, Equatable, Sendable {
        public var userId: String
        public var userData: String
        /// "hoster", "cohost" or "guest".
        public var role: String
    }

    public var liveId: String
    public var page: Int
    public var pageSize: Int
    public var total: Int
    public var members: [Member]
}
