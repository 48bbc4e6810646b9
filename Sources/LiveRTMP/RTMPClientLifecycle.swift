import LiveCore

/// A state an RTMP client (`RTMPPlayer`, `RTMPPublisher`) moves through, with the two
/// it ends in.
protocol RTMPClientState: Equatable, Sendable {
    static var closed: Self { get }
    static var failed: Self { get }
}

extension RTMPClientState {
    /// True for `.closed` and `.failed`: nothing moves the client on from them.
    var hasEnded: Bool { self == .closed || self == .failed }
}

/// The state, failure and figures an RTMP client shares between its loop thread and
/// the threads that read or wait on it, under one condition lock. `Shared` is the
/// client's snapshot of figures; the state lives inside it, at the key path given to
/// `init`.
///
/// The rule both clients keep: the first end, `.failed` (with its error) or `.closed`,
/// is final; later ends and state changes are ignored. `fail(_:)` and `finishClosed()`
/// return true for that first end only, so the client reports it (`onEvent`) exactly
/// once, after the lock is released.
///
/// Every method may be called from any thread.
final class RTMPClientLifecycle<Shared: Sendable, State: RTMPClientState>: Sendable {
    private struct Guarded: Sendable {
        var shared: Shared
        var failure: RTMPClientError?
    }

    private let guarded: ConditionLock<Guarded>
    private let statePath: WritableKeyPath<Shared, State> & Sendable

    init(_ shared: Shared, state: WritableKeyPath<Shared, State> & Sendable) {
        guarded = ConditionLock(Guarded(shared: shared))
        statePath = state
    }

    /// Runs `body` on the shared figures under the lock; `body` must not set the state
    /// (`setState`, `fail` and `finishClosed` do, keeping the rule).
    func withLock<Result>(_ body: (inout Shared) throws -> Result) rethrows -> Result {
        try guarded.withLock { try body(&$0.shared) }
    }

    /// The current state.
    var state: State { withLock { $0[keyPath: statePath] } }

    /// The error the client failed with, if it did.
    var error: RTMPClientError? { guarded.withLock { $0.failure } }

    /// Moves to `state`, one of the states before the end, unless the client has
    /// already ended; wakes the waiters.
    func setState(_ state: State) {
        assert(!state.hasEnded, "the end goes through fail(_:) or finishClosed()")
        let statePath = statePath
        guarded.withLock { guarded in
            if !guarded.shared[keyPath: statePath].hasEnded { guarded.shared[keyPath: statePath] = state }
        }
    }

    /// Ends the client failed with `error`; true when this is its first end.
    func fail(_ error: RTMPClientError) -> Bool {
        end(.failed, error: error)
    }

    /// Ends the client closed; true when this is its first end.
    func finishClosed() -> Bool {
        end(.closed, error: nil)
    }

    /// Waits, at most `timeout`, while `blocked` holds of the state; returns the state and
    /// the failure as they are when it stops waiting.
    func wait(while blocked: (State) -> Bool, timeout: Duration) -> (state: State, failure: RTMPClientError?) {
        let statePath = statePath
        return guarded.withLock(waitingUntil: { !blocked($0.shared[keyPath: statePath]) }, timeout: timeout) { guarded, _ in
            (guarded.shared[keyPath: statePath], guarded.failure)
        }
    }

    /// Waits, at most `timeout`, until the client has ended; false when it has not.
    func waitUntilEnded(timeout: Duration) -> Bool {
        wait(while: { !$0.hasEnded }, timeout: timeout).state.hasEnded
    }

    private func end(_ state: State, error: RTMPClientError?) -> Bool {
        let statePath = statePath
        return guarded.withLock { guarded in
            let first = !guarded.shared[keyPath: statePath].hasEnded
            if first {
                guarded.shared[keyPath: statePath] = state
                guarded.failure = error
            }
            return first
        }
    }
}
