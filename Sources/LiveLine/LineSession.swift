import Foundation
import LiveAuth
import LiveCore
import LiveNet
import LiveSignal

/// A kit's connection to the co-host line: a `LineClient` on an event loop of its own,
/// with the server's events turned into `LineSessionEvent`s and every refused request
/// reported as `.refused` (so no seed return code is lost).
///
/// Reconnect: a connection lost after it was open (the server restarted, the network
/// dropped it) is tried again with `backoff`, the push's schedule (2 s × 1.5^n with
/// jitter, DESIGN.md §7), each try reported as `.reconnecting(times:reason:)`. A try
/// that connects sends the create or join again (`start`'s opener, with a fresh token
/// from the provider); one the server refuses (the hoster's push not republished yet,
/// the line not re-created yet, the old connection not yet gone) counts as a failed try.
/// When the tries run out, `onLost` ends the session (`.disconnected`, code 101).
/// Requests made while the line is down are answered at once with 101.
///
/// Tokens: a fixed `token`, or a `TokenProvider` asked for the first token (before the
/// create or join goes out) and again whenever the server says `tokenWillExpire`; the
/// fresh token goes out as `renewToken`. As the token provider model of the anyRTC / Agora
/// call kits wants it, a refresh that returns the same token or another user is not
/// used, and the old token stays in force until it expires (then the server ends the
/// session with 212, reported as `.authFailed`).
///
/// Callbacks run on the loop thread. Thread-safe: requests may be sent from any thread.
final class LineSession: @unchecked Sendable {
    // @unchecked: `loop`, `provider`, `backoff` and the callbacks are immutable
    // (LineClient is thread-safe); every `var` is touched only while holding `lock`.

    /// Sends the create or join on `client` with the token and the user it names;
    /// `reply` reports its refusal (nil on a reconnect, where a refusal is another try).
    typealias Opener = @Sendable (_ client: LineClient, _ token: String?, _ userId: String?,
                                  _ reply: (@Sendable (LineEvent) -> Void)?) -> Void

    let server: LineServer
    private let loop: EventLoop
    private let heartbeat: Duration
    private let backoff: ReconnectBackoff
    private let provider: TokenProvider?
    private let onEvent: @Sendable (LineEvent) -> Void
    private let report: @Sendable (LineSessionEvent) -> Void
    private let onInterrupted: @Sendable () -> Void
    private let onLost: @Sendable (String) -> Void
    private let lock = NSLock()
    /// The connection in use: after a loss, the closed one (it answers requests with
    /// 101) until a reconnect has opened the next.
    private var client: LineClient!
    /// The token in use and whom it names.
    private var current: (token: String, uid: String)?
    /// False until the create or join went out; requests made before wait here, in order.
    private var opened = false
    private var waiting: [@Sendable (LineClient) -> Void] = []
    private var opener: Opener?
    private var givenToken: String?
    /// Reconnect tries since the line was last open.
    private var attempt = 0
    /// A reconnect's create or join waits for its lineResult.
    private var reopening = false
    /// No reconnect: `close()` was called, or the server ended the session (212).
    private var ended = false
    private var retryTimer: TimerHandle?

    /// `onEvent` gets every server event first as the raw `LineEvent` (for the kit's own
    /// bookkeeping); `report` gets the session's own events (reconnects, renewals, auth
    /// failures); `onInterrupted` runs when the connection is lost and a reconnect is
    /// tried (co-hosting ends with it), `onLost` when the line is lost for good.
    init(server: LineServer, heartbeat: Duration = .seconds(5), backoff: ReconnectBackoff = ReconnectBackoff(),
         tokenProvider: TokenProvider? = nil,
         onEvent: @escaping @Sendable (LineEvent) -> Void,
         report: @escaping @Sendable (LineSessionEvent) -> Void,
         onInterrupted: @escaping @Sendable () -> Void = {},
         onLost: @escaping @Sendable (String) -> Void) throws {
        self.server = server
        self.heartbeat = heartbeat
        self.backoff = backoff
        provider = tokenProvider
        self.onEvent = onEvent
        self.report = report
        self.onInterrupted = onInterrupted
        self.onLost = onLost
        loop = try EventLoop(name: "liveline-line")
        loop.start()
        let first = makeClient()
        client = first
        let url = server.signalURL
        first.connect { result in
            if case .failure(let error) = result { onLost("connecting to \(url) failed: \(error)") }
        }
    }

    /// Sends the create or join through `opener`, now and again after every reconnect,
    /// with `token` as given or the provider's (a provider that fails is reported as
    /// `.authFailed` and nothing is sent). With tokens the server knows the user by the
    /// token, so the kits send that user id (nil without a token).
    func start(token: String?, reply: @escaping @Sendable (LineEvent) -> Void, _ opener: @escaping Opener) {
        lock.lock()
        self.opener = opener
        givenToken = token
        let client = self.client!
        lock.unlock()
        open(on: client, reply: reply)
    }

    /// Runs the opener on `client`, then lets the requests that waited go out.
    private func open(on client: LineClient, reply: (@Sendable (LineEvent) -> Void)?) {
        lock.lock()
        let opener = self.opener, given = current?.token ?? givenToken
        lock.unlock()
        guard let opener else { return }
        guard let provider else {
            let user = given.flatMap(AccessToken.peek)?.sub
            if let given { use(IssuedToken(token: given, uid: user ?? "", expiresAt: 0)) }
            opener(client, given, user, reply)
            return flushWaiting()
        }
        Task(executorPreference: ProviderExecutor.shared) { [weak self] in
            do {
                let issued = try await provider()
                self?.use(issued)
                opener(client, issued.token, issued.uid, reply)
            } catch {
                if reply == nil {
                    client.onClose = nil
                    client.disconnect()
                    self?.retry(after: "the token provider failed: \(error)")
                } else {
                    self?.report(.authFailed(code: .authFailed, message: "the token provider failed: \(error)"))
                }
            }
            // What waited goes out now (refused with 600 when the line was not opened).
            self?.flushWaiting()
        }
    }

    /// A client on the session's loop whose events and close come here.
    private func makeClient() -> LineClient {
        let client = LineClient(url: server.signalURL, loop: loop, heartbeatInterval: heartbeat)
        client.onEvent = { [weak self, weak client] event in
            guard let self, let client else { return }
            self.received(event, on: client)
        }
        let url = server.signalURL
        client.onClose = { [weak self, weak client] code, reason in
            guard let self, let client else { return }
            // 1008: the server ended this session on purpose (its token expired, it was
            // silent or flooding, its hoster reconnected elsewhere): no reconnect then.
            self.lost(client, "the line connection to \(url) closed (\(code) \(reason))", final: code == 1008)
        }
        return client
    }

    private func received(_ event: LineEvent, on client: LineClient) {
        switch event.event {
        case .tokenWillExpire:
            renew()
        case .tokenExpired:
            // The server closes the session next: that is the end, not a loss to repair.
            lock.lock()
            ended = true
            lock.unlock()
        case .lineResult:
            lock.lock()
            let again = reopening
            reopening = false
            if event.liveCode == .ok { attempt = 0 }
            lock.unlock()
            if again, event.liveCode != .ok {
                // Not back yet (the push not republished, the line not re-created, the old
                // connection still in the room): this try failed, the next may not.
                client.onClose = nil
                client.disconnect()
                let code = event.liveCode ?? .unknown
                return retry(after: "the line refused the reconnect: code \(code.rawValue) (\(event.message ?? code.message))")
            }
        default:
            break
        }
        onEvent(event)
    }

    /// The connection `client` closed without `close()`.
    private func lost(_ client: LineClient, _ reason: String, final: Bool) {
        lock.lock()
        let isCurrent = client === self.client
        let over = ended || final
        ended = over
        lock.unlock()
        guard isCurrent else { return }
        if over { return onLost(reason) }
        onInterrupted()
        retry(after: reason)
    }

    /// Schedules the next reconnect try, or ends the session when the tries ran out.
    private func retry(after reason: String) {
        lock.lock()
        guard !ended else { return lock.unlock() }
        let tried = attempt
        guard let delay = backoff.delay(attempt: tried, unit: Double.random(in: 0...1)) else {
            ended = true
            lock.unlock()
            return onLost("\(reason); \(tried) reconnect(s) failed")
        }
        attempt += 1
        lock.unlock()
        report(.reconnecting(times: tried + 1, reason: reason))
        let timer = loop.schedule(after: .milliseconds(Int64(delay * 1000))) { [weak self] in self?.reconnect() }
        lock.lock()
        retryTimer = timer
        lock.unlock()
    }

    /// One reconnect try: a fresh connection that, once open, sends the create or join again.
    private func reconnect() {
        lock.lock()
        guard !ended else { return lock.unlock() }
        lock.unlock()
        let fresh = makeClient()
        let url = server.signalURL
        fresh.connect { [weak self] result in
            guard let self else { return }
            switch result {
            case .failure(let error):
                self.retry(after: "connecting to \(url) failed: \(error)")
            case .success:
                self.lock.lock()
                if self.ended {
                    self.lock.unlock()
                    fresh.onClose = nil
                    return fresh.disconnect()
                }
                self.client = fresh
                self.opened = false
                self.reopening = true
                self.lock.unlock()
                self.open(on: fresh, reply: nil)
            }
        }
    }

    /// Runs `body` with the client once the create or join went out (at once when it
    /// has): a request made while the first token is fetched would otherwise overtake it.
    func send(_ body: @escaping @Sendable (LineClient) -> Void) {
        lock.lock()
        if opened {
            let client = self.client!
            lock.unlock()
            return body(client)
        }
        waiting.append(body)
        lock.unlock()
    }

    private func flushWaiting() {
        lock.lock()
        opened = true
        let queued = waiting
        let client = self.client!
        waiting = []
        lock.unlock()
        for body in queued { body(client) }
    }

    /// The token in use (the last one the server took or was sent), nil without tokens.
    var currentToken: String? {
        lock.lock()
        defer { lock.unlock() }
        return current?.token
    }

    /// Sends `token` as the session's new token (renewToken); the answer arrives as
    /// `.tokenRenewed` or `.authFailed`.
    func renew(with token: String) {
        lock.lock()
        let client = self.client!
        lock.unlock()
        client.renewToken(token) { [weak self, report] reply in
            if reply.liveCode == .ok {
                self?.use(IssuedToken(token: token, uid: AccessToken.peek(token)?.sub ?? "", expiresAt: 0))
                report(.tokenRenewed(expiresAt: AccessToken.peek(token)?.exp ?? 0))
            } else {
                let code = reply.liveCode ?? .authFailed
                report(.authFailed(code: code, message: "renewing the token: \(reply.message ?? code.message)"))
            }
        }
    }

    /// tokenWillExpire: a fresh token from the provider, if there is one.
    private func renew() {
        guard let provider else { return }
        Task(executorPreference: ProviderExecutor.shared) { [weak self] in
            do {
                let issued = try await provider()
                guard let self else { return }
                if let refusal = self.refusal(of: issued) {
                    return self.report(.authFailed(code: .authFailed, message: refusal))
                }
                self.use(issued)
                self.renew(with: issued.token)
            } catch {
                self?.report(.authFailed(code: .authFailed, message: "the token provider failed: \(error)"))
            }
        }
    }

    /// Why a refreshed token is not used: the same token again, or another user.
    private func refusal(of issued: IssuedToken) -> String? {
        lock.lock()
        defer { lock.unlock() }
        guard let current else { return nil }
        if issued.token == current.token { return "the token provider returned the token in use" }
        if issued.uid != current.uid { return "the token provider returned a token for \(issued.uid), not \(current.uid)" }
        return nil
    }

    private func use(_ issued: IssuedToken) {
        lock.lock()
        current = (issued.token, issued.uid)
        lock.unlock()
    }

    /// A reply handler that reports a non-zero answer as `.refused` to `report`.
    static func refusal(_ report: @escaping @Sendable (LineSessionEvent) -> Void) -> @Sendable (LineEvent) -> Void {
        { reply in
            guard let code = reply.liveCode, code != .ok else { return }
            report(.refused(op: reply.op ?? "?", code: code, message: reply.message ?? code.message))
        }
    }

    /// Closes the connection and stops the loop. Not on the loop thread (it joins it).
    func close() {
        lock.lock()
        ended = true
        retryTimer?.cancel()
        retryTimer = nil
        let client = self.client!
        lock.unlock()
        // A close asked for is no loss to report.
        client.onClose = nil
        client.disconnect()
        if loop.inEventLoop {
            loop.shutdown()
        } else {
            // Let the close frame go out before the loop stops.
            let flushed = DispatchSemaphore(value: 0)
            if loop.execute({ flushed.signal() }) { _ = flushed.wait(timeout: .now() + 1) }
            loop.shutdown()
        }
    }
}
