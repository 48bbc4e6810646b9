import Foundation
import LiveCore
import LiveNet

/// The co-host line of `liveline serve` (DESIGN.md §4): accepts the participants'
/// WebSockets on `/line`, feeds their JSON requests to a `LineRegistry` and carries the
/// resulting events back, times out applications and silent participants, and answers
/// the living list and the relay's question of who may publish a co-host stream.
///
/// Thread-safe: the registry is guarded by `lock`; each socket is touched only on its
/// own loop (events reach it through `loop.execute`, submitted under the lock so every
/// participant sees events in the registry's order).
public final class LineService: @unchecked Sendable {
    // @unchecked: `registry`, `sockets`, `nextID` and `tickTimer` are touched only
    // while holding `lock`.
    public let limits: LineLimits
    private let clock: @Sendable () -> UInt64
    private let lock = NSLock()
    private var registry: LineRegistry
    private var sockets: [LineParticipantID: WebSocketConnection] = [:]
    private var nextID: UInt64 = 0
    private var tickTimer: TimerHandle?
    private var stopped = false

    /// `clock`: monotonic µs (injectable for tests). Timeouts are checked every
    /// `tickInterval` on one of `group`'s loops.
    public init(limits: LineLimits = LineLimits(), group: EventLoopGroup,
                clock: @escaping @Sendable () -> UInt64 = { Clock.monotonicMicros() },
                tickInterval: Duration = .milliseconds(250)) {
        self.limits = limits
        self.clock = clock
        registry = LineRegistry(limits: limits)
        scheduleTick(on: group.next(), every: tickInterval)
    }

    /// The route handler for `GET /line` (the WebSocket upgrade).
    public func webSocketHandler() -> HTTPRouter.Handler {
        // A frame never needs more than the largest request: 4 KiB of fields plus JSON.
        WebSocketUpgrade.handler(maxMessage: 16 << 10, idleTimeout: nil) { [weak self] socket, _ in
            self?.open(socket)
        }
    }

    /// `GET /api/live`: the living list in the seed's shape.
    public func livingListJSON() -> String {
        locked { $0.livingListJSON() }
    }

    /// `GET /api/live/{liveId}/members?page=N`, nil when no such line.
    public func memberPage(liveId: String, page: Int) -> LineMemberPage? {
        locked { $0.memberPage(liveId: liveId, page: page) }
    }

    /// Why the relay must refuse this publish, nil when the line does not object
    /// (see `LineRegistry.publishRefusal`). Any thread.
    public func publishRefusal(streamName: String, query: String?) -> String? {
        locked { $0.publishRefusal(streamName: streamName, query: query) }
    }

    /// Open line connections.
    public var connectionCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return sockets.count
    }

    /// Stops the timeout timer; sockets end with their loops.
    public func stop() {
        lock.lock()
        stopped = true
        tickTimer?.cancel()
        tickTimer = nil
        lock.unlock()
    }

    // MARK: sockets (each callback on the socket's loop)

    private func open(_ socket: WebSocketConnection) {
        lock.lock()
        nextID += 1
        let id = LineParticipantID(nextID)
        sockets[id] = socket
        registry.connect(id, nowMicros: clock())
        lock.unlock()
        socket.onMessage = { [weak self] socket, message in
            guard let self else { return }
            switch message {
            case .text(let text):
                self.update { $0.receive(text, from: id, nowMicros: self.clock()) }
            case .binary:
                self.update { registry in
                    registry.touch(id, nowMicros: self.clock())
                    return [.send(LineEvent(.reply, code: .invalidParams, message: "the line speaks JSON text messages"), to: id)]
                }
            case .ping, .pong:
                self.update { registry in
                    registry.touch(id, nowMicros: self.clock())
                    return []
                }
            case .close:
                break
            }
        }
        socket.onClose = { [weak self] _, _, _ in
            self?.update(removing: id) { $0.disconnect(id) }
        }
    }

    /// Runs `change` on the registry and carries out its deliveries, all under the lock.
    private func update(removing gone: LineParticipantID? = nil, _ change: (inout LineRegistry) -> [LineDelivery]) {
        lock.lock()
        defer { lock.unlock() }
        if let gone { sockets[gone] = nil }
        deliver(change(&registry))
    }

    private func deliver(_ deliveries: [LineDelivery]) {
        var batches: [LineParticipantID: [LineDelivery.Action]] = [:]
        var order: [LineParticipantID] = []
        for delivery in deliveries {
            if batches[delivery.to] == nil { order.append(delivery.to) }
            batches[delivery.to, default: []].append(delivery.action)
        }
        for id in order {
            guard let socket = sockets[id], let actions = batches[id] else { continue }
            let texts = actions.map { action -> (String?, String?) in
                switch action {
                case .send(let event): (event.jsonText, nil)
                case .disconnect(let reason): (nil, reason)
                }
            }
            socket.loop.execute {
                for (text, closeReason) in texts {
                    if let text { socket.send(text: text) }
                    if let closeReason { socket.close(code: 1008, reason: closeReason) }
                }
            }
        }
    }

    private func locked<Result>(_ body: (LineRegistry) -> Result) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return body(registry)
    }

    private func scheduleTick(on loop: EventLoop, every interval: Duration) {
        lock.lock()
        defer { lock.unlock() }
        guard !stopped else { return }
        tickTimer = loop.schedule(after: interval) { [weak self] in
            guard let self else { return }
            self.update { $0.tick(nowMicros: self.clock()) }
            self.scheduleTick(on: loop, every: interval)
        }
    }
}
