import Foundation

/// State that threads share and wait on. Like Synchronization's `Mutex`, the state is
/// reachable only inside `withLock`, so nothing can touch it without the lock; unlike a
/// Mutex, a thread can wait until the state is ready (`withLock(waitingUntil:)`), the
/// one thing `BoundedQueue`, the log writer and the RTMP clients' lifecycles need a
/// condition variable for. Every `withLock` wakes the waiters when it returns.
public final class ConditionLock<State> {
    private let condition = NSCondition()
    private var state: State

    public init(_ state: State) { self.state = state }

    /// Runs `body` on the state with the lock held, then wakes every waiter.
    public func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
        condition.lock()
        defer {
            condition.broadcast()
            condition.unlock()
        }
        return try body(&state)
    }

    /// Waits until `ready` holds for the state, or `timeout` passes (nil: no limit), then
    /// runs `body` with the lock held either way, telling it whether the state is ready.
    /// `ready` is asked with the lock held, before waiting and after each wake-up.
    public func withLock<Result>(waitingUntil ready: (State) -> Bool, timeout: Duration? = nil,
                                 _ body: (inout State, _ isReady: Bool) throws -> Result) rethrows -> Result {
        condition.lock()
        defer {
            condition.broadcast()
            condition.unlock()
        }
        let deadline = timeout.map { timeout in
            let (seconds, attoseconds) = timeout.components
            return Date(timeIntervalSinceNow: Double(seconds) + Double(attoseconds) / 1e18)
        }
        var isReady = ready(state)
        while !isReady {
            if let deadline {
                let woken = condition.wait(until: deadline)
                isReady = ready(state)
                if !woken { break }
            } else {
                condition.wait()
                isReady = ready(state)
            }
        }
        return try body(&state, isReady)
    }
}

// @unchecked: `state` is read and written only inside `withLock`, which holds `condition`.
extension ConditionLock: @unchecked Sendable where State: Sendable {}
