import Foundation

extension NSCondition {
    /// Waits while `blocked()` holds, at most `timeout`; false when the time ran out first.
    /// The caller holds the lock, as for `wait()`.
    func wait(while blocked: () -> Bool, timeout: Duration) -> Bool {
        let (seconds, attoseconds) = timeout.components
        let deadline = Date(timeIntervalSinceNow: Double(seconds) + Double(attoseconds) / 1e18)
        while blocked() {
            if !wait(until: deadline) { return !blocked() }
        }
        return true
    }
}
