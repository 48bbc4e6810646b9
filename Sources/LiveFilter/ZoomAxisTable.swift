/// Where each output sample of one axis of a `ZoomFilter` reads the source: the two neighbours and the
/// 8-bit weight of the upper one.
struct ZoomAxisTable {
    var lower: [Int32] = []
    var upper: [Int32] = []
    var weight: [Int32] = []

    init() {}

    init(length n: Int, zoom: Double) {
        lower.reserveCapacity(n)
        upper.reserveCapacity(n)
        weight.reserveCapacity(n)
        let start = (Double(n) - Double(n) / zoom) / 2
        for x in 0..<n {
            let position = min(max(start + (Double(x) + 0.5) / zoom - 0.5, 0), Double(n - 1))
            var index = Int(position.rounded(.down))
            var fraction = Int(((position - Double(index)) * 256).rounded())
            if fraction == 256 {
                index += 1
                fraction = 0
            }
            lower.append(Int32(index))
            upper.append(Int32(min(index + 1, n - 1)))
            weight.append(Int32(fraction))
        }
    }
}
