import LiveCore
import LiveSignal

/// What a kit's co-host line reports (DESIGN.md §4's table). The hoster kit (H) and the
/// guest kit (G) deliver these through `onLineEvent`, on the line's event-loop thread.
public enum LineSessionEvent: Sendable, Equatable {
    /// The answer to createLine / joinLine (seed: onRTCCreateLineResult /
    /// onRTCJoinLineResult(code, reason)). H, G.
    case lineResult(code: LiveCode, message: String)
    /// A guest applies to co-host (seed: onRTCApplyToLine(peerId, userId, userData)). H.
    case application(peerId: String, userId: String, userData: String)
    /// An application ended unanswered: 0 withdrawn, 602 line full, 605 timed out or left
    /// (seed: onRTCCancelLine(code, peerId)). H.
    case applicationCancelled(code: LiveCode, peerId: String, reason: String)
    /// The answer to applyLine: 0 accepted, 601 rejected, 602 full, 605 timed out (seed:
    /// onRTCApplyLineResult(code)). When accepted, the guest kit starts publishing. G.
    case applicationResult(code: LiveCode, peerId: String, reason: String)
    /// The hoster ended this guest's co-hosting (seed: onRTCHangupLine). G.
    case hungUp(reason: String)
    /// The hoster closed the line or is gone (seed: onRTCLineLeave(code)). G.
    case lineLeave(code: LiveCode, reason: String)
    /// A co-host's video joined the line (seed: onRTCOpenRemoteVideoRender(peerId,
    /// pubId, userId, userData)); the hoster kit starts mixing it in. H, G.
    case cohostOpened(peerId: String, pubId: String, userId: String, userData: String)
    /// A co-host left (seed: onRTCCloseRemoteVideoRender(peerId, pubId, userId)); the
    /// hoster's layout reflows. H, G.
    case cohostClosed(peerId: String, pubId: String, userId: String, reason: String)
    /// An audio line's co-host joined (seed: onRTCOpenRemoteAudioLine(peerId, pubId,
    /// userId, userData)): as `cohostOpened`, on a line whose hoster lives in audio
    /// mode. H, G.
    case audioLineOpened(peerId: String, pubId: String, userId: String, userData: String)
    /// An audio line's co-host left (seed: onRTCCloseRemoteAudioLine). H, G.
    case audioLineClosed(peerId: String, pubId: String, userId: String, reason: String)
    /// A co-host's voice level in the hoster's mix, 0–100, at most once per `showTime`
    /// ms (seed: onRTCRemoteAudioActive(peerId, userId, level, showTime)). H.
    case remoteAudioActive(peerId: String, userId: String, level: Int, showTime: Int)
    /// The hoster decoded the first frame of a co-host and mixes it from now on (seed:
    /// onRTCFirstRemoteVideoFrame(peerId, width, height)). H.
    case cohostFirstFrame(peerId: String, width: Int, height: Int)
    /// A participant turned its audio or video on or off (seed: onRTCRemoteAVStatus). H, G.
    case remoteAVStatus(peerId: String, audio: Bool, video: Bool)
    /// A normal or barrage message (seed: onRTCUserMessage(type, userId, userName,
    /// header, content)). H, G.
    case message(type: String, userId: String, userName: String, header: String, content: String)
    /// The room's member count changed (seed: onRTCMemberListNotify(serverId, roomId, total)). H, G.
    case memberCount(total: Int)
    /// The hoster's live started / stopped (seed: onRTCLiveStart / onRTCLiveStop). G.
    case liveStart, liveStop
    /// The accepted co-host's own push to its pubId stream (seed: the hoster's RTMP
    /// delegate, for the guest's camera). G.
    case cohostPush(HosterEvent)
    /// A request was refused: its op, the seed code and why (the seed's return value of
    /// the method, e.g. 602 for an accept over the limit). H, G.
    case refused(op: String, code: LiveCode, message: String)
    /// The signaling connection was lost and reconnect try `times` (1, 2, …) is
    /// scheduled, with the push's backoff. Co-hosting ended with the connection: the
    /// hoster's mix drops its co-hosts (they come back with `cohostOpened` when the
    /// server kept the line, or when they apply again after a server restart); a guest's
    /// co-host push stops and, once `lineResult` 0 arrives again, it may apply again. H, G.
    case reconnecting(times: Int, reason: String)
    /// The signaling connection could not be opened, or was lost and every reconnect
    /// try failed (code 101): the line is gone for this kit. H, G.
    case disconnected(reason: String)
    /// The line's token expires in `seconds` (the server's `tokenWillExpire`); a kit
    /// given a `TokenProvider` renews it by itself, others call `renewLineToken`. H, G.
    case tokenWillExpire(seconds: Int)
    /// The server took a fresh token, valid until `expiresAt` (unix seconds). H, G.
    case tokenRenewed(expiresAt: Int64)
    /// A token problem: the provider failed or gave an unusable token (202), a renewal
    /// was refused (its code), or the token expired unrenewed (212; the line ends). H, G.
    case authFailed(code: LiveCode, message: String)

    /// The event's name in the CLI's JSON lines.
    public var name: String {
        switch self {
        case .lineResult: "lineResult"
        case .application: "application"
        case .applicationCancelled: "applicationCancelled"
        case .applicationResult: "applicationResult"
        case .hungUp: "hungUp"
        case .lineLeave: "lineLeave"
        case .cohostOpened: "cohostOpened"
        case .cohostClosed: "cohostClosed"
        case .audioLineOpened: "audioLineOpened"
        case .audioLineClosed: "audioLineClosed"
        case .remoteAudioActive: "remoteAudioActive"
        case .cohostFirstFrame: "cohostFirstFrame"
        case .remoteAVStatus: "remoteAVStatus"
        case .message: "message"
        case .memberCount: "memberCount"
        case .liveStart: "liveStart"
        case .liveStop: "liveStop"
        case .cohostPush(let event): "cohostPush." + event.name
        case .refused: "refused"
        case .reconnecting: "lineReconnecting"
        case .disconnected: "disconnected"
        case .tokenWillExpire: "tokenWillExpire"
        case .tokenRenewed: "tokenRenewed"
        case .authFailed: "authFailed"
        }
    }

    /// The event's fields for a JSON line, besides its name.
    public var fields: [(key: String, value: LineFieldValue)] {
        switch self {
        case .lineResult(let code, let message):
            [("code", .int(code.rawValue)), ("message", .text(message))]
        case .application(let peerId, let userId, let userData):
            [("peerId", .text(peerId)), ("userId", .text(userId)), ("userData", .text(userData))]
        case .applicationCancelled(let code, let peerId, let reason):
            [("code", .int(code.rawValue)), ("peerId", .text(peerId)), ("reason", .text(reason))]
        case .applicationResult(let code, let peerId, let reason):
            [("code", .int(code.rawValue)), ("peerId", .text(peerId)), ("reason", .text(reason))]
        case .hungUp(let reason):
            [("reason", .text(reason))]
        case .lineLeave(let code, let reason):
            [("code", .int(code.rawValue)), ("reason", .text(reason))]
        case .cohostOpened(let peerId, let pubId, let userId, let userData),
             .audioLineOpened(let peerId, let pubId, let userId, let userData):
            [("peerId", .text(peerId)), ("pubId", .text(pubId)), ("userId", .text(userId)), ("userData", .text(userData))]
        case .cohostClosed(let peerId, let pubId, let userId, let reason),
             .audioLineClosed(let peerId, let pubId, let userId, let reason):
            [("peerId", .text(peerId)), ("pubId", .text(pubId)), ("userId", .text(userId)), ("reason", .text(reason))]
        case .remoteAudioActive(let peerId, let userId, let level, let showTime):
            [("peerId", .text(peerId)), ("userId", .text(userId)), ("level", .int(level)), ("showTime", .int(showTime))]
        case .cohostFirstFrame(let peerId, let width, let height):
            [("peerId", .text(peerId)), ("width", .int(width)), ("height", .int(height))]
        case .remoteAVStatus(let peerId, let audio, let video):
            [("peerId", .text(peerId)), ("audio", .bool(audio)), ("video", .bool(video))]
        case .message(let type, let userId, let userName, let header, let content):
            [("type", .text(type)), ("userId", .text(userId)), ("userName", .text(userName)),
             ("header", .text(header)), ("content", .text(content))]
        case .memberCount(let total):
            [("total", .int(total))]
        case .liveStart, .liveStop:
            []
        case .cohostPush(let event):
            switch event {
            case .reconnecting(let times): [("times", .int(times))]
            case .failed(let code): [("code", .int(code.rawValue))]
            case .localAudioActive(let level, let showTime): [("level", .int(level)), ("showTime", .int(showTime))]
            case .ok, .closed, .status: []
            }
        case .refused(let op, let code, let message):
            [("op", .text(op)), ("code", .int(code.rawValue)), ("message", .text(message))]
        case .reconnecting(let times, let reason):
            [("code", .int(LiveCode.networkDisconnected.rawValue)), ("times", .int(times)), ("reason", .text(reason))]
        case .disconnected(let reason):
            [("code", .int(LiveCode.networkDisconnected.rawValue)), ("reason", .text(reason))]
        case .tokenWillExpire(let seconds):
            [("seconds", .int(seconds))]
        case .tokenRenewed(let expiresAt):
            [("expiresAt", .int(Int(clamping: expiresAt)))]
        case .authFailed(let code, let message):
            [("code", .int(code.rawValue)), ("message", .text(message))]
        }
    }

    /// The kit event for a server event; nil for replies (the kits report a refused
    /// request as `.refused`).
    public init?(_ event: LineEvent) {
        let code = event.liveCode ?? .unknown
        let peerId = event.peerId ?? "", userId = event.userId ?? "", reason = event.reason ?? ""
        switch event.event {
        case .reply: return nil
        case .lineResult: self = .lineResult(code: code, message: event.message ?? code.message)
        case .application: self = .application(peerId: peerId, userId: userId, userData: event.userData ?? "")
        case .applicationCancelled: self = .applicationCancelled(code: code, peerId: peerId, reason: reason)
        case .applicationResult: self = .applicationResult(code: code, peerId: peerId, reason: reason)
        case .hungUp: self = .hungUp(reason: reason)
        case .lineLeave: self = .lineLeave(code: code, reason: reason)
        case .cohostOpened where event.audioLine == true:
            self = .audioLineOpened(peerId: peerId, pubId: event.pubId ?? "", userId: userId, userData: event.userData ?? "")
        case .cohostOpened:
            self = .cohostOpened(peerId: peerId, pubId: event.pubId ?? "", userId: userId, userData: event.userData ?? "")
        case .cohostClosed where event.audioLine == true:
            self = .audioLineClosed(peerId: peerId, pubId: event.pubId ?? "", userId: userId, reason: reason)
        case .cohostClosed: self = .cohostClosed(peerId: peerId, pubId: event.pubId ?? "", userId: userId, reason: reason)
        case .remoteAVStatus: self = .remoteAVStatus(peerId: peerId, audio: event.audio ?? true, video: event.video ?? true)
        case .message:
            self = .message(type: event.type ?? "normal", userId: userId, userName: event.userName ?? "",
                            header: event.header ?? "", content: event.content ?? "")
        case .memberCount: self = .memberCount(total: event.total ?? 0)
        case .liveStart: self = .liveStart
        case .liveStop: self = .liveStop
        case .tokenWillExpire: self = .tokenWillExpire(seconds: event.seconds ?? 0)
        case .tokenExpired: self = .authFailed(code: code, message: event.message ?? code.message)
        }
    }
}

/// One field of a `LineSessionEvent` for a JSON line.
public enum LineFieldValue: Sendable, Equatable {
    case text(String), int(Int), bool(Bool)
}
