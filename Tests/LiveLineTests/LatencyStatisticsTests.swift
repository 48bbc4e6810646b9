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
}
