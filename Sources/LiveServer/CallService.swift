import Foundation
import LiveAuth
import LiveCore
import LiveNet
import LiveSignal
import Synchronization

/// The 1v1 call signaling of `liveline serve` (DESIGN.md §5): accepts the users'
/// WebSockets on `/call`, feeds their JSON requests to a `CallRegistry` and carries the
/// resulting events back, times out silent connections, unanswered invitations and
/// expired tokens, and answers the relay's questions (who may publish or play a `call-`
/// stream).
///
/// Delivery as on the line (`SignalFanOut`): each event encoded once; a user whose queue
/// would hold more than `limits.maxQueuedBytes`, or whose socket refuses the frame, is
/// closed and its calls end (never silently skipped).
///
/// Thread-safe: the registry and the sockets' table are in one Mutex; each socket is
/// touched only on its own loop. The relay is told (`onCallEnded`) without the lock held.
public final class CallService: Sendable {
    public let limits: CallLimits
    public let gate: CallGate
    private let clock: @Sendable () -> UInt64
    private let unixClock: @Sendable () -> Int64

    private struct State {
        var registry: CallRegistry
        var sockets: [CallConnectionID: WebSocketConnection] = [:]
        var connectionTokens: [CallConnectionID: String] = [:]
        var nextID: UInt64 = 0
        var tickTimer: TimerHandle?
        var stopped = false
        var callEnded: (@Sendable (String) -> Void)?
    }

    private let state: Mutex<State>

    /// The largest text message a user may send: a `send` carries at most a 1 KiB
    /// extension and a few short fields, so 16 KiB is ample; a longer frame closes the
    /// connection (1009).
    public static let maxMessageBytes = 16 << 10

    /// `verifier`: check tokens (nil: anyone may register any free user id). `clock`:
    /// monotonic µs, `unixClock`: unix seconds for token expiry (both injectable for
    /// tests). Timeouts are checked every `tickInterval` on one of `group`'s loops.
    public init(limits: CallLimits = CallLimits(), group: EventLoopGroup, verifier: TokenVerifier? = nil,
                clock: @escaping @Sendable () -> UInt64 = { Clock.monotonicMicros() },
                unixClock: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970) },
                tickInterval: Duration = .milliseconds(250)) {
        self.limits = limits
        gate = CallGate(verifier: verifier)
        self.clock = clock
        self.unixClock = unixClock
        var registry = CallRegistry(limits: limits)
        registry.requiresAdmission = verifier != nil
        state = Mutex(State(registry: registry))
        scheduleTick(on: group.next(), every: tickInterval)
    }

    /// Called with a room id when an accepted call in it ended (hangup, reject, cancel,
    /// a user gone): the relay ends the publishers of both its streams. Any thread,
    /// without the service's lock held.
    public var onCallEnded: (@Sendable (_ roomId: String) -> Void)? {
        get { state.withLock { $0.callEnded } }
        set { state.withLock { $0.callEnded = newValue } }
    }

    /// The route handler for `GET /call` (the WebSocket upgrade); `?token=` in its URL is
    /// the user's token for register.
    public func webSocketHandler() -> HTTPRouter.Handler {
        WebSocketUpgrade.handler(maxMessage: Self.maxMessageBytes, idleTimeout: nil) { [weak self] socket, request in
            self?.open(socket, token: request.query("token"))
        }
    }

    /// Why the relay must refuse this publish, nil when the call rules do not object
    /// (see `CallRegistry.publishRefusal`). Any thread.
    public func publishRefusal(streamName: String, query: String?, userId: String?, checksUsers: Bool) -> String? {
        locked { $0.publishRefusal(streamName: streamName, query: query, userId: userId, checksUsers: checksUsers) }
    }

    /// Why a player may not play `streamName`, nil when allowed (see
    /// `CallRegistry.playRefusal`). Any thread.
    public func playRefusal(streamName: String, query: String?, userId: String?, checksUsers: Bool) -> String? {
        locked { $0.playRefusal(streamName: streamName, query: query, userId: userId, checksUsers: checksUsers) }
    }

    /// Registered users.
    public var userCount: Int { locked { $0.userCount } }
    /// Pending and accepted calls.
    public var callCount: Int { locked { $0.callCount } }
    /// Open `/call` connections.
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
            let id = CallConnectionID(state.nextID)
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
                    state.registry.refuse(LineRefusal(code: .invalidParams, message: "the call signaling speaks JSON text messages"),
                                          from: id, nowMicros: self.clock())
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

    private func receive(_ text: String, from id: CallConnectionID) {
        let nowSeconds = unixClock()
        update { state in
            let now = self.clock()
            let token = state.connectionTokens[id]
            return state.registry.receive(text, from: id, nowMicros: now) { request, userId in
                self.gate.admit(request, userId: userId, connectionToken: token, nowSeconds: nowSeconds, nowMicros: now)
            }
        }
    }

    /// Runs `change` on the registry and carries out its deliveries, all under the lock;
    /// then tells the relay which calls' streams ended.
    private func update(removing gone: CallConnectionID? = nil, _ change: (inout State) -> [CallDelivery]) {
        let (endedRooms, unreached, tell) = state.withLock { state in
            if let gone {
                state.sockets[gone] = nil
                state.connectionTokens[gone] = nil
            }
            let deliveries = change(&state)
            let (endedRooms, unreached) = deliver(deliveries, sockets: state.sockets)
            return (endedRooms, unreached, state.callEnded)
        }
        if let tell { endedRooms.forEach(tell) }
        for (id, socket) in unreached {
            // Its loop took no more work, so it missed events: gone.
            Log.warning("call \(id): its event loop is \(socket.loop.refusalReason); closing it")
            update(removing: id) { $0.registry.disconnect(id) }
            socket.loop.executeCoalesced { socket.connection.abort(.loopBusy) }
        }
    }

    /// Hands the deliveries to the sockets (see `SignalFanOut`). Returns the rooms of
    /// ended calls and the users whose loop refused the task. Under the lock.
    private func deliver(_ deliveries: [CallDelivery], sockets: [CallConnectionID: WebSocketConnection])
        -> (endedRooms: [String], unreached: [(CallConnectionID, WebSocketConnection)]) {
        var items: [(recipients: [CallConnectionID], item: SignalFanOut.Item)] = []
        var endedRooms: [String] = []
        for delivery in deliveries {
            switch delivery.action {
            case .send(let event):
                guard !delivery.recipients.isEmpty else { continue }
                items.append((delivery.recipients, .text(event.jsonText)))
            case .disconnect(let reason, let code):
                items.append((delivery.recipients, .close(reason: reason, code: code)))
            case .endStreams(let roomId):
                endedRooms.append(roomId)
            }
        }
        let unreached = SignalFanOut.deliver(items, sockets: sockets, maxQueued: limits.maxQueuedBytes, label: "call") { [weak self] id, socket in
            self?.update(removing: id) { $0.registry.disconnect(id) }
            socket.connection.abort(.timedOut("reading the call's events"))
        }
        return (endedRooms, unreached)
    }

    private func locked<Result>(_ body: (CallRegistry) -> Result) -> Result {
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
