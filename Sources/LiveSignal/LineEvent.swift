import Foundation
import LiveCore

/// One message the server sends a participant over the line's WebSocket, a JSON text
/// message keyed by `event`. Fields absent from an event are left out of the JSON.
///
/// | event | fields | the anyRTC SDK's callback |
/// |---|---|---|
/// | `reply` | id, op, code, message (+ peerId for apply) | return value of the request's method |
/// | `lineResult` | code, message | onRTCCreateLineResult / onRTCJoinLineResult |
/// | `application` | peerId, userId, userData | H: onRTCApplyToLine |
/// | `applicationCancelled` | code, peerId, reason | H: onRTCCancelLine (0 withdrawn, 602 line full, 605 timed out or left) |
/// | `applicationResult` | code, peerId, pubId, publishQuery, reason | G: onRTCApplyLineResult (0 accepted, 601 rejected, 602 full, 605 timed out) |
/// | `hungUp` | peerId, reason | G: onRTCHangupLine (the hoster ended this guest's co-hosting) |
/// | `lineLeave` | code, reason | G: onRTCLineLeave (the hoster closed the line or is gone) |
/// | `cohostOpened` | peerId, pubId, userId, userData; publishQuery to H | H, G: onRTCOpenRemoteVideoRender |
/// | `cohostClosed` | peerId, pubId, userId, reason | H, G: onRTCCloseRemoteVideoRender |
/// | (audio line) | `audioLine: true` on applicationResult, cohostOpened, cohostClosed | H, G: onRTCOpenRemoteAudioLine / onRTCCloseRemoteAudioLine |
/// | `remoteAVStatus` | peerId, audio, video | H, G: onRTCRemoteAVStatus |
/// | `message` | type, userId, userName, header, content | H, G: onRTCUserMessage |
/// | `memberCount` | total | H, G: onRTCMemberListNotify |
/// | `liveStart` / `liveStop` | — | G: onRTCLiveStart / onRTCLiveStop (the hoster's push published / stopped: create's and setLive's `live`; liveStart on join while live, liveStop before lineLeave while live) |
/// | `tokenWillExpire` | seconds | H, G: the token expires in `seconds`: renew it (renewToken) |
/// | `tokenExpired` | code 212, message | H, G: the token expired unrenewed (or none was verified in time); the connection closes |
/// | `shareOpen` | shareType, shareInfo, userId, userData | G: onRTCShareOpen (the hoster shares a picture; a guest joining later gets it too) |
/// | `shareClose` | userId | G: onRTCShareClose (the sharer closed its share) |
/// | `remoteAudioActive` | peerId, userId, level, showTime | G: onRTCRemoteAudioActive (a co-host's voice level, from the hoster) |
///
/// `pubId` goes only to the hoster and the co-hosts (the line's members); the other
/// guests get `cohostOpened` / `cohostClosed` without it.
public struct LineEvent: Codable, Equatable, Sendable {
    public enum Kind: String, Codable, Sendable, CaseIterable {
        case reply, lineResult, application, applicationCancelled, applicationResult, hungUp, lineLeave
        case cohostOpened, cohostClosed, remoteAVStatus, message, memberCount, liveStart, liveStop
        case tokenWillExpire, tokenExpired
        case shareOpen, shareClose
        case remoteAudioActive
    }

    public var event: Kind
    public var id: Int?
    public var op: String?
    public var code: Int?
    /// A human message for `reply` and `lineResult` ("ok" when the code is 0).
    public var message: String?
    /// Why an application, co-host slot or line ended: "withdrawn", "rejected",
    /// "timeout", "lineFull", "hungUpByHoster", "hungUpByGuest", "left", "heartbeat",
    /// "closed".
    public var reason: String?
    public var peerId: String?
    public var pubId: String?
    /// In `applicationResult`, for the accepted co-host only: the query to append to its
    /// publish URL (`rtmp://HOST/APP/PUBID?line=SECRET`); the relay refuses any other
    /// publisher of PUBID. In `cohostOpened`, for the hoster only: the query for publishing
    /// the co-host's hear stream (`PUBID.hear`, what the co-host hears).
    public var publishQuery: String?
    public var userId: String?
    public var userData: String?
    public var type: String?
    public var userName: String?
    public var header: String?
    public var content: String?
    public var audio: Bool?
    public var video: Bool?
    public var total: Int?
    /// For `tokenWillExpire`: seconds until the token expires.
    public var seconds: Int?
    /// True in `applicationResult`, `cohostOpened` and `cohostClosed` of an audio line
    /// (the create said so): the kits report its slots as audio lines
    /// (onRTCOpenRemoteAudioLine / onRTCCloseRemoteAudioLine) and co-hosts push sound only.
    public var audioLine: Bool?
    /// For `shareOpen`: the share's type and information, as the sharer gave them.
    public var shareType: Int?
    public var shareInfo: String?
    /// For `remoteAudioActive`: the co-host's voice level (0–100) and the report interval (ms).
    public var level: Int?
    public var showTime: Int?

    public init(_ event: Kind, id: Int? = nil, op: String? = nil, code: LiveCode? = nil, message: String? = nil,
                reason: String? = nil, peerId: String? = nil, pubId: String? = nil, publishQuery: String? = nil,
                userId: String? = nil, userData: String? = nil, type: String? = nil, userName: String? = nil,
                header: String? = nil, content: String? = nil, audio: Bool? = nil, video: Bool? = nil, total: Int? = nil,
                seconds: Int? = nil) {
        self.event = event
        self.id = id
        self.op = op
        self.code = code?.rawValue
        self.message = message
        self.reason = reason
        self.peerId = peerId
        self.pubId = pubId
        self.publishQuery = publishQuery
        self.userId = userId
        self.userData = userData
        self.type = type
        self.userName = userName
        self.header = header
        self.content = content
        self.audio = audio
        self.video = video
        self.total = total
        self.seconds = seconds
    }

    /// The anyRTC SDK code, when the event carries one.
    public var liveCode: LiveCode? { code.flatMap(LiveCode.init(rawValue:)) }

    /// The event as one JSON text message.
    public var jsonText: String { LineJSON.encode(self) }

    /// Parses a server message (the client side).
    public static func parse(_ text: String) -> LineEvent? {
        try? JSONDecoder().decode(LineEvent.self, from: Data(text.utf8))
    }
}
