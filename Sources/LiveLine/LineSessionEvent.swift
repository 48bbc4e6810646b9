import LiveCore
import LiveSignal

/// What a kit's co-host line reports (DESIGN.md §4's table). The hoster kit (H) and the
/// guest kit (G) deliver these through `onLineEvent`, most on the line's event-loop
/// thread; these come from others: `cohostFirstFrame` and `remoteVideoViewChanged` from
/// the co-host feed's decode thread, `remoteAudioActive` from the hoster's audio thread,
/// `renderFirstFrame` and `renderViewChanged` from the played stream's decode thread,
/// `cohostPush` from the co-host push's threads (see it), `refused` for a call made
/// without a line from the calling thread, and the `lineClosed` of `closeLine` /
/// `leaveLine` from the thread that called it.
public enum LineSessionEvent: Sendable, Equatable {
    /// The answer to createLine / joinLine (the anyRTC SDK: onRTCCreateLineResult /
    /// onRTCJoinLineResult(code, reason)). H, G.
    case lineResult(code: LiveCode, message: String)
    /// A guest applies to co-host (the anyRTC SDK: onRTCApplyToLine(peerId, userId, userData)). H.
    case application(peerId: String, userId: String, userData: String)
    /// An application ended unanswered: 0 withdrawn, 602 line full, 605 timed out or left
    /// (the anyRTC SDK: onRTCCancelLine(code, peerId)). H.
    case applicationCancelled(code: LiveCode, peerId: String, reason: String)
    /// The answer to applyLine: 0 accepted, 601 rejected, 602 full, 605 timed out (the anyRTC SDK:
    /// onRTCApplyLineResult(code)). When accepted, the guest kit starts publishing. G.
    case applicationResult(code: LiveCode, peerId: String, reason: String)
    /// The hoster ended this guest's co-hosting (the anyRTC SDK: onRTCHangupLine). G.
    case hungUp(reason: String)
    /// The hoster closed the line (0; `lineClosed` 0 follows) or its connection was lost
    /// (101; the guest then joins again with its reconnect tries, `lineClosed` 101 when
    /// they run out) (the anyRTC SDK: onRTCLineLeave(code)). G.
    case lineLeave(code: LiveCode, reason: String)
    /// A co-host's video joined the line (the anyRTC SDK: onRTCOpenRemoteVideoRender(peerId,
    /// pubId, userId, userData)); the hoster kit starts mixing it in. H, G.
    case cohostOpened(peerId: String, pubId: String, userId: String, userData: String)
    /// A co-host left (the anyRTC SDK: onRTCCloseRemoteVideoRender(peerId, pubId, userId)); the
    /// hoster's layout reflows. H, G.
    case cohostClosed(peerId: String, pubId: String, userId: String, reason: String)
    /// An audio line's co-host joined (the anyRTC SDK: onRTCOpenRemoteAudioLine(peerId, pubId,
    /// userId, userData)): as `cohostOpened`, on a line whose hoster lives in audio
    /// mode. H, G.
    case audioLineOpened(peerId: String, pubId: String, userId: String, userData: String)
    /// An audio line's co-host left (the anyRTC SDK: onRTCCloseRemoteAudioLine). H, G.
    case audioLineClosed(peerId: String, pubId: String, userId: String, reason: String)
    /// A co-host's voice level in the hoster's mix, 0–100, at most once per `showTime`
    /// ms (the anyRTC SDK: onRTCRemoteAudioActive(peerId, userId, level, showTime)). H.
    case remoteAudioActive(peerId: String, userId: String, level: Int, showTime: Int)
    /// The hoster decoded the first frame of a co-host and mixes it from now on (the anyRTC SDK:
    /// onRTCFirstRemoteVideoFrame(peerId, width, height)). H.
    case cohostFirstFrame(peerId: String, width: Int, height: Int)
    /// A co-host's picture changed size after its first frame (the anyRTC SDK's
    /// onRTCRemoteVideoViewChanged(size, pubId)); its tile keeps its place and fits the
    /// new picture. On the co-host feed's decode thread. H.
    case remoteVideoViewChanged(peerId: String, width: Int, height: Int)
    /// The first decoded frame of a co-host's own stream that `Guest.setRemoteVideoRender`
    /// plays, by its pubId (the anyRTC SDK's guest onRTCFirstRemoteVideoFrame(size,
    /// pubId)). On that stream's decode thread. G.
    case renderFirstFrame(pubId: String, width: Int, height: Int)
    /// That stream's picture changed size after its first frame (the anyRTC SDK's guest
    /// onRTCRemoteVideoViewChanged(size, pubId)). On its decode thread. G.
    case renderViewChanged(pubId: String, width: Int, height: Int)
    /// A participant turned its audio or video on or off (the anyRTC SDK: onRTCRemoteAVStatus). H, G.
    case remoteAVStatus(peerId: String, audio: Bool, video: Bool)
    /// A normal or barrage message (the anyRTC SDK's onRTCUserMessage(type, userId,
    /// userName, header, content)). H, G.
    case message(type: LineMessageType, userId: String, userName: String, header: String, content: String)
    /// The room's member count changed (the anyRTC SDK's onRTCMemberListNotify(serverId,
    /// roomId, totalMember)): `serverId` is the signaling URL of the line's server and
    /// `roomId` the live id, what `LineServer.members(liveId:page:size:token:)` asks for
    /// the member pages with; `total` counts the hoster, the co-hosts and the guests. H, G.
    case memberCount(serverId: String, roomId: String, total: Int)
    /// The hoster's live started / stopped (the anyRTC SDK: onRTCLiveStart / onRTCLiveStop). G.
    case liveStart, liveStop
    /// The accepted co-host's own push to its pubId stream: its connection's `ok`,
    /// `reconnecting`, `status`, `failed` and `closed` (the anyRTC SDK: the hoster's RTMP
    /// delegate, for the guest's camera), on the push's thread, and its local picture and
    /// sound: `firstLocalVideoFrame` and `localVideoViewChanged` on the capture thread,
    /// `localAudioActive` on the audio thread (the anyRTC SDK's guest
    /// onRTCFirstLocalVideoFrame, onRTCLocalVideoViewChanged, onRTCLocalAudioActive). G.
    case cohostPush(HosterEvent)
    /// A request was refused: its op, the SDK's code and why (the anyRTC SDK's return value of
    /// the method, e.g. 602 for an accept over the limit). H, G.
    case refused(op: String, code: LiveCode, message: String)
    /// The signaling connection was lost and reconnect try `times` (1, 2, …) is
    /// scheduled, with the push's backoff. Co-hosting ended with the connection: the
    /// hoster's mix drops its co-hosts (they come back with `cohostOpened` when the
    /// server kept the line, or when they apply again after a server restart); a guest's
    /// co-host push stops and, once `lineResult` 0 arrives again, it may apply again. H, G.
    case reconnecting(times: Int, reason: String)
    /// The line ended for this kit, whatever ended it (the anyRTC SDK's
    /// onRTCLineClosed(code)); the last line event of the line. `code`: 0 the kit closed
    /// or left it (closeLine / leaveLine), or, for a guest, the hoster closed it (after
    /// `lineLeave` 0); 101 the connection could not be opened or was lost and every
    /// reconnect failed (for a guest also the tries that follow `lineLeave` 101, the
    /// hoster's connection lost, while the hoster does not come back), or the server
    /// found the kit silent; 204 the server shut down and did not
    /// come back within the reconnect tries; 211 forced exit (the hoster's line was
    /// reclaimed by the same hoster on another connection); 212 the token expired
    /// unrenewed or none was verified in time; 201 far over the server's request rate.
    /// Co-hosting has stopped when it arrives. H, G.
    case lineClosed(code: LiveCode, reason: String)
    /// The line's token expires in `seconds` (the server's `tokenWillExpire`); a kit
    /// given a `TokenProvider` renews it by itself, others call `renewLineToken`. H, G.
    case tokenWillExpire(seconds: Int)
    /// The server took a fresh token, valid until `expiresAt` (unix seconds). H, G.
    case tokenRenewed(expiresAt: Int64)
    /// A token problem: the provider failed or gave an unusable token (202), a renewal
    /// was refused (its code), or the token expired unrenewed (212; the line ends). H, G.
    case authFailed(code: LiveCode, message: String)
    /// The room's share opened or closed (the anyRTC SDK's ARShareDelegate). G.
    case share(ShareEvent)

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
        case .remoteVideoViewChanged: "remoteVideoViewChanged"
        case .renderFirstFrame: "renderFirstFrame"
        case .renderViewChanged: "renderViewChanged"
        case .remoteAVStatus: "remoteAVStatus"
        case .message: "message"
        case .memberCount: "memberCount"
        case .liveStart: "liveStart"
        case .liveStop: "liveStop"
        case .cohostPush(let event): "cohostPush." + event.name
        case .refused: "refused"
        case .reconnecting: "lineReconnecting"
        case .lineClosed: "lineClosed"
        case .tokenWillExpire: "tokenWillExpire"
        case .tokenRenewed: "tokenRenewed"
        case .authFailed: "authFailed"
        case .share(let event): event.name
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
        case .cohostFirstFrame(let peerId, let width, let height), .remoteVideoViewChanged(let peerId, let width, let height):
            [("peerId", .text(peerId)), ("width", .int(width)), ("height", .int(height))]
        case .renderFirstFrame(let pubId, let width, let height), .renderViewChanged(let pubId, let width, let height):
            [("pubId", .text(pubId)), ("width", .int(width)), ("height", .int(height))]
        case .remoteAVStatus(let peerId, let audio, let video):
            [("peerId", .text(peerId)), ("audio", .bool(audio)), ("video", .bool(video))]
        case .message(let type, let userId, let userName, let header, let content):
            [("type", .text(type.name)), ("userId", .text(userId)), ("userName", .text(userName)),
             ("header", .text(header)), ("content", .text(content))]
        case .memberCount(let serverId, let roomId, let total):
            [("serverId", .text(serverId)), ("roomId", .text(roomId)), ("total", .int(total))]
        case .liveStart, .liveStop:
            []
        case .cohostPush(let event):
            event.fields.map { ($0.key, .int($0.value)) }
        case .refused(let op, let code, let message):
            [("op", .text(op)), ("code", .int(code.rawValue)), ("message", .text(message))]
        case .reconnecting(let times, let reason):
            [("code", .int(LiveCode.networkDisconnected.rawValue)), ("times", .int(times)), ("reason", .text(reason))]
        case .lineClosed(let code, let reason):
            [("code", .int(code.rawValue)), ("reason", .text(reason))]
        case .tokenWillExpire(let seconds):
            [("seconds", .int(seconds))]
        case .tokenRenewed(let expiresAt):
            [("expiresAt", .int(Int(clamping: expiresAt)))]
        case .authFailed(let code, let message):
            [("code", .int(code.rawValue)), ("message", .text(message))]
        case .share(let event):
            event.fields
        }
    }

    /// The kit event for a server event; nil for replies (the kits report a refused
    /// request as `.refused`). `serverId` and `roomId` fill `memberCount`.
    public init?(_ event: LineEvent, serverId: String = "", roomId: String = "") {
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
            self = .message(type: event.type.flatMap(LineMessageType.init(name:)) ?? .normal, userId: userId, userName: event.userName ?? "",
                            header: event.header ?? "", content: event.content ?? "")
        case .memberCount: self = .memberCount(serverId: serverId, roomId: roomId, total: event.total ?? 0)
        case .liveStart: self = .liveStart
        case .liveStop: self = .liveStop
        case .tokenWillExpire: self = .tokenWillExpire(seconds: event.seconds ?? 0)
        case .tokenExpired: self = .authFailed(code: code, message: event.message ?? code.message)
        case .shareOpen, .shareClose:
            guard let share = ShareEvent(event) else { return nil }
            self = .share(share)
        case .remoteAudioActive:
            self = .remoteAudioActive(peerId: peerId, userId: userId, level: event.level ?? 0, showTime: event.showTime ?? 0)
        }
    }
}

/// One field of a `LineSessionEvent` for a JSON line.
public enum LineFieldValue: Sendable, Equatable {
    case text(String), int(Int), bool(Bool)
}

/// A message's type (the anyRTC SDK's ARMessageType: normal = 0, barrage = 1, a
/// danmaku shown over the picture). On the line's wire it travels as its name
/// ("normal" / "barrage"), which the server checks.
public enum LineMessageType: Int, Sendable, CaseIterable {
    case normal = 0, barrage = 1

    /// The name on the wire and in the CLI's JSON lines.
    public var name: String {
        switch self {
        case .normal: "normal"
        case .barrage: "barrage"
        }
    }

    /// The type named `name`; nil for any other text.
    public init?(name: String) {
        guard let type = Self.allCases.first(where: { $0.name == name }) else { return nil }
        self = type
    }
}
