import Synchronization

/// A timer scheduled with `EventLoop.schedule(after:_:)`. Cancelling is safe from any
/// thread; a timer cancelled before it fires never runs, and its closure is released at
/// once so whatever it captured is freed.
public final class TimerHandle: Sendable {
    private struct State {
        var task: (@Sendable () -> Void)?
        var cancelled = false
    }

    private let state: Mutex<State>

    init(_ task: @escaping @Sendable () -> Void) {
        state = Mutex(State(task: task))
    }

    /// Stops the timer if it has not fired yet.
    public func cancel() {
        state.withLock {
            $0.cancelled = true
            $0.task = nil
        }
    }

    /// True once `cancel()` was called.
    public var isCancelled: Bool { state.withLock { $0.cancelled } }

    /// Takes the closure out for the loop to run; nil when cancelled (or fired).
    func take() -> (@Sendable () -> Void)? {
        state.withLock { state in
            let taken = state.task
            state.task = nil
            return taken
        }
    }
}
