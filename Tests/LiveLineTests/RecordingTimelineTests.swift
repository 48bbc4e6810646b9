import Testing
@testable import LiveLine

@Suite("RecordingTimeline: a recording lasts as long as the play")
struct RecordingTimelineTests {
    /// Places packets of 30 fps (dts `first`, `first`+1 … frames) arriving at `arrivals` (µs).
    func place(_ timeline: inout RecordingTimeline, frames: Range<Int64>, arrivals: (Int64) -> UInt64,
               composition: Int64 = 0) -> [Int64] {
        frames.map { frame in
            let dts = frame * 33_333
            return timeline.place(dts: dts, pts: dts + composition, arrivalMicros: arrivals(frame)).dts
        }
    }

    @Test("a replayed GOP of 5 s arriving in 50 ms, then 4 s live: the recording lasts ~4 s, not 9")
    func replayedGOPIsSqueezed() {
        var timeline = RecordingTimeline()
        let start: UInt64 = 1_000_000_000
        // Frames 0…149 are the cache (arrived within 50 ms); 150… arrive live, one per 33.3 ms.
        let cached = place(&timeline, frames: 0..<150, arrivals: { start + UInt64($0) * 333 })
        #expect(cached.first == 0)
        #expect(cached.last! <= 50_000)
        #expect(zip(cached, cached.dropFirst()).allSatisfy { $0 <= $1 })
        let live = place(&timeline, frames: 150..<270, arrivals: { start + 50_000 + UInt64($0 - 149) * 33_333 })
        let duration = Double(live.last!) / 1e6
        #expect(duration > 3.9 && duration < 4.2, "\(duration) s")
        // Live packets keep the stream's spacing.
        #expect(zip(live, live.dropFirst()).allSatisfy { $1 - $0 == 33_333 })
    }

    @Test("a play without a cache (nginx-rtmp) keeps the stream's timing, composition offsets included")
    func liveStreamUntouched() {
        var timeline = RecordingTimeline()
        let placed = (0..<90).map { (frame: Int64) in
            let dts = 40_000_000 + frame * 33_333
            // Arrivals jitter by up to ±5 ms around real time.
            let arrival = UInt64(7_000_000 + frame * 33_333 + (frame % 3 - 1) * 5_000)
            return timeline.place(dts: dts, pts: dts + 66_666, arrivalMicros: arrival)
        }
        #expect(placed.first! == (0, 66_666))
        for (index, (dts, pts)) in placed.enumerated() {
            // At most the first packet's jitter is squeezed out.
            #expect(abs(dts - Int64(index) * 33_333) <= 5_000, "frame \(index): \(dts)")
            #expect(pts - dts == 66_666)
        }
    }

    @Test("after the catch-up, a stall and its burst keep the stream's timing")
    func laterStallNotSqueezed() {
        var timeline = RecordingTimeline()
        _ = place(&timeline, frames: 0..<30, arrivals: { UInt64($0) * 33_333 })
        // Frames 30…59 held up for a second, then all arrive at once.
        let burst = place(&timeline, frames: 30..<60, arrivals: { _ in 2_000_000 })
        #expect(burst == (30..<60).map { $0 * 33_333 })
    }

    @Test("timestamps that go back (a new publisher) or leap advance by the time between arrivals")
    func discontinuities() {
        var timeline = RecordingTimeline()
        _ = place(&timeline, frames: 0..<30, arrivals: { UInt64($0) * 33_333 })
        let last = timeline.place(dts: 29 * 33_333, pts: 29 * 33_333, arrivalMicros: 29 * 33_333).dts
        // The next publisher starts again at 0, half a second later.
        let back = timeline.place(dts: 0, pts: 0, arrivalMicros: 29 * 33_333 + 500_000).dts
        #expect(back == last + 500_000)
        let leap = timeline.place(dts: 3_600_000_000, pts: 3_600_000_000, arrivalMicros: 29 * 33_333 + 533_333).dts
        #expect(leap == back + 33_333)
    }

    @Test("a reconnect's replayed GOP is squeezed again; the outage counts as the time it took")
    func reconnectReplay() {
        var timeline = RecordingTimeline()
        let first = place(&timeline, frames: 0..<60, arrivals: { UInt64($0) * 33_333 })
        // Two seconds without packets; the relay then replays frames 40…89 within 20 ms.
        timeline.playStarted()
        let reconnectAt: UInt64 = 59 * 33_333 + 2_000_000
        let replay = place(&timeline, frames: 40..<90, arrivals: { reconnectAt + UInt64($0 - 40) * 400 })
        #expect(replay.first! == first.last! + 2_000_000)
        #expect(replay.last! <= first.last! + 2_000_000 + 20_000)
        let live = place(&timeline, frames: 90..<120, arrivals: { reconnectAt + 20_000 + UInt64($0 - 89) * 33_333 })
        #expect(zip(live, live.dropFirst()).allSatisfy { $1 - $0 == 33_333 })
    }
}
