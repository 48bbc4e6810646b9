import Foundation
import LiveAuth
import LiveCore
import LiveNet
import LiveServer

/// A kit's connection to the co-host line: a `LineClient` on an event loop of its own,
/// with the server's events turned into `LineSessionEvent`s and every refused request
/// reported as `.refused` (so no seed return code is lost).
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
    // @unchecked: `client`, `loop`, `provider` and `report` are immutable (LineClient is
    // thread-safe); `current` is touched only while holding `lock`.
    let server: LineServer
    let client: LineClient
    private let loop: EventLoop
    private let provider: TokenProvider?
    private let report: @Sendable (LineSessionEvent) -> Void
    private let lock = NSLock()
    /// The token in use and whom it names.
    private var current: (token: String, uid: String)?
    /// False until the create or join went out; requests made before wait here, in order.
    private var opened = false
    private var waiting: [@Sendable (LineClient) -> Void] = []

    /// `onEvent` gets every server event first as the raw `LineEvent` (for the kit's own
    /// bookkeeping); `report` gets the session's own events (renewals, auth failures).
    init(server: LineServer, heartbeat: Duration = .seconds(5), tokenProvider: TokenProvider? = nil,
         onEvent: @escaping @Sendable (LineEvent) -> Void,
         report: @escaping @Sendable (LineSessionEvent) -> Void,
         onLost: @escaping @Sendable (String) -> Void) throws {
        self.server = server
        provider = tokenProvider
        self.report = report
        loop = try EventLoop(name: "liveline-line")
        loop.start()
        client = LineClient(url: server.signalURL, loop: loop, heartbeatInterval: heartbeat)
        client.onEvent = { [weak self] event in
            if event.event == .tokenWillExpire { self?.renew() }
            onEvent(event)
        }
        let url = server.signalURL
        client.onClose = { code, reason in onLost("the line connection to \(url) closed (\(code) \(reason))") }
        client.connect { result in
            if case .failure(let error) = result { onLost("connecting to \(url) failed: \(error)") }
        }
    }

    /// Runs `request` with the token to send and the user it names: `token` as given,
    /// or the provider's first one (a provider that fails is reported as `.authFailed`
    /// and nothing is sent). With tokens the server knows the user by the token, so the
    /// kits send that user id (nil without a token).
    func withToken(_ token: String?, _ request: @escaping @Sendable (_ token: String?, _ userId: String?) -> Void) {
        guard let provider else {
            let user = token.flatMap(AccessToken.peek)?.sub
            if let token { use(IssuedToken(token: token, uid: user ?? "", expiresAt: 0)) }
            request(token, user)
            return open()
        }
        Task(executorPreference: ProviderExecutor.shared) { [weak self] in
            do {
                let issued = try await provider()
                self?.use(issued)
                request(issued.token, issued.uid)
            } catch {
                self?.report(.authFailed(code: .authFailed, message: "the token provider failed: \(error)"))
            }
            // What waited goes out now (refused with 600 when the line was not opened).
            self?.open()
        }
    }

    /// Runs `body` with the client once the create or join went out (at once when it
    /// has): a request made while the first token is fetched would otherwise overtake it.
    func send(_ body: @escaping @Sendable (LineClient) -> Void) {
        lock.lock()
        if opened {
            lock.unlock()
            return body(client)
        }
        waiting.append(body)
        lock.unlock()
    }

    private func open() {
        lock.lock()
        opened = true
        let queued = waiting
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
