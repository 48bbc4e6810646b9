import LiveCore

/// Digital zoom, the seed's `setCameraZoom:` / `getCameraZoom` (1.0…3.0, default 1.0):
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
    /// The zoom factors the seed accepts.
    public static let range: ClosedRange<Double> = 1.0...3.0

    public let name = "zoom"
    private let setting: LockedValue<Double>

    // Capture-thread state, rebuilt only when the frame size or the zoom changes.
    private var pool: FramePool?
    private var configuredZoom = 0.0
    private var luma = (x: ZoomAxisTable(), y: ZoomAxisTable())
    private var chroma = (x: ZoomAxisTable(), y: ZoomAxisTable())

    public init(zoom: Double = 1.0) {
        setting = LockedValue(ZoomFilter.clamp(zoom))
    }

    /// The zoom factor in effect, always within 1.0…3.0: values outside are clamped as
    /// the seed's `setCameraZoom:` does (read it back as `getCameraZoom`).
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
        for p in 0..<3 {
            let tables = p == 0 ? luma : chroma
            ZoomFilter.scale(from: frame.plane(p), sourceStride: frame.stride(p),
                             to: out.plane(p), stride: out.stride(p),
                             width: frame.planeWidth(p), height: frame.planeHeight(p),
                             x: tables.x, y: tables.y)
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
        }
        guard sizeChanged || zoom != configuredZoom else { return }
        configuredZoom = zoom
        luma = (ZoomAxisTable(length: frame.width, zoom: zoom), ZoomAxisTable(length: frame.height, zoom: zoom))
        chroma = (ZoomAxisTable(length: frame.width / 2, zoom: zoom), ZoomAxisTable(length: frame.height / 2, zoom: zoom))
    }

    private static func scale(from src: UnsafeMutablePointer<UInt8>, sourceStride ss: Int,
                              to dst: UnsafeMutablePointer<UInt8>, stride ds: Int,
                              width: Int, height: Int, x: ZoomAxisTable, y: ZoomAxisTable) {
        x.lower.withUnsafeBufferPointer { xl in
        x.upper.withUnsafeBufferPointer { xu in
        x.weight.withUnsafeBufferPointer { xw in
            for oy in 0..<height {
                let r0 = src + Int(y.lower[oy]) * ss
                let r1 = src + Int(y.upper[oy]) * ss
                let fy = Int(y.weight[oy])
                let d = dst + oy * ds
                for ox in 0..<width {
                    let x0 = Int(xl[ox]), x1 = Int(xu[ox]), fx = Int(xw[ox])
                    let top = Int(r0[x0]) &* (256 &- fx) &+ Int(r0[x1]) &* fx
                    let bottom = Int(r1[x0]) &* (256 &- fx) &+ Int(r1[x1]) &* fx
                    d[ox] = UInt8(truncatingIfNeeded: (top &* (256 &- fy) &+ bottom &* fy &+ 32768) >> 16)
                }
            }
        }}}
    }
}
