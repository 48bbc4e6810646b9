/// Bytes per second over about the last second, from a running byte counter sampled
/// now and then (the publisher's send rate, the player's receive rate). Pure: the
/// caller passes the time.
struct ByteRateMeter {
    private var samples: [(time: UInt64, bytes: UInt64)] = []

    /// Records the counter's value `bytes` at `micros` (monotonic) and returns the rate
    /// since the oldest sample still within a second of now (0 until two samples exist).
    mutating func sample(bytes: UInt64, at micros: UInt64) -> Double {
        samples.append((micros, bytes))
        while samples.count > 2, micros - samples[1].time >= 1_000_000 { samples.removeFirst() }
        guard samples.count > 1, let first = samples.first, micros > first.time else { return 0 }
        return Double(bytes &- first.bytes) / (Double(micros - first.time) / 1e6)
    }
}
