import Synchronization

/// A server-wide allowance of bytes that many connections or streams draw from, from
/// any thread without a lock (the relay's budgets for unfinished RTMP messages and for
/// GOP caches). A charge that would pass the limit is refused and counted; the caller
/// then gives up what asked for it (closes the connection, drops the GOP).
public final class ByteBudget: Sendable {
    /// The most bytes all holders together may hold.
    public let limit: Int
    private let used = Atomic<Int>(0)
    private let refusals = Atomic<UInt64>(0)

    public init(limit: Int) {
        self.limit = limit
    }

    /// Bytes charged now.
    public var usedBytes: Int { used.load(ordering: .relaxed) }

    /// Charges refused so far.
    public var refusedCount: UInt64 { refusals.load(ordering: .relaxed) }

    /// Takes `bytes` from the budget; false (and nothing taken) when that would pass the limit.
    public func charge(_ bytes: Int) -> Bool {
        guard bytes > 0 else { return true }
        let after = used.wrappingAdd(bytes, ordering: .relaxed).newValue
        guard after <= limit else {
            used.wrappingSubtract(bytes, ordering: .relaxed)
            refusals.wrappingAdd(1, ordering: .relaxed)
            return false
        }
        return true
    }

    /// Gives back `bytes` charged earlier.
    public func refund(_ bytes: Int) {
        guard bytes > 0 else { return }
        used.wrappingSubtract(bytes, ordering: .relaxed)
    }
}
