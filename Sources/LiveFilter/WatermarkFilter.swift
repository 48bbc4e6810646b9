import LiveCore

/// Draws a logo over the picture, the anyRTC SDK's `setLogoView:` ("only the beauty camera
/// has it").
///
/// The logo is an `RGBAImage` with straight alpha, placed with its top-left corner at
/// (x, y) in luma pixels, both rounded down to even so the logo's 2x2 blocks fall on
/// the frame's chroma samples; whatever lies outside the frame is clipped. The logo is
/// converted once, when it is set, to Y/U/V and alpha planes (BT.601 limited range, as
/// `YUVColor(r:g:b:)`). Blending is exact integer arithmetic:
///
/// - luma, per pixel with the pixel's alpha `a`:
///   `out = (src * (255 - a) + logoY * a + 127) / 255`;
/// - chroma, per 2x2 block with the block alpha `A = (a0 + a1 + a2 + a3 + 2) / 4`
///   (pixels of the block the logo does not cover count as alpha 0), and the block's
///   logo colour `C = (Σ ai * Ci + Σ ai / 2) / Σ ai` (alpha-weighted, so fully transparent
///   pixels lend no colour; 128 when Σ ai = 0):
///   `out = (src * (255 - A) + C * A + 127) / 255`.
///
/// So alpha 0 leaves a sample untouched and alpha 255 replaces it with the logo's.
/// Works in place. `process` runs on the capture thread only; the logo and its position
/// may be changed from any thread (the conversion runs on the caller's thread) and apply
/// from the next frame.
public final class WatermarkFilter: VideoFilter, @unchecked Sendable {
    // @unchecked: `process` runs on the capture thread only; the placed logo is in a Mutex.
    public let name = "watermark"
    private let placed: LockedValue<PlacedLogo?>

    /// - Parameters:
    ///   - image: the logo to draw, nil for none.
    ///   - x, y: its top-left corner in the frame (rounded down to even; may be negative).
    public init(image: RGBAImage? = nil, x: Int = 0, y: Int = 0) {
        placed = LockedValue(image.flatMap { PlacedLogo($0, x: x, y: y) })
    }

    /// Sets (or with nil removes) the logo and where it goes; `setLogoView:`.
    public func setLogo(_ logo: RGBAImage?, x: Int, y: Int) {
        placed.store(logo.flatMap { PlacedLogo($0, x: x, y: y) })
    }

    /// Moves the current logo (rounded down to even).
    public func move(x: Int, y: Int) {
        guard let current = placed.load() else { return }
        placed.store(current.moved(x: x, y: y))
    }

    /// Where the logo's top-left corner is, after even alignment; nil without a logo.
    public var position: (x: Int, y: Int)? {
        placed.load().map { ($0.x, $0.y) }
    }

    public var hasLogo: Bool { placed.load() != nil }

    public func process(_ frame: VideoFrame) -> VideoFrame {
        guard let logo = placed.load() else { return frame }
        // Luma: the visible part of the logo rectangle.
        let x0 = max(0, logo.x), x1 = min(frame.width, logo.x + logo.width)
        let y0 = max(0, logo.y), y1 = min(frame.height, logo.y + logo.height)
        guard x0 < x1, y0 < y1 else { return frame }
        logo.luma.withUnsafeBufferPointer { ly in
        logo.alpha.withUnsafeBufferPointer { la in
            let base = frame.y, s = frame.stride(0)
            for fy in y0..<y1 {
                let row = base + fy * s
                let li = (fy - logo.y) * logo.width - logo.x
                for fx in x0..<x1 {
                    let a = Int(la[li &+ fx])
                    if a == 0 { continue }
                    row[fx] = WatermarkFilter.blend(row[fx], ly[li &+ fx], a)
                }
            }
        }}
        // Chroma: the same rectangle in 2x2 blocks (x and y are even).
        let cx = logo.x / 2, cy = logo.y / 2, cw = logo.chromaWidth
        let bx0 = max(0, cx), bx1 = min(frame.width / 2, cx + cw)
        let by0 = max(0, cy), by1 = min(frame.height / 2, cy + logo.chromaHeight)
        guard bx0 < bx1, by0 < by1 else { return frame }
        logo.u.withUnsafeBufferPointer { lu in
        logo.v.withUnsafeBufferPointer { lv in
        logo.blockAlpha.withUnsafeBufferPointer { la in
            let ub = frame.u, vb = frame.v, us = frame.stride(1), vs = frame.stride(2)
            for by in by0..<by1 {
                let urow = ub + by * us, vrow = vb + by * vs
                let li = (by - cy) * cw - cx
                for bx in bx0..<bx1 {
                    let a = Int(la[li &+ bx])
                    if a == 0 { continue }
                    urow[bx] = WatermarkFilter.blend(urow[bx], lu[li &+ bx], a)
                    vrow[bx] = WatermarkFilter.blend(vrow[bx], lv[li &+ bx], a)
                }
            }
        }}}
        return frame
    }

    /// `(src * (255 - a) + logo * a + 127) / 255`, the documented blend; wrapping
    /// operators (every term is 0…255²) keep the checked build's pixel loop free of traps.
    @inline(__always)
    static func blend(_ src: UInt8, _ logo: UInt8, _ a: Int) -> UInt8 {
        UInt8(truncatingIfNeeded: (Int(src) &* (255 &- a) &+ Int(logo) &* a &+ 127) / 255)
    }
}
