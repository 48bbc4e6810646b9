/// A planar I420 (YUV 4:2:0) picture: the one frame format inside every pipeline.
///
/// The three planes live in one aligned allocation; `stride` is a multiple of 32 so
/// swscale and SIMD loops can read whole vectors. Width and height are even.
/// A frame is owned by one stage at a time (it crosses threads through a queue,
/// never shared), so it carries no lock.
public final class VideoFrame: @unchecked Sendable {
    // @unchecked: the pixels and timing are mutable without a lock, safe because one stage
    // owns a frame at a time and hands it on through a queue (or `FramePool` reuses it
    // only once nobody else holds it).
    public let width: Int
    public let height: Int
    /// Bytes per row of each plane: Y, U, V.
    public let strides: (Int, Int, Int)
    /// Presentation time, in the pipeline's clock.
    public var pts: MediaTime = .zero
    /// Wall-clock capture time in microseconds since the Unix epoch, carried to the
    /// guest in the capture-time SEI (DESIGN.md §2). 0 when unknown.
    public var captureTimeMicros: UInt64 = 0

    let storage: UnsafeMutableRawPointer
    let byteCount: Int
    private let planeOffsets: (Int, Int, Int)

    /// Allocates a frame; width and height are rounded up to even.
    public init(width: Int, height: Int) {
        precondition(width > 0 && height > 0, "frame size must be positive")
        let w = (width + 1) & ~1, h = (height + 1) & ~1
        self.width = w
        self.height = h
        let yStride = VideoFrame.align(w, to: 32)
        let cStride = VideoFrame.align(w / 2, to: 32)
        strides = (yStride, cStride, cStride)
        let ySize = yStride * h, cSize = cStride * (h / 2)
        planeOffsets = (0, ySize, ySize + cSize)
        byteCount = ySize + 2 * cSize
        storage = UnsafeMutableRawPointer.allocate(byteCount: byteCount + 64, alignment: 64)
    }

    deinit { storage.deallocate() }

    static func align(_ value: Int, to alignment: Int) -> Int {
        (value + alignment - 1) / alignment * alignment
    }

    /// Plane 0 (Y), 1 (U) or 2 (V).
    @inline(__always)
    public func plane(_ index: Int) -> UnsafeMutablePointer<UInt8> {
        let offset = index == 0 ? planeOffsets.0 : index == 1 ? planeOffsets.1 : planeOffsets.2
        return (storage + offset).assumingMemoryBound(to: UInt8.self)
    }

    @inline(__always)
    public func stride(_ index: Int) -> Int {
        index == 0 ? strides.0 : index == 1 ? strides.1 : strides.2
    }

    /// Width of plane `index` in samples.
    @inline(__always)
    public func planeWidth(_ index: Int) -> Int { index == 0 ? width : width / 2 }

    /// Height of plane `index` in rows.
    @inline(__always)
    public func planeHeight(_ index: Int) -> Int { index == 0 ? height : height / 2 }

    public var y: UnsafeMutablePointer<UInt8> { plane(0) }
    public var u: UnsafeMutablePointer<UInt8> { plane(1) }
    public var v: UnsafeMutablePointer<UInt8> { plane(2) }

    /// Fills the whole picture with one colour.
    public func fill(_ color: YUVColor) {
        for p in 0..<3 {
            let value = p == 0 ? color.y : p == 1 ? color.u : color.v
            let base = plane(p), s = stride(p), w = planeWidth(p)
            for row in 0..<planeHeight(p) {
                (base + row * s).update(repeating: value, count: w)
            }
        }
    }

    /// Copies pixels and timing from `other`, which must have the same size.
    public func copy(from other: VideoFrame) {
        precondition(other.width == width && other.height == height, "copy between different sizes")
        for p in 0..<3 {
            let src = other.plane(p), dst = plane(p), w = planeWidth(p)
            let ss = other.stride(p), ds = stride(p)
            for row in 0..<planeHeight(p) {
                (dst + row * ds).update(from: src + row * ss, count: w)
            }
        }
        pts = other.pts
        captureTimeMicros = other.captureTimeMicros
    }

    /// The sample at (x, y) of plane `index`, for tests and probes.
    public func sample(plane index: Int, x: Int, y: Int) -> UInt8 {
        plane(index)[y * stride(index) + x]
    }

    /// The colour of the pixel at (x, y) (chroma from its 2x2 block).
    public func pixel(x: Int, y: Int) -> YUVColor {
        YUVColor(y: sample(plane: 0, x: x, y: y),
                 u: sample(plane: 1, x: x / 2, y: y / 2),
                 v: sample(plane: 2, x: x / 2, y: y / 2))
    }
}
