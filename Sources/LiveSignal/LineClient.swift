import LiveCore
import LiveNet
import Synchronization

/// A participant's end of the co-host line: one WebSocket to `ws://HOST:HTTPPORT/line`
/// speaking the JSON protocol of `LineRequest` / `LineEvent`, with a heartbeat. The
/// hoster and guest kits drive the line through it.
///
/// Requests get a fresh `id`; the matching `reply` goes to the request's own `reply`
/// callback, and every event (replies included) to `onEvent`. Callbacks run on `loop`'s
/// thread. Thread-safe: methods may be called from any thread (requests made before the
/// socket is open are sent once it is).
public final class LineClient: Sendable {
    public let url: String
    public let loop: EventLoop
    public let heartbeatInterval: Duration

    private struct State {
        var socket: WebSocketConnection?
        var pending: [String] = []
        var replies: [Int: @Sendable (LineEvent) -> Void] = [:]
        var nextID = 0
        var heartbeat: TimerHandle?
        var closed = false
        var eventHandler: (@Sendable (LineEvent) -> Void)?
        var closeHandler: (@Sendable (UInt16, String) -> Void)?
    }

    private let state = Mutex(State())

    /// `heartbeatInterval` should stay well under the server's `--heartbeat-timeout`.
    public init(url: String, loop: EventLoop, heartbeatInterval: Duration = .seconds(10)) {
        self.url = url
        self.loop = loop
        self.heartbeatInterval = heartbeatInterval
    }

    /// Every event from the server, replies included (the anyRTC SDK's RTC delegate callbacks;
    /// see `LineEvent` for the mapping). Loop thread.
    public var onEvent: (@Sendable (LineEvent) -> Void)? {
        get { state.withLock { $0.eventHandler } }
        set { state.withLock { $0.eventHandler = newValue } }
    }

    /// The connection ended: close code and reason. Loop thread.
    public var onClose: (@Sendable (UInt16, String) -> Void)? {
        get { state.withLock { $0.closeHandler } }
        set { state.withLock { $0.closeHandler = newValue } }
    }

    /// Opens the WebSocket; `completion` runs on the loop thread.
    public func connect(timeout: Duration = .seconds(10), completion: @escaping @Sendable (Result<Void, WebSocketError>) -> Void = { _ in }) {
        WebSocketClient.connect(url: url, on: loop, maxMessage: 64 << 10, timeout: timeout) { [weak self] result in
            guard let self else { return }
            switch result {
            case .failure(let error):
                completion(.failure(error))
            case .success(let socket):
                self.opened(socket)
                completion(.success(()))
            }
        }
    }

    /// Sends `request` with a fresh id and returns the id; `reply` gets the answer (code
    /// 101, network disconnected, when the connection is already closed).
    @discardableResult
    public func send(_ request: LineRequest, reply: (@Sendable (LineEvent) -> Void)? = nil) -> Int {
        let (id, refused): (Int, LineEvent?) = state.withLock { state in
            state.nextID += 1
            let id = state.nextID
            var request = request
            request.id = id
            if let reply { state.replies[id] = reply }
            let text = request.jsonText
            var refusal: String?
            if let socket = state.socket {
                if !loop.execute({ socket.send(text: text) }) {
                    refusal = "the line connection's event loop is \(loop.refusalReason)"
                }
            } else if !state.closed {
                state.pending.append(text)
            } else {
                refusal = "the line connection to \(url) is closed"
            }
            // Never leave a request unanswered: one that cannot go out is answered at once.
            guard let refusal else { return (id, nil) }
            state.replies[id] = nil
            return (id, LineEvent(.reply, id: id, op: request.op.rawValue, code: .networkDisconnected, message: refusal))
        }
        if let refused {
            let handler = onEvent
            let answer: @Sendable () -> Void = {
                reply?(refused)
                handler?(refused)
            }
            // On the loop as every event is; on this thread when the loop takes no more.
            if !loop.execute(answer) { answer() }
        }
        return id
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

    /// Closes the WebSocket (the server treats it as leaving; a hoster's line closes).
    public func disconnect() {
        let socket = state.withLock { state in
            // Once: the close below is not refused for a full queue, so it must not repeat.
            let socket = state.closed ? nil : state.socket
            state.closed = true
            state.heartbeat?.cancel()
            state.heartbeat = nil
            return socket
        }
        if let socket { loop.executeCoalesced { socket.close() } }
    }

    // MARK: private (loop thread)

    private func opened(_ socket: WebSocketConnection) {
        socket.onMessage = { [weak self] _, message in
            guard let self, case .text(let text) = message, let event = LineEvent.parse(text) else { return }
            self.received(event)
        }
        socket.onClose = { [weak self] _, code, reason in
            guard let self else { return }
            let handler = self.state.withLock { state in
                state.closed = true
                state.socket = nil
                state.heartbeat?.cancel()
                state.heartbeat = nil
                return state.closeHandler
            }
            handler?(code, reason)
        }
        let queued: [String]? = state.withLock { state in
            if state.closed { return nil }
            state.socket = socket
            defer { state.pending = [] }
            return state.pending
        }
        guard let queued else {
            socket.close()
            return
        }
        for text in queued { socket.send(text: text) }
        armHeartbeat()
    }

    private func armHeartbeat() {
        state.withLock { state in
            guard !state.closed else { return }
            state.heartbeat = loop.schedule(after: heartbeatInterval) { [weak self] in
                guard let self else { return }
                let socket = self.state.withLock { $0.socket }
                socket?.send(text: LineRequest(op: .heartbeat).jsonText)
                self.armHeartbeat()
            }
        }
    }

    private func received(_ event: LineEvent) {
        let (reply, handler) = state.withLock { state in
            var reply: (@Sendable (LineEvent) -> Void)?
            if event.event == .reply, let id = event.id { reply = state.replies.removeValue(forKey: id) }
            return (reply, state.eventHandler)
        }
        reply?(event)
        handler?(event)
    }
}
