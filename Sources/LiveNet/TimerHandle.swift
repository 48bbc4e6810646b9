import Foundation

/// A timer scheduled with `EventLoop.schedule(after:_:)`. Cancelling is safe from any
/// thread; a timer cancelled before it fires never runs, and its closure is released at
/// once so whatever it captured is freed.
public final class TimerHandle: @unchecked Sendable {
    // @unchecked: `task` and `cancelled` are only touched under `lock`.
    private let lock = NSLock()
    private var task: (@Sendable () -> Void)?
    private var cancelled = false

    init(_ task: @escaping @Sendable () -> Void) {
        self.task = task
    }

    /// Stops the timer if it has not fired yet.
    public func cancel() {
        lock.lock()
        cancelled = true
        task = nil
        lock.unlock()
    }

    /// True once `cancel()` was called.
    public var isCancelled: Bool {
        lock.lock()
        defer { lock.unlock() }
        return cancelled
    }

    /// Takes the closure out for the loop to run; nil when cancelled (or fired).
    func take() -> (@Sendable () -> Void)? {
        lock.lock()
        defer { lock.unlock() }
        let taken = task
        task = nil
        return taken
    }
}
