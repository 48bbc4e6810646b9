import LiveCore

/// Digital zoom, the anyRTC SDK's `setCameraZoom:` / `getCameraZoom` (1.0…3.0, default 1.0):
/// the centred crop of size W/zoom × H/zoom is scaled back to W × H with bilinear
/// interpolation.
///
/// Sampling: output sample x (of a plane n samples wide) reads the source at
/// `(n - n/zoom)/2 + (x + 0.5)/zoom - 0.5`, i.e. sample centres map to sample centres,
/// so a zoom of 2 of a picture split into four flat quadrants gives exactly each
/// quadrant's colour at the centres of the output's quadrants. Weights are 8-bit fixed
/// point; zoom 1.0 returns the frame untouched.
///
/// The result goes into a frame of the filter's own pool (the crop cannot be scaled in
/// place). `process` runs on the capture thread only; `zoom` may be set from any
/// thread and applies from the next frame.
public final class ZoomFilter: VideoFilter, @unchecked Sendable {
    // @unchecked: the scratch frames are touched only on the capture thread (`process`); the zoom is in a Mutex.
    /// The zoom factors the anyRTC SDK accepts.
    public static let range: ClosedRange<Double> = 1.0...3.0

    public let name = "zoom"
    private let setting: LockedValue<Double>

    // Capture-thread state, rebuilt only when the frame size or the zoom changes.
    private var pool: FramePool?
    private var configuredZoom = 0.0
    private var luma = (x: ZoomAxisTable(), y: ZoomAxisTable())
    private var chroma = (x: ZoomAxisTable(), y: ZoomAxisTable())
    /// One source row blended vertically, 8.8 fixed point.
    private var blended: [UInt16] = []

    public init(zoom: Double = 1.0) {
        setting = LockedValue(ZoomFilter.clamp(zoom))
    }

    /// The zoom factor in effect, always within 1.0…3.0: values outside are clamped as
    /// the anyRTC SDK's `setCameraZoom:` does (read it back as `getCameraZoom`).
    public var zoom: Double {
        get { setting.load() }
        set { setting.store(ZoomFilter.clamp(newValue)) }
    }

    /// Clamps to 1.0…3.0 (NaN becomes 1.0).
    public static func clamp(_ zoom: Double) -> Double {
        guard !zoom.isNaN else { return 1.0 }
        return min(max(zoom, range.lowerBound), range.upperBound)
    }

    /// Checks a zoom factor typed by a user, for the CLI: throws `invalidParams` naming
    /// `setCameraZoom` when it is not within 1.0…3.0; returns it otherwise.
    public static func validate(_ zoom: Double) throws -> Double {
        guard zoom.isFinite, range.contains(zoom) else {
            throw LiveError(.invalidParams, "setCameraZoom: zoom \(zoom) is outside 1.0…3.0")
        }
        return zoom
    }

    public func process(_ frame: VideoFrame) -> VideoFrame {
        let zoom = setting.load()
        guard zoom > 1.0 else { return frame }
        configure(for: frame, zoom: zoom)
        let out = pool!.acquire()
        blended.withUnsafeMutableBufferPointer { row in
            for p in 0..<3 {
                let tables = p == 0 ? luma : chroma
                ZoomFilter.scale(from: frame.plane(p), sourceStride: frame.stride(p),
                                 to: out.plane(p), stride: out.stride(p),
                                 width: frame.planeWidth(p), height: frame.planeHeight(p),
                                 x: tables.x, y: tables.y, row: row.baseAddress!)
            }
        }
        out.pts = frame.pts
        out.captureTimeMicros = frame.captureTimeMicros
        return out
    }

    /// Frames the output pool has allocated (a steady stream stops growing it).
    var frameAllocations: Int { pool?.allocations ?? 0 }

    private func configure(for frame: VideoFrame, zoom: Double) {
        let sizeChanged = pool.map { $0.width != frame.width || $0.height != frame.height } ?? true
        if sizeChanged {
            pool = FramePool(width: frame.width, height: frame.height, capacity: 4)
            blended = [UInt16](repeating: 0, count: frame.width)
        }
        guard sizeChanged || zoom != configuredZoom else { return }
        configuredZoom = zoom
        luma = (ZoomAxisTable(length: frame.width, zoom: zoom), ZoomAxisTable(length: frame.height, zoom: zoom))
        chroma = (ZoomAxisTable(length: frame.width / 2, zoom: zoom), ZoomAxisTable(length: frame.height / 2, zoom: zoom))
    }

    /// Blends the two source rows vertically over the span the crop reads (a loop that
    /// vectorises), then interpolates horizontally from that row. The result equals the
    /// 2-D bilinear sum `Σ p · wx · wy` rounded once.
    private static func scale(from src: UnsafeMutablePointer<UInt8>, sourceStride ss: Int,
                              to dst: UnsafeMutablePointer<UInt8>, stride ds: Int,
                              width: Int, height: Int, x: ZoomAxisTable, y: ZoomAxisTable,
                              row: UnsafeMutablePointer<UInt16>) {
        x.lower.withUnsafeBufferPointer { xl in
        x.upper.withUnsafeBufferPointer { xu in
        x.weight.withUnsafeBufferPointer { xw in
            let first = Int(xl[0]), last = Int(xu[width - 1])
            for oy in 0..<height {
                let r0 = src + Int(y.lower[oy]) * ss
                let r1 = src + Int(y.upper[oy]) * ss
                let fy = UInt16(truncatingIfNeeded: y.weight[oy]), gy = 256 &- fy
                for sx in first...last {
                    row[sx] = UInt16(r0[sx]) &* gy &+ UInt16(r1[sx]) &* fy
                }
                let d = dst + oy * ds
                for ox in 0..<width {
                    let fx = Int(xw[ox])
                    let sum = Int(row[Int(xl[ox])]) &* (256 &- fx) &+ Int(row[Int(xu[ox])]) &* fx
                    d[ox] = UInt8(truncatingIfNeeded: (sum &+ 32768) >> 16)
                }
            }
        }}}
    }
}
