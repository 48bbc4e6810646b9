import Foundation
import LiveAuth
import LiveCore
import LiveNet
import LiveSignal
import Synchronization

/// A kit's connection to the co-host line: a `LineClient` on an event loop of its own,
/// with the server's events turned into `LineSessionEvent`s and every refused request
/// reported as `.refused` (so no return code of the anyRTC SDK is lost).
///
/// Reconnect: a connection lost after it was open (the server restarted, the network
/// dropped it) is tried again with `backoff`, the push's schedule (2 s × 1.5^n with
/// jitter, DESIGN.md §8), each try reported as `.reconnecting(times:reason:)`. A try
/// that connects sends the create or join again (`start`'s opener, with a fresh token
/// from the provider); one the server refuses (the hoster's push not republished yet,
/// the line not re-created yet, the old connection not yet gone) counts as a failed try.
/// Requests made while the line is down are answered at once with 101.
///
/// The end: every way the line ends for this kit ends the session once, with the SDK's
/// code (onRTCLineClosed(code)): `onEnded` runs, then `.lineClosed(code:reason:)` is
/// reported, and nothing is reported after it. The ways: `close` (the kit closed or
/// left: 0, or the code it gives), `end` (the kit heard the line is over, e.g. the
/// guest's lineLeave), the server closing the session on purpose (its close code is
/// 4000 + the SDK code: 211 forced exit when the hoster's line was reclaimed elsewhere,
/// 212 token expired, 201 far over the request rate, 101 silent past the heartbeat
/// timeout), the first connect failing (101) and the reconnect tries running out
/// (101; 204 when the last loss was the server shutting down, 1001, and it never came back).
///
/// Tokens: a fixed `token`, or a `TokenProvider` asked for the first token (before the
/// create or join goes out) and again whenever the server says `tokenWillExpire`; the
/// fresh token goes out as `renewToken`. As the token provider model of the anyRTC / Agora
/// call kits wants it, a refresh that returns the same token or another user is not
/// used, and the old token stays in force until it expires (then the server ends the
/// session with 212, reported as `.authFailed` and `.lineClosed`).
///
/// Callbacks run on the loop thread (`close`'s `.lineClosed` on the caller's). Thread-safe:
/// requests may be sent from any thread; the mutable state is one `Mutex`.
final class LineSession: Sendable {
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
    private let onEnded: @Sendable (LineSession, LiveCode, String) -> Void
    private let state = Mutex(State())

    private struct State {
        /// The connection in use: after a loss, the closed one (it answers requests with
        /// 101) until a reconnect has opened the next. Set once `init` made the first.
        var client: LineClient?
        /// The token in use and whom it names.
        var current: (token: String, uid: String)?
        /// False until the create or join went out; requests made before wait here, in order.
        var opened = false
        var waiting: [@Sendable (LineClient) -> Void] = []
        var opener: Opener?
        var givenToken: String?
        /// Reconnect tries since the line was last open.
        var attempt = 0
        /// A reconnect's create or join waits for its lineResult.
        var reopening = false
        /// No reconnect: the session ended, or the server is about to end it (212).
        var ended = false
        /// `.lineClosed` was reported: nothing more is.
        var finished = false
        /// The last loss was the server shutting down (close 1001).
        var serverWentAway = false
        var retryTimer: TimerHandle?
    }

    /// `onEvent` gets every server event first as the raw `LineEvent` (for the kit's own
    /// bookkeeping); `report` gets the session's own events (reconnects, renewals, auth
    /// failures, the end); `onInterrupted` runs when the connection is lost and a reconnect
    /// is tried (co-hosting ends with it), `onEnded` once when the line ends for this kit,
    /// just before `.lineClosed` is reported.
    init(server: LineServer, heartbeat: Duration = .seconds(5), backoff: ReconnectBackoff = ReconnectBackoff(),
         tokenProvider: TokenProvider? = nil,
         onEvent: @escaping @Sendable (LineEvent) -> Void,
         report: @escaping @Sendable (LineSessionEvent) -> Void,
         onInterrupted: @escaping @Sendable () -> Void = {},
         onEnded: @escaping @Sendable (LineSession, LiveCode, String) -> Void) throws {
        self.server = server
        self.heartbeat = heartbeat
        self.backoff = backoff
        provider = tokenProvider
        self.onEvent = onEvent
        self.report = report
        self.onInterrupted = onInterrupted
        self.onEnded = onEnded
        loop = try EventLoop(name: "liveline-line")
        loop.start()
        let first = makeClient()
        state.withLock { $0.client = first }
        let url = server.signalURL
        first.connect { [weak self] result in
            if case .failure(let error) = result {
                self?.end(code: .networkDisconnected, reason: "connecting to \(url) failed: \(error)")
            }
        }
    }

    /// The connection in use.
    private var client: LineClient { state.withLock { $0.client! } }

    /// Sends the create or join through `opener`, now and again after every reconnect,
    /// with `token` as given or the provider's (a provider that fails is reported as
    /// `.authFailed` and nothing is sent). With tokens the server knows the user by the
    /// token, so the kits send that user id (nil without a token).
    func start(token: String?, reply: @escaping @Sendable (LineEvent) -> Void, _ opener: @escaping Opener) {
        let client = state.withLock { state in
            state.opener = opener
            state.givenToken = token
            return state.client!
        }
        open(on: client, reply: reply)
    }

    /// Runs the opener on `client`, then lets the requests that waited go out.
    private func open(on client: LineClient, reply: (@Sendable (LineEvent) -> Void)?) {
        let (opener, given) = state.withLock { ($0.opener, $0.current?.token ?? $0.givenToken) }
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
            self.lost(client, "the line connection to \(url) closed (\(code) \(reason))", closeCode: code, closeReason: reason)
        }
        return client
    }

    private func received(_ event: LineEvent, on client: LineClient) {
        switch event.event {
        case .tokenWillExpire:
            renew()
        case .tokenExpired:
            // The server closes the session next: that is the end, not a loss to repair.
            state.withLock { $0.ended = true }
        case .lineResult:
            let again = state.withLock { state in
                let again = state.reopening
                state.reopening = false
                if event.liveCode == .ok { state.attempt = 0 }
                return again
            }
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
        guard !state.withLock({ $0.finished }) else { return }
        onEvent(event)
    }

    /// What a close code says about the end: the SDK code when the server ended the
    /// session on purpose (4000 + code; 1008 from a server that names none), nil for a
    /// loss worth a reconnect. Pure.
    static func endCode(closeCode: UInt16) -> LiveCode? {
        let base = LineCloseCode.base
        if closeCode >= base, closeCode < base + 1000 { return LiveCode(rawValue: Int(closeCode - base)) ?? .unknown }
        return closeCode == 1008 ? .unknown : nil
    }

    /// The connection `client` closed without `close()`.
    private func lost(_ client: LineClient, _ reason: String, closeCode: UInt16, closeReason: String) {
        let serverCode = Self.endCode(closeCode: closeCode)
        let current = state.withLock { state -> Bool? in
            guard client === state.client else { return nil }
            state.ended = state.ended || serverCode != nil
            state.serverWentAway = closeCode == 1001
            return state.ended
        }
        guard let over = current else { return }
        if over {
            // The server said why (its reason names it); a token that expired is 212 either way.
            return end(code: serverCode ?? .authTimeout, reason: closeReason.isEmpty ? reason : closeReason)
        }
        onInterrupted()
        retry(after: reason)
    }

    /// The line dropped this kit while its connection is fine (a guest's hoster lost
    /// its connection: lineLeave 101): handled as a lost connection, so the connection
    /// closes and the reconnect tries join again until the hoster has re-created the line
    /// (or end the session with 101 when they run out).
    func interrupt(reason: String) {
        guard let client = state.withLock({ $0.ended ? nil : $0.client }) else { return }
        client.onClose = nil
        client.disconnect()
        onInterrupted()
        retry(after: reason)
    }

    /// Schedules the next reconnect try, or ends the session when the tries ran out.
    private func retry(after reason: String) {
        enum Next { case none, wait(Double, Int), giveUp(Int, Bool) }
        let next: Next = state.withLock { state in
            guard !state.ended else { return .none }
            let tried = state.attempt
            guard let delay = backoff.delay(attempt: tried, unit: Double.random(in: 0...1)) else {
                return .giveUp(tried, state.serverWentAway)
            }
            state.attempt += 1
            return .wait(delay, tried)
        }
        switch next {
        case .none:
            return
        case .giveUp(let tried, let serverWentAway):
            let code: LiveCode = serverWentAway ? .serverError : .networkDisconnected
            let why = serverWentAway ? "the server shut down and did not come back: " : ""
            return end(code: code, reason: "\(why)\(reason); \(tried) reconnect(s) failed")
        case .wait(let delay, let tried):
            report(.reconnecting(times: tried + 1, reason: reason))
            let timer = loop.schedule(after: .milliseconds(Int64(delay * 1000))) { [weak self] in self?.reconnect() }
            state.withLock { $0.retryTimer = timer }
        }
    }

    /// One reconnect try: a fresh connection that, once open, sends the create or join again.
    private func reconnect() {
        guard !state.withLock({ $0.ended }) else { return }
        let fresh = makeClient()
        let url = server.signalURL
        fresh.connect { [weak self] result in
            guard let self else { return }
            switch result {
            case .failure(let error):
                self.retry(after: "connecting to \(url) failed: \(error)")
            case .success:
                let taken = self.state.withLock { state -> Bool in
                    guard !state.ended else { return false }
                    state.client = fresh
                    state.opened = false
                    state.reopening = true
                    return true
                }
                guard taken else {
                    fresh.onClose = nil
                    return fresh.disconnect()
                }
                self.open(on: fresh, reply: nil)
            }
        }
    }

    /// Runs `body` with the client once the create or join went out (at once when it
    /// has): a request made while the first token is fetched would otherwise overtake it.
    func send(_ body: @escaping @Sendable (LineClient) -> Void) {
        let ready: LineClient? = state.withLock { state in
            if state.opened { return state.client! }
            state.waiting.append(body)
            return nil
        }
        if let ready { body(ready) }
    }

    private func flushWaiting() {
        let (queued, client) = state.withLock { state in
            state.opened = true
            defer { state.waiting = [] }
            return (state.waiting, state.client!)
        }
        for body in queued { body(client) }
    }

    /// The token in use (the last one the server took or was sent), nil without tokens.
    var currentToken: String? { state.withLock { $0.current?.token } }

    /// True once the line ended for this kit (`.lineClosed` was reported).
    var isFinished: Bool { state.withLock { $0.finished } }

    /// Sends `token` as the session's new token (renewToken); the answer arrives as
    /// `.tokenRenewed` or `.authFailed`.
    func renew(with token: String) {
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
        state.withLock { state in
            guard let current = state.current else { return nil }
            if issued.token == current.token { return "the token provider returned the token in use" }
            if issued.uid != current.uid { return "the token provider returned a token for \(issued.uid), not \(current.uid)" }
            return nil
        }
    }

    private func use(_ issued: IssuedToken) {
        state.withLock { $0.current = (issued.token, issued.uid) }
    }

    /// A reply handler that reports a non-zero answer as `.refused` to `report`.
    static func refusal(_ report: @escaping @Sendable (LineSessionEvent) -> Void) -> @Sendable (LineEvent) -> Void {
        { reply in
            guard let code = reply.liveCode, code != .ok else { return }
            report(.refused(op: reply.op ?? "?", code: code, message: reply.message ?? code.message))
        }
    }

    /// The line ended for this kit with `code`: no more reconnects or events; `onEnded`
    /// then `.lineClosed` once (a second end says nothing). The connection closes and
    /// the loop stops on a thread of their own. Any thread.
    func end(code: LiveCode, reason: String) {
        guard finish(code: code, reason: reason) else { return }
        // The loop cannot stop itself from inside: the transport ends on a thread of its own.
        Thread.detachNewThread { [self] in shutDownTransport() }
    }

    /// Ends the session as `end(code:reason:)` does (0: a close the kit asked for), closes
    /// the connection and stops the loop before it returns. Not on the loop thread (it joins it).
    func close(code: LiveCode = .ok, reason: String) {
        finish(code: code, reason: reason)
        shutDownTransport()
    }

    /// Marks the session ended and, the first time, runs `onEnded` and reports `.lineClosed`.
    @discardableResult
    func finish(code: LiveCode, reason: String) -> Bool {
        let first = state.withLock { state -> Bool in
            state.ended = true
            state.retryTimer?.cancel()
            state.retryTimer = nil
            defer { state.finished = true }
            return !state.finished
        }
        guard first else { return false }
        onEnded(self, code, reason)
        report(.lineClosed(code: code, reason: reason))
        return true
    }

    /// Closes the connection (a close asked for is no loss to report) and stops the loop.
    private func shutDownTransport() {
        let client = self.client
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
