import LiveCore

/// Draws frames of one size into one rectangle of a canvas by one render mode: the
/// crop or letterbox geometry and the bilinear sample tables are computed once, so
/// drawing a frame allocates nothing.
///
/// LiveMix scales with its own loops on the I420 planes rather than with swscale:
/// a tile is a sub-rectangle of the canvas with a crop of the source, which swscale
/// would need a context per (crop, tile) pair and plane-pointer arithmetic for anyway;
/// the loops here write straight into the canvas, reproduce a flat colour exactly
/// (weights sum to one in fixed point), reduce to a row copy when no scaling is needed,
/// and at the usual 2:1 co-host reduction are an exact 2x2 box filter.
///
/// Confined to the compositing thread.
final class TileScaler {
    let sourceWidth: Int
    let sourceHeight: Int
    /// Where the participant's picture goes (inside any border).
    let target: MixRect
    let mode: RenderMode
    /// The part of the source that is shown.
    let crop: MixRect
    /// Where the shown part lands: `target`, or a centred part of it for aspect-fit.
    let picture: MixRect
    /// The letterbox bars of aspect-fit: `target` minus `picture` (at most two).
    let bars: [MixRect]

    private let luma: PlaneMap
    private let chroma: PlaneMap

    init(sourceWidth: Int, sourceHeight: Int, target: MixRect, mode: RenderMode) {
        self.sourceWidth = sourceWidth
        self.sourceHeight = sourceHeight
        self.target = target
        self.mode = mode
        (crop, picture) = TileScaler.geometry(sourceWidth: sourceWidth, sourceHeight: sourceHeight,
                                              target: target, mode: mode)
        var bars: [MixRect] = []
        if picture.y > target.y { bars.append(MixRect(x: target.x, y: target.y, w: target.w, h: picture.y - target.y)) }
        if picture.maxY < target.maxY {
            bars.append(MixRect(x: target.x, y: picture.maxY, w: target.w, h: target.maxY - picture.maxY))
        }
        if picture.x > target.x { bars.append(MixRect(x: target.x, y: target.y, w: picture.x - target.x, h: target.h)) }
        if picture.maxX < target.maxX {
            bars.append(MixRect(x: picture.maxX, y: target.y, w: target.maxX - picture.maxX, h: target.h))
        }
        self.bars = bars
        luma = PlaneMap(crop: crop, picture: picture, shift: 0)
        chroma = PlaneMap(crop: crop, picture: picture, shift: 1)
    }

    func matches(sourceWidth w: Int, sourceHeight h: Int, target t: MixRect, mode m: RenderMode) -> Bool {
        w == sourceWidth && h == sourceHeight && t == target && m == mode
    }

    /// The shown part of a `sourceWidth` × `sourceHeight` picture and where it lands in
    /// `target`. Aspect-fill crops the centre to the target's shape; aspect-fit shrinks
    /// the whole picture to fit, centred; stretch maps whole onto whole. Sizes round to
    /// the nearest even number (at least 2), offsets down to even.
    static func geometry(sourceWidth sw: Int, sourceHeight sh: Int, target t: MixRect,
                         mode: RenderMode) -> (crop: MixRect, picture: MixRect) {
        let whole = MixRect(x: 0, y: 0, w: sw, h: sh)
        func evenRounded(_ num: Int, _ den: Int, limit: Int) -> Int {
            min(limit, max(2, ((num + den / 2) / den + 1) & ~1))
        }
        // Compare shapes by cross-multiplying: sw/sh against tw/th.
        let sourceWider = sw * t.h > sh * t.w
        switch mode {
        case .stretch:
            return (whole, t)
        case .aspectFill:
            if sourceWider {
                let cw = evenRounded(sh * t.w, t.h, limit: sw)
                return (MixRect(x: even((sw - cw) / 2), y: 0, w: cw, h: sh), t)
            } else {
                let ch = evenRounded(sw * t.h, t.w, limit: sh)
                return (MixRect(x: 0, y: even((sh - ch) / 2), w: sw, h: ch), t)
            }
        case .aspectFit:
            if sourceWider {
                let ph = evenRounded(t.w * sh, sw, limit: t.h)
                return (whole, MixRect(x: t.x, y: t.y + even((t.h - ph) / 2), w: t.w, h: ph))
            } else {
                let pw = evenRounded(t.h * sw, sh, limit: t.w)
                return (whole, MixRect(x: t.x + even((t.w - pw) / 2), y: t.y, w: pw, h: t.h))
            }
        }
    }

    /// Draws `source` (which must be `sourceWidth` × `sourceHeight`) into `canvas`, bars black.
    func draw(_ source: VideoFrame, into canvas: VideoFrame) {
        for bar in bars { canvas.fill(bar, with: .black) }
        for p in 0..<3 {
            let map = p == 0 ? luma : chroma
            map.draw(from: source.plane(p), stride: source.stride(p), into: canvas.plane(p), stride: canvas.stride(p))
        }
    }
}

/// The sample positions of one plane: for each output column and row, the first of
/// the two source samples it blends and the weight (0…255, in 1/256) of the second.
private final class PlaneMap {
    let outX: Int, outY: Int, outW: Int, outH: Int
    let inX: Int, inY: Int
    /// True when the crop and the picture have the same size: rows are copied.
    let isCopy: Bool
    let xIndex: UnsafeMutablePointer<Int32>
    let xWeight: UnsafeMutablePointer<Int32>
    let yIndex: UnsafeMutablePointer<Int32>
    let yWeight: UnsafeMutablePointer<Int32>

    /// `shift` 0 for luma, 1 for the half-size chroma planes.
    init(crop: MixRect, picture: MixRect, shift: Int) {
        outX = picture.x >> shift
        outY = picture.y >> shift
        outW = picture.w >> shift
        outH = picture.h >> shift
        inX = crop.x >> shift
        inY = crop.y >> shift
        let inW = crop.w >> shift, inH = crop.h >> shift
        isCopy = inW == outW && inH == outH
        xIndex = .allocate(capacity: outW)
        xWeight = .allocate(capacity: outW)
        yIndex = .allocate(capacity: outH)
        yWeight = .allocate(capacity: outH)
        PlaneMap.fillTable(index: xIndex, weight: xWeight, outCount: outW, inCount: inW, inOffset: inX)
        PlaneMap.fillTable(index: yIndex, weight: yWeight, outCount: outH, inCount: inH, inOffset: 0)
    }

    deinit {
        xIndex.deallocate()
        xWeight.deallocate()
        yIndex.deallocate()
        yWeight.deallocate()
    }

    /// Centre-aligned mapping: output sample d covers source position
    /// (d + ½)·in/out − ½, clamped to the crop; at the last sample the weight is 0, so
    /// the neighbour read past it (still inside the frame's padded allocation) never counts.
    private static func fillTable(index: UnsafeMutablePointer<Int32>, weight: UnsafeMutablePointer<Int32>,
                                  outCount: Int, inCount: Int, inOffset: Int) {
        for d in 0..<outCount {
            var s = ((2 * d + 1) * inCount * 256) / (2 * outCount) - 128
            s = max(0, min(s, (inCount - 1) * 256))
            index[d] = Int32(inOffset + (s >> 8))
            weight[d] = Int32(s & 255)
        }
    }

    func draw(from src: UnsafeMutablePointer<UInt8>, stride srcStride: Int,
              into dst: UnsafeMutablePointer<UInt8>, stride dstStride: Int) {
        let base = dst + outY * dstStride + outX
        if isCopy {
            let from = src + inY * srcStride + inX
            for row in 0..<outH {
                (base + row * dstStride).update(from: from + row * srcStride, count: outW)
            }
            return
        }
        // Wrapping operators and neighbour pointers keep traps out of the pixel loops in the
        // checked build: samples are 0…255 and weights 0…255, so nothing can overflow.
        let xi = xIndex, xw = xWeight, w = outW
        for row in 0..<outH {
            let fy = yWeight[row]
            let r0 = src + (inY + Int(yIndex[row])) * srcStride, next0 = r0 + 1
            let out = base + row * dstStride
            if fy == 0 {
                for d in 0..<w {
                    let i = Int(xi[d]), fx = xw[d]
                    let a = Int32(r0[i]), b = Int32(next0[i])
                    out[d] = UInt8(truncatingIfNeeded: (a << 8 &+ (b &- a) &* fx &+ 128) >> 8)
                }
            } else {
                let r1 = r0 + srcStride, next1 = r1 + 1
                for d in 0..<w {
                    let i = Int(xi[d]), fx = xw[d]
                    let a = Int32(r0[i]), b = Int32(next0[i])
                    let c = Int32(r1[i]), e = Int32(next1[i])
                    let top = a << 8 &+ (b &- a) &* fx
                    let bottom = c << 8 &+ (e &- c) &* fx
                    out[d] = UInt8(truncatingIfNeeded: (top << 8 &+ (bottom &- top) &* fy &+ 32768) >> 16)
                }
            }
        }
    }
}
