import Synchronization

/// Lets a deferred reply's `respond` through once, whichever thread calls it first.
final class HTTPDeferredReplyLatch: Sendable {
    private let claimed = Atomic<Bool>(false)

    func claim() -> Bool {
        claimed.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
    }
}
