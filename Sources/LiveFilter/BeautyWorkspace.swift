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
    /// How much each half-resolution sample may be smoothed (strength × skin weight), 0…1.
    let weight: UnsafeMutablePointer<Float>
    /// Skin membership of each half-resolution sample, 0…255.
    let membership: UnsafeMutablePointer<UInt8>
    /// Per-window guided-filter coefficients, 12-bit fixed point (a' and b'·256 scale).
    let coefA: UnsafeMutablePointer<Int32>
    let coefB: UnsafeMutablePointer<Int32>
    /// Their box means: the coefficients applied to each pixel.
    let meanA: UnsafeMutablePointer<Int32>
    let meanB: UnsafeMutablePointer<Int32>
    /// Running column sums, padded by `radius` on each side.
    let columns1: UnsafeMutablePointer<Int32>
    let columns2: UnsafeMutablePointer<Int32>
    /// One half-resolution row of vertically interpolated coefficients, padded by one
    /// sample on each side.
    let rowA: UnsafeMutablePointer<Int32>
    let rowB: UnsafeMutablePointer<Int32>
    /// Copies of the chroma planes padded by one sample, read by the 3x3 smoothing.
    let paddedU: UnsafeMutablePointer<UInt8>
    let paddedV: UnsafeMutablePointer<UInt8>

    init(width: Int, height: Int, radius: Int) {
        self.width = width
        self.height = height
        self.radius = radius
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
        rowA = .allocate(capacity: width + 2)
        rowB = .allocate(capacity: width + 2)
        paddedU = .allocate(capacity: (width + 2) * (height + 2))
        paddedV = .allocate(capacity: (width + 2) * (height + 2))
    }

    deinit {
        for p in [guide, membership, paddedU, paddedV] { p.deallocate() }
        weight.deallocate()
        for p in [coefA, coefB, meanA, meanB, columns1, columns2, rowA, rowB] { p.deallocate() }
    }
}
