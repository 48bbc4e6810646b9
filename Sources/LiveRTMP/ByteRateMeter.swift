/// Bytes per second over about the last `window` (a second unless told), from a running
/// byte counter sampled now and then (the publisher's send rate, the player's receive
/// rate). Pure: the caller passes the time.
struct ByteRateMeter {
    /// The span the rate is taken over, in µs (at least this, less one sample's interval).
    let window: UInt64
    private var samples: [(time: UInt64, bytes: UInt64)] = []

    init(windowMicros: UInt64 = 1_000_000) {
        window = windowMicros
    }

    /// Records the counter's value `bytes` at `micros` (monotonic) and returns the rate
    /// since the oldest sample still within the window of now (0 until two samples exist).
    mutating func sample(bytes: UInt64, at micros: UInt64) -> Double {
        samples.append((micros, bytes))
        while samples.count > 2, micros - samples[1].time >= window { samples.removeFirst() }
        guard samples.count > 1, let first = samples.first, micros > first.time else { return 0 }
        return Double(bytes &- first.bytes) / (Double(micros - first.time) / 1e6)
    }
}
