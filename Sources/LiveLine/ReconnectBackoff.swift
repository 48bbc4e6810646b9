import Foundation

/// When to try again after a lost RTMP connection: exponential backoff with jitter,
/// `base × factor^n` seconds (2 s × 1.5^n by default, DESIGN.md §8), capped, for a
/// bounded number of tries. Pure: the jitter is an argument, so the schedule is tested
/// without clocks or randomness.
public struct ReconnectBackoff: Sendable, Equatable {
    /// Delay before the first retry, in seconds.
    public var baseSeconds: Double
    /// Growth per retry.
    public var factor: Double
    /// No delay exceeds this, jitter included.
    public var capSeconds: Double
    /// Each delay is scaled by a factor in `1 - jitter ... 1 + jitter`, so that many
    /// clients cut off at once by a server restart do not come back in lockstep.
    public var jitter: Double
    /// Retries before giving up (the anyRTC SDK: onRtmpStreamFailed(101) then); 0: never retry.
    public var maxTries: Int

    public init(baseSeconds: Double = 2, factor: Double = 1.5, capSeconds: Double = 30, jitter: Double = 0.2,
                maxTries: Int = 10) {
        self.baseSeconds = baseSeconds
        self.factor = factor
        self.capSeconds = capSeconds
        self.jitter = jitter
        self.maxTries = maxTries
    }

    /// The delay in seconds before retry number `attempt` (0 for the first), or nil when
    /// the tries are used up. `unit` in 0...1 picks the point in the jitter range
    /// (0.5: no jitter).
    public func delay(attempt: Int, unit: Double) -> Double? {
        guard attempt >= 0, attempt < maxTries else { return nil }
        // Past the cap the exponent stops mattering; bounding it keeps pow finite.
        let exponent = Double(min(attempt, 64))
        let nominal = min(capSeconds, baseSeconds * pow(factor, exponent))
        let scale = 1 + jitter * (2 * min(max(unit, 0), 1) - 1)
        return min(capSeconds, max(0, nominal * scale))
    }

    /// The delay with a random jitter.
    public func delay<G: RandomNumberGenerator>(attempt: Int, using generator: inout G) -> Double? {
        delay(attempt: attempt, unit: Double.random(in: 0...1, using: &generator))
    }

    /// The whole schedule with the jitter `units` picks (a list shorter than the tries
    /// repeats its last value; empty means no jitter).
    public func schedule(units: [Double] = []) -> [Double] {
        (0..<maxTries).compactMap { n in delay(attempt: n, unit: units.isEmpty ? 0.5 : units[min(n, units.count - 1)]) }
    }
}
