import LiveCore
import LiveNet
import Synchronization

/// A request of one of LiveLine's JSON signaling protocols (the co-host line's
/// `LineRequest`, the 1v1 call's `CallRequest`): one text message with an `id`.
public protocol SignalRequest: Sendable {
    var id: Int? { get set }
    /// The request as one JSON text message.
    var jsonText: String { get }
    /// Its op's name, for the reply that refuses it locally.
    var opName: String { get }
    /// The request that keeps the connection alive.
    static var heartbeat: Self { get }
}

/// An event of one of LiveLine's JSON signaling protocols (`LineEvent`, `CallEvent`).
public protocol SignalEvent: Sendable {
    /// Parses a text message from the server; nil when it is not one of the protocol's events.
    static func parse(_ text: String) -> Self?
    /// The id of the request this event answers, nil when it is not a reply.
    var replyID: Int? { get }
    /// The reply that refuses request `id` without the server (the connection is gone).
    static func localRefusal(id: Int, op: String, code: LiveCode, message: String) -> Self
}

/// One end of a signaling WebSocket speaking `Request` / `Event` JSON, with a heartbeat:
/// the co-host line's `LineClient` (`ws://HOST:HTTPPORT/line`) and the 1v1 call's
/// `CallClient` (`/call`).
///
/// Requests get a fresh `id`; the matching reply goes to the request's own `reply`
/// callback, and every event (replies included) to `onEvent`. Callbacks run on `loop`'s
/// thread. Thread-safe: methods may be called from any thread (requests made before the
/// socket is open are sent once it is).
public final class SignalClient<Request: SignalRequest, Event: SignalEvent>: Sendable {
    public let url: String
    public let loop: EventLoop
    public let heartbeatInterval: Duration
    /// What the connection is, in messages ("line", "call").
    public let kind: String

    private struct State {
        var socket: WebSocketConnection?
        var pending: [String] = []
        var replies: [Int: @Sendable (Event) -> Void] = [:]
        var nextID = 0
        var heartbeat: TimerHandle?
        var closed = false
        var eventHandler: (@Sendable (Event) -> Void)?
        var closeHandler: (@Sendable (UInt16, String) -> Void)?
    }

    private let state = Mutex(State())

    /// `heartbeatInterval` should stay well under the server's heartbeat timeout.
    public init(url: String, loop: EventLoop, heartbeatInterval: Duration = .seconds(10), kind: String) {
        self.url = url
        self.loop = loop
        self.heartbeatInterval = heartbeatInterval
        self.kind = kind
    }

    /// Every event from the server, replies included. Loop thread.
    public var onEvent: (@Sendable (Event) -> Void)? {
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
    public func send(_ request: Request, reply: (@Sendable (Event) -> Void)? = nil) -> Int {
        let (id, refused): (Int, Event?) = state.withLock { state in
            state.nextID += 1
            let id = state.nextID
            var request = request
            request.id = id
            if let reply { state.replies[id] = reply }
            let text = request.jsonText
            var refusal: String?
            if let socket = state.socket {
                if !loop.execute({ socket.send(text: text) }) {
                    refusal = "the \(kind) connection's event loop is \(loop.refusalReason)"
                }
            } else if !state.closed {
                state.pending.append(text)
            } else {
                refusal = "the \(kind) connection to \(url) is closed"
            }
            // Never leave a request unanswered: one that cannot go out is answered at once.
            guard let refusal else { return (id, nil) }
            state.replies[id] = nil
            return (id, Event.localRefusal(id: id, op: request.opName, code: .networkDisconnected, message: refusal))
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

    /// Closes the WebSocket (the server treats it as leaving).
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
            guard let self, case .text(let text) = message, let event = Event.parse(text) else { return }
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
                socket?.send(text: Request.heartbeat.jsonText)
                self.armHeartbeat()
            }
        }
    }

    private func received(_ event: Event) {
        let (reply, handler) = state.withLock { state in
            var reply: (@Sendable (Event) -> Void)?
            if let id = event.replyID { reply = state.replies.removeValue(forKey: id) }
            return (reply, state.eventHandler)
        }
        reply?(event)
        handler?(event)
    }
}
