/// The scratch memory of a `BeautyFilter` for one frame size, allocated when the size
/// is first seen and reused for every frame of that size. Capture thread only.
final class BeautyWorkspace {
    /// Half-resolution size: the size of the chroma planes.
    let width: Int
    let height: Int
    /// Full-resolution width.
    let fullWidth: Int
    /// Box radius in half-resolution samples.
    let radius: Int

    /// Luma averaged over 2x2 blocks: the guide image.
    let guide: UnsafeMutablePointer<UInt8>
    /// How much each half-resolution sample may be smoothed (strength × skin weight), 0…1.
    let weight: UnsafeMutablePointer<Float>
    /// Skin membership of each half-resolution sample, 0…1.
    let membership: UnsafeMutablePointer<Float>
    /// Per-window guided-filter coefficients a' and b', 12-bit fixed point, so their
    /// running sums are exact.
    let coefA: UnsafeMutablePointer<Int32>
    let coefB: UnsafeMutablePointer<Int32>
    /// Their box means (a in 0…1, b in luma levels): the coefficients of each sample.
    let meanA: UnsafeMutablePointer<Float>
    let meanB: UnsafeMutablePointer<Float>
    /// Running column sums, padded by `radius` on each side.
    let columns1: UnsafeMutablePointer<Int32>
    let columns2: UnsafeMutablePointer<Int32>
    /// Window sums along one row (at least width + 2 long).
    let sums1: UnsafeMutablePointer<Int32>
    let sums2: UnsafeMutablePointer<Int32>
    /// Three rows of the mean coefficients interpolated to full width (a ring indexed
    /// by half-resolution row modulo 3).
    let wideA: UnsafeMutablePointer<Float>
    let wideB: UnsafeMutablePointer<Float>
    /// Copies of the chroma planes padded by one sample, read by the 3x3 smoothing.
    let paddedU: UnsafeMutablePointer<UInt8>
    let paddedV: UnsafeMutablePointer<UInt8>

    init(width: Int, height: Int, radius: Int) {
        self.width = width
        self.height = height
        self.radius = radius
        fullWidth = 2 * width
        let n = width * height
        guide = .allocate(capacity: n)
        weight = .allocate(capacity: n)
        membership = .allocate(capacity: n)
        coefA = .allocate(capacity: n)
        coefB = .allocate(capacity: n)
        meanA = .allocate(capacity: n)
        meanB = .allocate(capacity: n)
        columns1 = .allocate(capacity: width + 2 * radius)
        columns2 = .allocate(capacity: width + 2 * radius)
        sums1 = .allocate(capacity: width + 2)
        sums2 = .allocate(capacity: width + 2)
        wideA = .allocate(capacity: 3 * fullWidth)
        wideB = .allocate(capacity: 3 * fullWidth)
        paddedU = .allocate(capacity: (width + 2) * (height + 2))
        paddedV = .allocate(capacity: (width + 2) * (height + 2))
    }

    deinit {
        for p in [guide, paddedU, paddedV] { p.deallocate() }
        for p in [weight, membership, meanA, meanB, wideA, wideB] { p.deallocate() }
        for p in [coefA, coefB, columns1, columns2, sums1, sums2] { p.deallocate() }
    }
}
