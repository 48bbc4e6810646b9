import Foundation

/// A media timestamp or duration in microseconds.
public struct MediaTime: Comparable, Hashable, Sendable, CustomStringConvertible {
    public var micros: Int64

    public init(micros: Int64) { self.micros = micros }
    public init(seconds: Double) { micros = Int64((seconds * 1_000_000).rounded()) }
    public init(milliseconds: Int64) { micros = milliseconds * 1000 }

    /// The time of frame `index` at `fps` frames per second.
    public init(frame index: Int64, fps: Int) { micros = index * 1_000_000 / Int64(fps) }

    public static let zero = MediaTime(micros: 0)

    public var seconds: Double { Double(micros) / 1_000_000 }
    public var milliseconds: Int64 { micros / 1000 }

    /// The value in units of `num/den` seconds (a stream time base), rounded down.
    public func value(timeBaseNum num: Int32, den: Int32) -> Int64 {
        micros * Int64(den) / (1_000_000 * Int64(num))
    }

    public static func < (a: MediaTime, b: MediaTime) -> Bool { a.micros < b.micros }
    public static func + (a: MediaTime, b: MediaTime) -> MediaTime { MediaTime(micros: a.micros + b.micros) }
    public static func - (a: MediaTime, b: MediaTime) -> MediaTime { MediaTime(micros: a.micros - b.micros) }

    public var description: String { String(format: "%.3fs", seconds) }
}

/// Clocks, injectable so tests can drive time (STYLE.md: go-rtmp's `timeNow`).
public enum Clock {
    /// Wall-clock microseconds since the Unix epoch: the capture-time base that two
    /// processes on one machine share.
    public static func wallMicros() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return UInt64(ts.tv_sec) * 1_000_000 + UInt64(ts.tv_nsec) / 1000
    }

    /// Monotonic microseconds, for pacing and intervals.
    public static func monotonicMicros() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000 + UInt64(ts.tv_nsec) / 1000
    }

    /// Sleeps until the monotonic clock reaches `deadline` (µs).
    public static func sleep(untilMonotonic deadline: UInt64) {
        let now = monotonicMicros()
        guard deadline > now else { return }
        usleep(UInt32(min(deadline - now, 1_000_000)))
    }
}
