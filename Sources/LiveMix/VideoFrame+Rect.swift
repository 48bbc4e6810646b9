import LiveCore

extension VideoFrame {
    /// Paints an even-aligned rectangle one colour.
    func fill(_ r: MixRect, with color: YUVColor) {
        guard r.w > 0, r.h > 0 else { return }
        for p in 0..<3 {
            let value = p == 0 ? color.y : p == 1 ? color.u : color.v
            let shift = p == 0 ? 0 : 1
            let s = stride(p)
            let base = plane(p) + (r.y >> shift) * s + (r.x >> shift)
            let w = r.w >> shift
            for row in 0..<(r.h >> shift) {
                (base + row * s).update(repeating: value, count: w)
            }
        }
    }

    /// Paints the `r.border`-pixel frame just inside `r`.
    func drawBorder(_ r: MixRect, color: YUVColor) {
        let b = r.border
        guard b > 0 else { return }
        fill(MixRect(x: r.x, y: r.y, w: r.w, h: b), with: color)
        fill(MixRect(x: r.x, y: r.maxY - b, w: r.w, h: b), with: color)
        fill(MixRect(x: r.x, y: r.y + b, w: b, h: r.h - 2 * b), with: color)
        fill(MixRect(x: r.maxX - b, y: r.y + b, w: b, h: r.h - 2 * b), with: color)
    }

    /// Copies all of `source` to (x, y) of this frame.
    func paste(_ source: VideoFrame, x: Int, y: Int) {
        for p in 0..<3 {
            let shift = p == 0 ? 0 : 1
            let ds = stride(p), ss = source.stride(p)
            let base = plane(p) + (y >> shift) * ds + (x >> shift)
            let from = source.plane(p)
            let w = source.planeWidth(p)
            for row in 0..<source.planeHeight(p) {
                (base + row * ds).update(from: from + row * ss, count: w)
            }
        }
    }

    /// An I420 copy of an RGBA picture, composited over `background` where it is
    /// translucent (a fill image with alpha shows the flat fill colour through).
    /// Odd sizes round up, repeating the last column or row. Allocates: for set-up only.
    convenience init(rgba image: RGBAImage, background: YUVColor) {
        self.init(width: max(2, image.width), height: max(2, image.height))
        let bg = background.rgb
        let iw = image.width, ih = image.height
        // Straight alpha over the background, in RGB, then BT.601 as YUVColor does.
        func rgb(_ x: Int, _ y: Int) -> (Int, Int, Int) {
            let i = (min(y, ih - 1) * iw + min(x, iw - 1)) * 4
            let a = Int(image.pixels[i + 3])
            func over(_ c: UInt8, _ b: UInt8) -> Int { (Int(c) * a + Int(b) * (255 - a) + 127) / 255 }
            return (over(image.pixels[i], bg.r), over(image.pixels[i + 1], bg.g), over(image.pixels[i + 2], bg.b))
        }
        guard iw > 0, ih > 0 else {
            fill(background)
            return
        }
        let ys = stride(0), cs = stride(1)
        for cy in 0..<(height / 2) {
            for cx in 0..<(width / 2) {
                var sr = 0, sg = 0, sb = 0
                for dy in 0..<2 {
                    for dx in 0..<2 {
                        let (r, g, b) = rgb(2 * cx + dx, 2 * cy + dy)
                        y[(2 * cy + dy) * ys + 2 * cx + dx] = YUVColor(r: UInt8(r), g: UInt8(g), b: UInt8(b)).y
                        sr += r; sg += g; sb += b
                    }
                }
                let c = YUVColor(r: UInt8((sr + 2) / 4), g: UInt8((sg + 2) / 4), b: UInt8((sb + 2) / 4))
                u[cy * cs + cx] = c.u
                v[cy * cs + cx] = c.v
            }
        }
    }
}
