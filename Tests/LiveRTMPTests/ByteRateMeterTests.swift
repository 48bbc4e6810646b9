import Testing
@testable import LiveRTMP

@Suite("ByteRateMeter")
struct ByteRateMeterTests {
    @Test("rate over the last second of samples")
    func rate() {
        var meter = ByteRateMeter()
        #expect(meter.sample(bytes: 0, at: 0) == 0)
        #expect(meter.sample(bytes: 100_000, at: 500_000) == 200_000)
        #expect(meter.sample(bytes: 300_000, at: 1_000_000) == 300_000)
        // 1.5 s: the sample at 0 is more than a second old behind the one at 0.5 s, so it goes.
        #expect(meter.sample(bytes: 300_000, at: 1_500_000) == 200_000)
        // The counter stops: the rate falls to 0 once the window holds only equal values.
        _ = meter.sample(bytes: 300_000, at: 2_000_000)
        #expect(meter.sample(bytes: 300_000, at: 2_600_000) == 0)
    }
}
