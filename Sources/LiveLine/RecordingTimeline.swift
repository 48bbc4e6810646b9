/// Places received packets on a recording's timeline so that the file lasts as long as
/// the play that made it (`liveline guest --record`).
///
/// A relay with a GOP cache (SRS, go-rtmp, `liveline serve`) answers a play with the
/// current GOP: seconds of stream time, from the last keyframe on, arrive in a moment.
/// Timed by the stream's own timestamps, a recording would start that long before the
/// play did (a 4 s run gave a 9.4 s file). The recording still starts at that replayed
/// keyframe: it is the only picture a decoder can start from without waiting up to a
/// whole GOP, so the file never begins late or stays empty on a short run. But while a
/// play is catching up, no packet is placed later than it arrived: the replayed backlog
/// is squeezed into the moment it took to arrive (a quick run through the cached frames,
/// as `GuestLatencyControl` decodes them without showing them). From the first packet
/// that arrives no earlier than its timestamp says, the stream's own timing rules, so
/// network jitter and stalls later on are recorded as they were sent.
///
/// The first packet is at 0. A timestamp that goes back or leaps more than
/// `maxStepMicros` (a new publisher, a reconnect) advances by the time that passed
/// between arrivals instead. Composition offsets (pts − dts) are kept.
///
/// Pure: arrival times come from the caller (`RTMPVideoPacket.receivedMicros`).
public struct RecordingTimeline: Sendable {
    /// A step in stream time larger than this is a discontinuity, not media time.
    public static let maxStepMicros: Int64 = 5_000_000

    private var last: (dts: Int64, arrival: UInt64, out: Int64)?
    /// Arrival time ↔ recording time at the start of the current catch-up.
    private var anchor: (arrival: UInt64, out: Int64)?
    private var catchingUp = true

    public init() {}

    /// A play (re)started: what arrives next may be a replayed backlog again.
    public mutating func playStarted() {
        catchingUp = true
        anchor = nil
    }

    /// The recording's dts and pts (µs) of a packet with stream timestamps `dts`/`pts`
    /// (µs) that arrived at `arrivalMicros` (monotonic). Never earlier than the last one.
    public mutating func place(dts: Int64, pts: Int64, arrivalMicros arrival: UInt64) -> (dts: Int64, pts: Int64) {
        let composition = max(0, pts - dts)
        guard let last else {
            self.last = (dts, arrival, 0)
            anchor = (arrival, 0)
            return (0, composition)
        }
        let elapsed = arrival > last.arrival ? Int64(arrival - last.arrival) : 0
        var step = dts - last.dts
        let discontinuous = step < 0 || step > Self.maxStepMicros
        if discontinuous { step = elapsed }
        var out = last.out + step
        if catchingUp {
            let from = anchor ?? (last.arrival, last.out)
            anchor = from
            let arrived = from.out + (arrival > from.arrival ? Int64(arrival - from.arrival) : 0)
            if out > arrived {
                out = arrived
            } else if !discontinuous {
                // On time by its own timestamp: the backlog is through.
                catchingUp = false
            }
        }
        out = max(out, last.out)
        self.last = (dts, arrival, out)
        return (out, out + composition)
    }

    /// The recording time (µs) of another track's packet at stream time `pts` (µs): the
    /// shift the last placed packet got, so both tracks keep one origin. nil before the
    /// first placed packet.
    public func placeBeside(pts: Int64) -> Int64? {
        guard let last else { return nil }
        return pts + (last.out - last.dts)
    }
}
