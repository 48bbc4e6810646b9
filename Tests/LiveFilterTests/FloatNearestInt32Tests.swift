import Testing
@testable import LiveFilter

@Suite("Float.nearestInt32 (the pixel loops' trap-free rounding)")
struct FloatNearestInt32Tests {
    @Test("nearest integer, ties to even, over the range the loops use")
    func nearest() {
        let cases: [(Float, Int32)] = [(0, 0), (0.4, 0), (0.6, 1), (1.5, 2), (2.5, 2), (254.5, 254), (255, 255),
                                       (-0.6, -1), (-3.7, -4), (4096 * 255, 1_044_480), (4_194_303, 4_194_303)]
        for (value, expected) in cases {
            #expect(value.nearestInt32 == expected, "\(value)")
        }
    }

    @Test("agrees with rounding by Int32(_:) away from ties")
    func matchesChecked() {
        for step in 0..<10_000 {
            let value = Float(step) * 0.37 - 1500.13
            #expect(value.nearestInt32 == Int32(value.rounded(.toNearestOrEven)))
        }
    }
}
