extension Float {
    /// The nearest integer (ties to even), for |self| < 2²² only, without a trap: adding
    /// 1.5·2²³ leaves the integer in the low bits of the sum's pattern. `Int32(x)` checks
    /// its range and NaN, which keeps a pixel loop scalar in the checked build; the pixel
    /// loops' values are bounded well inside the range.
    @inline(__always)
    var nearestInt32: Int32 {
        Int32(bitPattern: (self + 12_582_912).bitPattern) &- 0x4B40_0000
    }
}
