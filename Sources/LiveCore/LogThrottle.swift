/// Says when something that happens in floods (refused connections, dropped tasks) is
/// worth a log line: the first time at once, then at most one line per interval carrying
/// the count since the last line, so a flood costs one line a second, not one per event.
///
/// Pure value: the owner keeps it under its lock or on its thread, reads the clock, and
/// calls `take` when `dueMicros` comes so the tail of a burst is reported too.
public struct LogThrottle: Sendable {
    public let intervalMicros: UInt64
    private var lastReport: UInt64?
    /// Occurrences not yet reported.
    public private(set) var pending = 0
    /// Occurrences so far.
    public private(set) var total = 0

    public init(intervalMicros: UInt64 = 1_000_000) {
        self.intervalMicros = intervalMicros
    }

    /// One more occurrence at `now` (µs, monotonic): the count to report now, or nil
    /// when its line waits for `dueMicros`.
    public mutating func record(nowMicros now: UInt64) -> Int? {
        total += 1
        pending += 1
        return take(nowMicros: now)
    }

    /// The count waiting, when its line is due at `now`; nil otherwise (nothing waits,
    /// or the last line is less than an interval old).
    public mutating func take(nowMicros now: UInt64) -> Int? {
        guard pending > 0 else { return nil }
        if let last = lastReport, now < last + intervalMicros { return nil }
        lastReport = now
        defer { pending = 0 }
        return pending
    }

    /// When the waiting count may be reported; nil when nothing waits.
    public var dueMicros: UInt64? {
        guard pending > 0 else { return nil }
        return lastReport.map { $0 + intervalMicros } ?? 0
    }
}
