import Testing
@testable import LiveRTMP

@Suite("The push's queue measures on a narrow link: the in-flight cap and the queue delay (pure)")
struct PublisherQueueMeasureTests {
    @Test("the in-flight cap is what the link carried in the span, two round trips on a long path, never under the floor")
    func inFlightLimit() {
        // 2.5 Mbit/s (312,500 B/s) for 200 ms: 62,500 bytes.
        #expect(RTMPPublisher.inFlightLimit(milliseconds: 200, throughput: 312_500, minRoundTripMicros: 1_000, minBytes: 16_384) == 62_500)
        // The link narrowed to 1 Mbit/s: a quarter as much waits in the kernel.
        #expect(RTMPPublisher.inFlightLimit(milliseconds: 200, throughput: 125_000, minRoundTripMicros: 1_000, minBytes: 16_384) == 25_000)
        // A 300 ms path: two round trips, or the cap alone would hold the rate down.
        #expect(RTMPPublisher.inFlightLimit(milliseconds: 200, throughput: 125_000, minRoundTripMicros: 300_000, minBytes: 16_384) == 75_000)
        // Nothing carried yet (the start, a stall): the floor.
        #expect(RTMPPublisher.inFlightLimit(milliseconds: 200, throughput: 0, minRoundTripMicros: 0, minBytes: 16_384) == 16_384)
        #expect(RTMPPublisher.inFlightLimit(milliseconds: 200, throughput: .infinity, minRoundTripMicros: 0, minBytes: 16_384) == Int(Int32.max))
    }

    @Test("the queue delay is the backlog over the link's pace once the queue is busy, never less than the media it spans")
    func queueDelay() {
        // 4 Mbit/s fell to 1 Mbit/s (125,000 B/s) under a 2.5 Mbit/s stream: 60 KB wait, the
        // oldest frame is 150 ms old, the newest will wait 480 ms.
        #expect(RTMPPublisher.queueDelay(queuedMilliseconds: 150, bytes: 60_000, recentThroughput: 125_000) == 480)
        // Under the busy level the throughput is the encoder's: the media's span.
        #expect(RTMPPublisher.queueDelay(queuedMilliseconds: 60, bytes: 60_000, recentThroughput: 125_000) == 60)
        // Nothing carried: the span (a stall shows in it soon enough).
        #expect(RTMPPublisher.queueDelay(queuedMilliseconds: 400, bytes: 60_000, recentThroughput: 0) == 400)
        // A link faster than the stream: the span, not less.
        #expect(RTMPPublisher.queueDelay(queuedMilliseconds: 150, bytes: 10_000, recentThroughput: 500_000) == 150)
        // A crawl: at most an hour.
        #expect(RTMPPublisher.queueDelay(queuedMilliseconds: 150, bytes: 8 << 20, recentThroughput: 1) == 3_600_000)
    }
}
