/// The scratch memory of a `BeautyFilter` for one frame size, allocated when the size
/// is first seen and reused for every frame of that size. Capture thread only.
final class BeautyWorkspace {
    /// Half-resolution size: the size of the chroma planes.
    let width: Int
    let height: Int
    /// Box radius in half-resolution samples.
    let radius: Int

    /// Luma averaged over 2x2 blocks: the guide image.
    let guide: UnsafeMutablePointer<UInt8>
    /// Skin membership of each half-resolution sample, 0…`BeautyFilter.membershipUnit`.
    let membership: UnsafeMutablePointer<Int16>
    /// Per-window guided-filter coefficients a' and b', 12-bit fixed point, so their
    /// running sums are exact.
    let coefA: UnsafeMutablePointer<Int32>
    let coefB: UnsafeMutablePointer<Int32>
    /// Their box means with the tone curve folded in: the coefficients A (unsigned Q14)
    /// and B (luma levels in Q6, offset by 2¹⁵) of each sample.
    let meanA: UnsafeMutablePointer<UInt16>
    let meanB: UnsafeMutablePointer<UInt16>
    /// Running column sums, padded by `radius` on each side.
    let columns1: UnsafeMutablePointer<Int32>
    let columns2: UnsafeMutablePointer<Int32>
    /// Window sums along one row (at least width + 2 long).
    let sums1: UnsafeMutablePointer<Int32>
    let sums2: UnsafeMutablePointer<Int32>
    /// Three rows of the mean coefficients interpolated to full width (a ring indexed
    /// by half-resolution row modulo 3) in 16-bit fixed point: the even columns of the
    /// three rows, then the odd ones, `width` each.
    let wideA: UnsafeMutablePointer<UInt16>
    let wideB: UnsafeMutablePointer<UInt16>
    /// Copies of the chroma planes padded by one sample, read by the 3x3 smoothing.
    let paddedU: UnsafeMutablePointer<UInt8>
    let paddedV: UnsafeMutablePointer<UInt8>
    /// Vertical 3-sample sums along one padded chroma row.
    let chromaColumns: UnsafeMutablePointer<Int16>

    init(width: Int, height: Int, radius: Int) {
        self.width = width
        self.height = height
        self.radius = radius
        let n = width * height
        guide = .allocate(capacity: n)
        membership = .allocate(capacity: n)
        chromaColumns = .allocate(capacity: width + 2)
        coefA = .allocate(capacity: n)
        coefB = .allocate(capacity: n)
        meanA = .allocate(capacity: n)
        meanB = .allocate(capacity: n)
        columns1 = .allocate(capacity: width + 2 * radius)
        columns2 = .allocate(capacity: width + 2 * radius)
        sums1 = .allocate(capacity: width + 2)
        sums2 = .allocate(capacity: width + 2)
        wideA = .allocate(capacity: 6 * width)
        wideB = .allocate(capacity: 6 * width)
        paddedU = .allocate(capacity: (width + 2) * (height + 2))
        paddedV = .allocate(capacity: (width + 2) * (height + 2))
    }

    deinit {
        for p in [guide, paddedU, paddedV] { p.deallocate() }
        for p in [wideA, wideB, meanA, meanB] { p.deallocate() }
        for p in [membership, chromaColumns] { p.deallocate() }
        for p in [coefA, coefB, columns1, columns2, sums1, sums2] { p.deallocate() }
    }
}
