import LiveCore
import LiveNet

/// A participant's end of the co-host line: one WebSocket to `ws://HOST:HTTPPORT/line`
/// speaking the JSON protocol of `LineRequest` / `LineEvent`, with a heartbeat (a
/// `SignalClient`, whose rules it follows). The hoster and guest kits drive the line
/// through it; `onEvent` gets the anyRTC SDK's RTC delegate callbacks (see `LineEvent`).
public typealias LineClient = SignalClient<LineRequest, LineEvent>

extension LineRequest: SignalRequest {
    public var opName: String { op.rawValue }
    public static var heartbeat: LineRequest { LineRequest(op: .heartbeat) }
}

extension LineEvent: SignalEvent {
    public var replyID: Int? { event == .reply ? id : nil }
    public static func localRefusal(id: Int, op: String, code: LiveCode, message: String) -> LineEvent {
        LineEvent(.reply, id: id, op: op, code: code, message: message)
    }
}

extension SignalClient where Request == LineRequest, Event == LineEvent {
    /// A line client; `heartbeatInterval` should stay well under the server's `--heartbeat-timeout`.
    public convenience init(url: String, loop: EventLoop, heartbeatInterval: Duration = .seconds(10)) {
        self.init(url: url, loop: loop, heartbeatInterval: heartbeatInterval, kind: "line")
    }

    // MARK: hoster (ARRtmpHosterKit)

    /// createRTCLine: opens the line of `liveId` as its hoster. With tokens, `token`
    /// must allow `line:host` on `liveId`; without, `stream` ("APP/LIVEID") and
    /// `lineKey` prove that this hoster publishes the stream named like the line (see
    /// `LineGate`). The same create from the same hoster on a new connection reclaims
    /// its line while the server still holds it. `maxCohosts`: the most co-hosts the
    /// hoster's mix shows (the line accepts no more; nil: the server's limit).
    /// `audioLine`: the hoster lives in audio mode (its co-hosts push sound only, and
    /// the co-host events say so). `live`: whether the hoster's push is on now (guests
    /// hear liveStart only while it is; nil: on).
    @discardableResult
    public func create(liveId: String, userId: String, userData: String = "", liveInfo: String = "", token: String? = nil,
                       stream: String? = nil, lineKey: String? = nil, maxCohosts: Int? = nil, audioLine: Bool = false,
                       live: Bool? = nil, reply: (@Sendable (LineEvent) -> Void)? = nil) -> Int {
        send(LineRequest(op: .create, liveId: liveId, userId: userId, userData: userData, liveInfo: liveInfo, token: token,
                         stream: stream, lineKey: lineKey, maxCohosts: maxCohosts, audioLine: audioLine ? true : nil,
                         live: live), reply: reply)
    }

    /// The hoster's push started (true) or stopped (false): the guests get liveStart /
    /// liveStop (the anyRTC SDK's onRTCLiveStart / onRTCLiveStop).
    @discardableResult
    public func setLive(_ live: Bool, reply: (@Sendable (LineEvent) -> Void)? = nil) -> Int {
        send(LineRequest(op: .setLive, live: live), reply: reply)
    }

    /// acceptRTCLine: the reply's code is 0, or 602 when the line is full.
    @discardableResult
    public func accept(peerId: String, reply: (@Sendable (LineEvent) -> Void)? = nil) -> Int {
        send(LineRequest(op: .accept, peerId: peerId), reply: reply)
    }

    /// The most co-hosts the hoster's mix now shows (after a template change): later
    /// accepts past it get 602.
    @discardableResult
    public func setMaxCohosts(_ maxCohosts: Int, reply: (@Sendable (LineEvent) -> Void)? = nil) -> Int {
        send(LineRequest(op: .setMaxCohosts, maxCohosts: maxCohosts), reply: reply)
    }

    /// rejectRTCLine.
    @discardableResult
    public func reject(peerId: String, reply: (@Sendable (LineEvent) -> Void)? = nil) -> Int {
        send(LineRequest(op: .reject, peerId: peerId), reply: reply)
    }

    /// hangupRTCLine(peerId) on the hoster; without a peerId, the guest's hangupRTCLine
    /// (withdraws its application or leaves the line).
    @discardableResult
    public func hangup(peerId: String? = nil, reply: (@Sendable (LineEvent) -> Void)? = nil) -> Int {
        send(LineRequest(op: .hangup, peerId: peerId), reply: reply)
    }

    /// closeRTCLine: every guest gets liveStop and lineLeave.
    @discardableResult
    public func closeLine(reply: (@Sendable (LineEvent) -> Void)? = nil) -> Int {
        send(LineRequest(op: .close), reply: reply)
    }

    // MARK: guest (ARRtmpGuestKit)

    /// joinRTCLine.
    @discardableResult
    public func join(liveId: String, userId: String, userData: String = "", token: String? = nil,
                     reply: (@Sendable (LineEvent) -> Void)? = nil) -> Int {
        send(LineRequest(op: .join, liveId: liveId, userId: userId, userData: userData, token: token), reply: reply)
    }

    /// applyRTCLine: the reply carries the application's peerId; the answer comes as
    /// `applicationResult` (with pubId and publishQuery when accepted).
    @discardableResult
    public func apply(reply: (@Sendable (LineEvent) -> Void)? = nil) -> Int {
        send(LineRequest(op: .apply), reply: reply)
    }

    /// Withdraws the application (hangupRTCLine before an answer).
    @discardableResult
    public func cancel(reply: (@Sendable (LineEvent) -> Void)? = nil) -> Int {
        send(LineRequest(op: .cancel), reply: reply)
    }

    /// leaveRTCLine.
    @discardableResult
    public func leave(reply: (@Sendable (LineEvent) -> Void)? = nil) -> Int {
        send(LineRequest(op: .leave), reply: reply)
    }

    /// setLocalAudioEnable / setLocalVideoEnable: the others get remoteAVStatus.
    @discardableResult
    public func setAVStatus(audio: Bool, video: Bool, reply: (@Sendable (LineEvent) -> Void)? = nil) -> Int {
        send(LineRequest(op: .setAVStatus, audio: audio, video: video), reply: reply)
    }

    // MARK: both

    /// renewToken: a fresh token for the same user, after `tokenWillExpire`.
    @discardableResult
    public func renewToken(_ token: String, reply: (@Sendable (LineEvent) -> Void)? = nil) -> Int {
        send(LineRequest(op: .renewToken, token: token), reply: reply)
    }

    /// sendUserMessage: type "normal" or "barrage"; userName (≤ 256 B) and content
    /// (≤ 1024 B) are required, header (≤ 512 B) optional.
    @discardableResult
    public func message(type: String = "normal", userName: String, header: String = "", content: String,
                        reply: (@Sendable (LineEvent) -> Void)? = nil) -> Int {
        send(LineRequest(op: .message, type: type, userName: userName, header: header, content: content), reply: reply)
    }
}
