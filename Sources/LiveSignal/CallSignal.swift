import Foundation
import LiveCore

/// The 1v1 call's signaling (DESIGN.md §5): one WebSocket per user to
/// `ws://HOST:HTTPPORT/call`, JSON text messages. A user registers under its user id; the
/// server then carries CallAPI messages (`CallMessage`) from one registered user to
/// another, and gives the two users of an accepted call the streams they publish and play.
/// Pure values: encoding, parsing and the checks on sizes; no I/O.

/// The CallAPI's `message_action` (sdk-facts "Agora CallAPI"), plus LiveLine's own
/// actions for mute and hold (LINE PlanetKit's `muteMyAudio` and `hold`, told to the peer).
public enum CallAction: Int, Codable, Sendable, CaseIterable {
    case videoCall = 0, cancelCall = 1, accept = 2, reject = 3, hangup = 4, audioCall = 10
    case mute = 20, unmute = 21, hold = 22, unhold = 23

    /// A call's invitation (video or audio-only).
    public var isInvitation: Bool { self == .videoCall || self == .audioCall }
}

/// One CallAPI message, from one user to another through the server, in the CallAPI's
/// field names (`message_action`, `message_version`, `message_timestamp`, `fromUserId`,
/// `callId`, …). The server checks `fromUserId` against the sender's registration and
/// carries the rest untouched.
public struct CallMessage: Codable, Equatable, Sendable {
    /// The CallAPI's message version.
    public static let version = "1.0"

    public var action: CallAction
    public var version: String
    /// The sender's wall clock, unix milliseconds.
    public var timestamp: Int64
    public var fromUserId: String
    public var remoteUserId: String
    /// A UUID the caller mints for each call; every message of the call carries it.
    public var callId: String
    /// The caller's room for this call (invitations): fresh and unguessable for each call.
    public var fromRoomId: String?
    /// What the caller tells the callee with its invitation (≤ `CallLimits.maxExtension` bytes).
    public var fromUserExtension: String?
    /// cancelCall: 1 when the caller's calling timer ran out (not the user's cancel).
    public var cancelCallByInternal: Int?
    /// reject: the reason given ("busy" for an automatic busy reject).
    public var rejectReason: String?
    /// reject: 1 when the callee's kit rejected by itself (busy), not its user.
    public var rejectByInternal: Int?
    /// hangup: the reason given.
    public var hangupReason: String?

    enum CodingKeys: String, CodingKey {
        case action = "message_action", version = "message_version", timestamp = "message_timestamp"
        case fromUserId, remoteUserId, callId, fromRoomId, fromUserExtension, cancelCallByInternal
        case rejectReason, rejectByInternal, hangupReason
    }

    public init(action: CallAction, fromUserId: String, remoteUserId: String, callId: String,
                timestamp: Int64 = Int64(Date().timeIntervalSince1970 * 1000), fromRoomId: String? = nil,
                fromUserExtension: String? = nil, cancelCallByInternal: Int? = nil, rejectReason: String? = nil,
                rejectByInternal: Int? = nil, hangupReason: String? = nil) {
        self.action = action
        version = Self.version
        self.timestamp = timestamp
        self.fromUserId = fromUserId
        self.remoteUserId = remoteUserId
        self.callId = callId
        self.fromRoomId = fromRoomId
        self.fromUserExtension = fromUserExtension
        self.cancelCallByInternal = cancelCallByInternal
        self.rejectReason = rejectReason
        self.rejectByInternal = rejectByInternal
        self.hangupReason = hangupReason
    }
}

/// What a user sends the server over `/call`.
///
/// | op | fields | meaning |
/// |---|---|---|
/// | `register` | userId, token (with tokens checked; its `sub` must be userId) | prepareForCall: this socket is userId's, reachable for calls |
/// | `send` | message | carry a `CallMessage` to its `remoteUserId` |
/// | `heartbeat` | — | still here |
/// | `renewToken` | token | after `tokenWillExpire` |
///
/// Every request is answered with a `reply` carrying its `id`: code 0, or why not (203 the
/// callee is not registered, 4 a malformed or oversized message, 604 the user id is
/// registered by another connection, 202 a token that does not allow it).
public struct CallRequest: Codable, Equatable, Sendable {
    public enum Op: String, Codable, Sendable, CaseIterable {
        case register, send, heartbeat, renewToken
    }

    public var op: Op
    public var id: Int?
    public var userId: String?
    public var token: String?
    public var message: CallMessage?

    public init(op: Op, id: Int? = nil, userId: String? = nil, token: String? = nil, message: CallMessage? = nil) {
        self.op = op
        self.id = id
        self.userId = userId
        self.token = token
        self.message = message
    }

    /// The request as one JSON text message.
    public var jsonText: String { LineJSON.encode(self) }

    /// Parses a text message: strict JSON only; a malformed one is refused with code 4
    /// and the reason (the `id` kept when it could still be read).
    public static func parse(_ text: String) -> Result<CallRequest, LineRefusal> {
        let data = Data(text.utf8)
        let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        let id = object?["id"] as? Int
        guard LineJSONValidator.isStrict(text), let request = try? JSONDecoder().decode(CallRequest.self, from: data) else {
            let reason = (object?["op"] as? String).map {
                CallRequest.Op(rawValue: $0) == nil ? "unknown op '\($0)'" : "malformed '\($0)' request"
            } ?? "not a call request (a JSON object with \"op\")"
            return .failure(LineRefusal(code: .invalidParams, message: reason, id: id))
        }
        return .success(request)
    }
}

/// What the server sends a user over `/call`, keyed by `event`.
///
/// | event | fields | meaning |
/// |---|---|---|
/// | `reply` | id, op, code, message | the answer to a request |
/// | `message` | call | a `CallMessage` from another user (the CallAPI's onMessage) |
/// | `callMedia` | callId, roomId, publishStream, publishQuery, playStream, playQuery | the call was accepted: publish your picture and sound to `publishStream?publishQuery`, play the peer's from `playStream?playQuery` (both streams exist only while the call lasts) |
/// | `peerGone` | callId, userId, reason | the peer's signaling vanished during the call ("networkUnstable"); the call is over |
/// | `tokenWillExpire` | seconds | renew the token (renewToken) |
/// | `tokenExpired` | code 212, message | the token expired unrenewed; the connection closes |
public struct CallEvent: Codable, Equatable, Sendable {
    public enum Kind: String, Codable, Sendable, CaseIterable {
        case reply, message, callMedia, peerGone, tokenWillExpire, tokenExpired
    }

    public var event: Kind
    public var id: Int?
    public var op: String?
    public var code: Int?
    /// A human message for `reply` ("ok" when the code is 0) and `tokenExpired`.
    public var message: String?
    public var call: CallMessage?
    public var callId: String?
    public var roomId: String?
    public var publishStream: String?
    public var publishQuery: String?
    public var playStream: String?
    public var playQuery: String?
    public var userId: String?
    public var reason: String?
    public var seconds: Int?

    public init(_ event: Kind, id: Int? = nil, op: String? = nil, code: LiveCode? = nil, message: String? = nil,
                call: CallMessage? = nil, callId: String? = nil, roomId: String? = nil, publishStream: String? = nil,
                publishQuery: String? = nil, playStream: String? = nil, playQuery: String? = nil,
                userId: String? = nil, reason: String? = nil, seconds: Int? = nil) {
        self.event = event
        self.id = id
        self.op = op
        self.code = code?.rawValue
        self.message = message
        self.call = call
        self.callId = callId
        self.roomId = roomId
        self.publishStream = publishStream
        self.publishQuery = publishQuery
        self.playStream = playStream
        self.playQuery = playQuery
        self.userId = userId
        self.reason = reason
        self.seconds = seconds
    }

    /// The event as one JSON text message.
    public var jsonText: String { LineJSON.encode(self) }

    /// Parses a text message from the server; nil when it is not a call event.
    public static func parse(_ text: String) -> CallEvent? {
        try? JSONDecoder().decode(CallEvent.self, from: Data(text.utf8))
    }
}

/// The call's limits (sdk-facts "Agora CallAPI", PlanetKit's start-fail reasons).
public struct CallLimits: Sendable, Equatable {
    /// User ids: 1…`maxUserId` bytes of letters, digits, `-`, `_`, `.` and `@`.
    public var maxUserId = 64
    /// A room id: `minRoomId`…`maxRoomId` bytes of base64url (so it cannot be guessed).
    public var minRoomId = 16
    public var maxRoomId = 64
    /// A call id: a UUID (36 bytes) or another id of at most this many bytes.
    public var maxCallId = 64
    /// `fromUserExtension` (PlanetKit's tooLongAppServerData), and each reason text.
    public var maxExtension = 1024
    public var maxReason = 256
    /// Users registered at once; a register beyond is refused with 209 (no resources).
    public var maxUsers = 10_000
    /// An invitation nobody answers is forgotten by the server after this long (the
    /// kits' calling timers end it sooner: 15 s by default).
    public var pendingTimeout: Duration = .seconds(120)
    /// A user that sends nothing (not even a heartbeat) for this long counts as gone.
    public var heartbeatTimeout: Duration = .seconds(30)
    /// Requests one connection may send per second on average, and in a burst.
    public var requestsPerSecond = 20.0
    public var requestBurst = 40.0
    /// Bytes of events waiting to be written to one user before it is closed.
    public var maxQueuedBytes = 256 << 10
    /// With tokens checked: `tokenWillExpire` goes out this many seconds before a user's
    /// token expires (or at half its remaining life when that is later); a token that
    /// expires unrenewed ends the registration with 212, as on the line.
    public var tokenWillExpireSeconds: Int64 = 300
    /// With tokens checked: a connection that has not registered (with a verified token)
    /// this long after it opened is closed with 212.
    public var admissionTimeout: Duration = .seconds(30)
    /// Room ids of ended calls the server remembers (and refuses for new calls); beyond
    /// this many, the oldest is forgotten first. A room id is 16 random bytes, so a
    /// forgotten one is reused only on purpose, and then only with the new call's secrets.
    public var maxRememberedRooms = 100_000

    public init() {}

    /// Why `userId` cannot name a user, nil when it can.
    public func userIdProblem(_ userId: String) -> String? {
        if userId.isEmpty { return "an empty user id" }
        if userId.utf8.count > maxUserId { return "a user id longer than \(maxUserId) bytes" }
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.@".utf8)
        if userId.utf8.contains(where: { !allowed.contains($0) }) {
            return "user id '\(userId)' has a character outside letters, digits, '-', '_', '.' and '@'"
        }
        return nil
    }

    /// Why `roomId` cannot be a call's room, nil when it can.
    public func roomIdProblem(_ roomId: String) -> String? {
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_".utf8)
        guard (minRoomId...maxRoomId).contains(roomId.utf8.count), roomId.utf8.allSatisfy({ allowed.contains($0) }) else {
            return "a room id must be \(minRoomId)…\(maxRoomId) characters of base64url (a fresh random one per call)"
        }
        return nil
    }
}

/// What the kits and the relay agree on about a call's RTMP streams: each user of an
/// accepted call publishes `call-ROOM-1` (the caller) or `call-ROOM-2` (the callee), in
/// any app, with the `call=SECRET` query the server gave it in `callMedia`, and plays the
/// other with the same query. The relay refuses every other publish or play of a `call-`
/// stream, and every one once the call has ended. Pure.
public enum CallStreams {
    public static let prefix = "call-"
    /// The query parameter carrying a user's secret for the call's streams.
    public static let queryName = "call"

    /// The stream the caller (`caller` true) or the callee publishes in `roomId`.
    public static func streamName(roomId: String, caller: Bool) -> String {
        "\(prefix)\(roomId)-\(caller ? 1 : 2)"
    }

    /// A fresh room id for a call: 16 random bytes in base64url (22 characters).
    public static func newRoomId() -> String { LineStreams.randomToken(16) }
}
