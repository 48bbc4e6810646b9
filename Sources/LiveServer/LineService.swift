import Foundation
import LiveAuth
import LiveCore
import LiveNet
import LiveSignal
import Synchronization

/// The co-host line of `liveline serve` (DESIGN.md §4): accepts the participants'
/// WebSockets on `/line`, feeds their JSON requests to a `LineRegistry` and carries the
/// resulting events back, times out applications, silent participants and expired
/// tokens, and answers the living list and the relay's questions (who may publish or
/// play a co-host stream).
///
/// Delivery: each event is encoded once, as one WebSocket frame shared by all its
/// recipients; a recipient whose queue would hold more than `limits.maxQueuedBytes`, or
/// whose socket refuses the frame, is closed and leaves its line (never silently skipped).
///
/// Thread-safe: the registry and the sockets' table are in one Mutex; each socket is
/// touched only on its own loop (events reach it through `loop.execute`, submitted under
/// the lock so every participant sees events in the registry's order). The relay is
/// asked (`publisherQuery`) and told (`onCohostGone`) without holding the lock.
public final class LineService: Sendable {
    public let limits: LineLimits
    public let gate: LineGate
    private let clock: @Sendable () -> UInt64
    private let unixClock: @Sendable () -> Int64

    private struct State {
        var registry: LineRegistry
        var sockets: [LineParticipantID: WebSocketConnection] = [:]
        var connectionTokens: [LineParticipantID: String] = [:]
        var nextID: UInt64 = 0
        var tickTimer: TimerHandle?
        var stopped = false
        var publisherLookup: (@Sendable (StreamKey) -> String?)?
        var cohostGone: (@Sendable (String) -> Void)?
    }

    private let state: Mutex<State>

    /// `verifier`: check tokens (nil: no tokens; creates are then checked against the
    /// relay's publishers, see `LineGate`). `clock`: monotonic µs, `unixClock`: unix
    /// seconds for token expiry (both injectable for tests). Timeouts are checked and
    /// member counts sent every `tickInterval` on one of `group`'s loops.
    public init(limits: LineLimits = LineLimits(), group: EventLoopGroup, verifier: TokenVerifier? = nil,
                clock: @escaping @Sendable () -> UInt64 = { Clock.monotonicMicros() },
                unixClock: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970) },
                tickInterval: Duration = .milliseconds(250)) {
        self.limits = limits
        gate = LineGate(verifier: verifier)
        self.clock = clock
        self.unixClock = unixClock
        var registry = LineRegistry(limits: limits)
        registry.requiresAdmission = verifier != nil
        state = Mutex(State(registry: registry))
        scheduleTick(on: group.next(), every: tickInterval)
    }

    /// The relay's answer to "what query did the live publisher of this stream give?"
    /// ("" for none, nil when nobody publishes it): without tokens, only that publisher
    /// may create the line named like the stream. nil: no relay, so no create is allowed
    /// without tokens. Called on a participant's loop, without the line's lock held.
    public var publisherQuery: (@Sendable (StreamKey) -> String?)? {
        get { state.withLock { $0.publisherLookup } }
        set { state.withLock { $0.publisherLookup = newValue } }
    }

    /// Called with a co-host's stream name (pubId) when the co-host hung up, left, was
    /// dropped or its line closed: the relay ends that stream's publisher. Any thread,
    /// without the line's lock held.
    public var onCohostGone: (@Sendable (_ pubId: String) -> Void)? {
        get { state.withLock { $0.cohostGone } }
        set { state.withLock { $0.cohostGone = newValue } }
    }

    /// The route handler for `GET /line` (the WebSocket upgrade); `?token=` in its URL
    /// is the participant's token for create and join.
    public func webSocketHandler() -> HTTPRouter.Handler {
        // A frame never needs more than the largest request: 4 KiB of fields plus JSON.
        WebSocketUpgrade.handler(maxMessage: 16 << 10, idleTimeout: nil) { [weak self] socket, request in
            self?.open(socket, token: request.query("token"))
        }
    }

    /// `GET /api/live`: the living list in the anyRTC SDK's shape.
    public func livingListJSON() -> String {
        locked { $0.livingListJSON() }
    }

    /// `GET /api/live/{liveId}/members?page=N&size=S`, nil when no such line.
    public func memberPage(liveId: String, page: Int, size: Int? = nil) -> LineMemberPage? {
        locked { $0.memberPage(liveId: liveId, page: page, size: size) }
    }

    /// Why the relay must refuse this publish, nil when the line does not object
    /// (see `LineRegistry.publishRefusal`). Any thread.
    public func publishRefusal(streamName: String, query: String?) -> String? {
        locked { $0.publishRefusal(streamName: streamName, query: query) }
    }

    /// Why a player may not play `streamName`, nil when allowed (see
    /// `LineRegistry.playRefusal`). Any thread.
    public func playRefusal(streamName: String, query: String?, userId: String?, checksUsers: Bool) -> String? {
        locked { $0.playRefusal(streamName: streamName, query: query, userId: userId, checksUsers: checksUsers) }
    }

    /// Open line connections.
    public var connectionCount: Int { state.withLock { $0.sockets.count } }

    /// Stops the timeout timer; sockets end with their loops.
    public func stop() {
        state.withLock { state in
            state.stopped = true
            state.tickTimer?.cancel()
            state.tickTimer = nil
        }
    }

    // MARK: sockets (each callback on the socket's loop)

    private func open(_ socket: WebSocketConnection, token: String?) {
        let id = state.withLock { state in
            state.nextID += 1
            let id = LineParticipantID(state.nextID)
            state.sockets[id] = socket
            if let token { state.connectionTokens[id] = token }
            state.registry.connect(id, nowMicros: clock())
            return id
        }
        socket.onMessage = { [weak self] _, message in
            guard let self else { return }
            switch message {
            case .text(let text):
                self.receive(text, from: id)
            case .binary:
                self.update { state in
                    let now = self.clock()
                    return state.registry.refuse(LineRefusal(code: .invalidParams, message: "the line speaks JSON text messages"),
                                           from: id, nowMicros: now)
                }
            case .ping, .pong:
                self.update { $0.registry.touch(id, nowMicros: self.clock()) }
            case .close:
                break
            }
        }
        socket.onClose = { [weak self] _, _, _ in
            self?.update(removing: id) { $0.registry.disconnect(id) }
        }
    }

    private func receive(_ text: String, from id: LineParticipantID) {
        let request: LineRequest
        switch LineRequest.parse(text) {
        case .failure(let refusal):
            update { $0.registry.refuse(refusal, from: id, nowMicros: self.clock()) }
            return
        case .success(let parsed):
            request = parsed
        }
        // The relay is asked before taking the lock (it has locks of its own).
        var publisherQuery: String?
        if request.op == .create, gate.verifier == nil, let stream = LineGate.stream(of: request) {
            publisherQuery = self.publisherQuery?(stream)
        }
        let nowSeconds = unixClock()
        update { state in
            let now = self.clock()
            let token = state.connectionTokens[id]
            return state.registry.handle(request, from: id, nowMicros: now) { request, context in
                self.gate.admit(request, context, connectionToken: token, publisherQuery: publisherQuery,
                                nowSeconds: nowSeconds, nowMicros: now)
            }
        }
    }

    /// Runs `change` on the registry and carries out its deliveries, all under the lock;
    /// then tells the relay which co-host streams ended.
    private func update(removing gone: LineParticipantID? = nil, _ change: (inout State) -> [LineDelivery]) {
        let (endedStreams, unreached, tell) = state.withLock { state in
            if let gone {
                state.sockets[gone] = nil
                state.connectionTokens[gone] = nil
            }
            let deliveries = change(&state)
            let (endedStreams, unreached) = deliver(deliveries, sockets: state.sockets)
            return (endedStreams, unreached, state.cohostGone)
        }
        if let tell { endedStreams.forEach(tell) }
        for (id, socket) in unreached {
            // Its loop took no more work, so it missed events: gone, like a member that
            // does not read them (one close per member, so it may pass a full queue).
            Log.warning("line \(id): its event loop is \(socket.loop.refusalReason); closing it")
            update(removing: id) { $0.registry.disconnect(id, reason: "tooSlow") }
            socket.loop.executeCoalesced { socket.connection.abort(.loopBusy) }
        }
    }

    /// Hands the deliveries to the sockets (see `SignalFanOut`). Returns the pubIds of
    /// ended co-host streams and the members whose loop refused the task. Under the lock.
    private func deliver(_ deliveries: [LineDelivery], sockets: [LineParticipantID: WebSocketConnection])
        -> (endedStreams: [String], unreached: [(LineParticipantID, WebSocketConnection)]) {
        var items: [(recipients: [LineParticipantID], item: SignalFanOut.Item)] = []
        var endedStreams: [String] = []
        for delivery in deliveries {
            switch delivery.action {
            case .send(let event):
                guard !delivery.recipients.isEmpty else { continue }
                items.append((delivery.recipients, .text(event.jsonText)))
            case .disconnect(let reason, let code):
                items.append((delivery.recipients, .close(reason: reason, code: code)))
            case .endStream(let pubId):
                endedStreams.append(pubId)
            }
        }
        let unreached = SignalFanOut.deliver(items, sockets: sockets, maxQueued: limits.maxQueuedBytes, label: "line") { [weak self] id, socket in
            self?.update(removing: id) { $0.registry.disconnect(id, reason: "tooSlow") }
            socket.connection.abort(.timedOut("reading the line's events"))
        }
        return (endedStreams, unreached)
    }

    private func locked<Result>(_ body: (LineRegistry) -> Result) -> Result {
        state.withLock { body($0.registry) }
    }

    private func scheduleTick(on loop: EventLoop, every interval: Duration) {
        state.withLock { state in
            guard !state.stopped else { return }
            state.tickTimer = loop.schedule(after: interval) { [weak self] in
                guard let self else { return }
                self.update { $0.registry.tick(nowMicros: self.clock()) }
                self.scheduleTick(on: loop, every: interval)
            }
        }
    }
}
