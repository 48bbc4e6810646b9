import Testing
@testable import LiveLine

@Suite("LatencyStatistics")
struct LatencyStatisticsTests {
    @Test("nearest-rank percentiles in milliseconds")
    func percentiles() throws {
        var statistics = LatencyStatistics()
        #expect(statistics.p50p95Ms == nil)
        for ms in 1...100 { statistics.add(micros: Int64(ms) * 1000) }
        let (p50, p95) = try #require(statistics.p50p95Ms)
        #expect(p50 == 50)
        #expect(p95 == 95)
        #expect(statistics.percentileMs(100) == 100)
    }

    @Test("max, and the medians of the first and last tenth show a drift")
    func drift() throws {
        var statistics = LatencyStatistics()
        #expect(statistics.maxMs == nil && statistics.p50Ms(fraction: 0.1, fromEnd: false) == nil)
        // 100 frames whose latency grows from 10 to 109 ms.
        for i in 0..<100 { statistics.add(micros: Int64(10 + i) * 1000) }
        #expect(statistics.maxMs == 109)
        #expect(statistics.p50Ms(fraction: 0.1, fromEnd: false) == 14)
        #expect(statistics.p50Ms(fraction: 0.1, fromEnd: true) == 104)
        // Fewer than ten samples: one sample each end.
        var few = LatencyStatistics()
        few.add(micros: 5000)
        few.add(micros: 7000)
        #expect(few.p50Ms(fraction: 0.1, fromEnd: false) == 5 && few.p50Ms(fraction: 0.1, fromEnd: true) == 7)
    }
}
