import Foundation

/// Lets a deferred reply's `respond` through once, whichever thread calls it first.
final class HTTPDeferredReplyLatch: @unchecked Sendable {
    // @unchecked: `claimed` is only touched under `lock`.
    private let lock = NSLock()
    private var claimed = false

    func claim() -> Bool {
        lock.lock()
        defer { lock.unlock() }
        if claimed { return false }
        claimed = true
        return true
    }
}
