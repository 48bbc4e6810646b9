import LiveCore

/// Skin smoothing with brightening and a warm, rosy tone, as mobile beauty cameras do:
/// the anyRTC SDK's `ARCameraFilterMode.beautiful` (`setCameraFilter:`), on by default in its
/// beauty camera.
///
/// How it works, all scaled by `strength` (0 returns the frame untouched):
///
/// 1. Luma is smoothed with a guided filter (He, Sun & Tang) guided by itself, whose
///    statistics run at half resolution ("fast guided filter"): the 2x2 mean of luma is
///    the guide, box means of it and of its square over a (2r+1)² window give each
///    window's variance, and each window pulls its pixels toward its mean by
///    `eps / (variance + eps)`: flat, noisy skin is pulled almost all the way, edges
///    (variance ≫ eps) hardly at all. Every box mean is an O(1) running sum.
/// 2. The pull is further scaled by a skin weight taken from chroma (Cb 77…127 and Cr
///    133…173 with soft ramps) and luma (too dark is not skin), so non-skin areas get
///    only `nonSkinSmoothing` of it.
/// 3. The per-window coefficients are box-averaged again and interpolated bilinearly
///    back to full resolution, where each pixel becomes `A·Y + B`.
/// 4. A tone curve (a parabola through black and white, applied as its tangent per
///    half-resolution sample) brightens mid-tones (`brightening`); chroma gets a light
///    3x3 smoothing on skin and a shift toward red (`rosiness`) in proportion to skin
///    membership.
///
/// Statistics are exact integer running sums; the per-window arithmetic at half
/// resolution is `Float`; the full-resolution pass, the skin ramps and the chroma pass
/// run in 16-bit fixed point, eight lanes per SSE2 register (the baseline x86-64 target
/// this builds for), written as plain loops the compiler vectorises. The build is checked
/// (no `-Ounchecked`), so the loops keep traps out of their bodies: wrapping operators,
/// row pointers hoisted out of the loops, and `Float.nearestInt32` instead of the range-checked
/// `Int32(Float)`.
///
/// Works in place. `process` runs on the capture thread only and allocates nothing
/// after the first frame of a size; `strength` may be set from any thread and applies
/// from the next frame.
public final class BeautyFilter: VideoFilter, @unchecked Sendable {
    // @unchecked: the scratch planes are touched only on the capture thread (`process`); the strength is in a Mutex.
    public let name = "beauty"

    /// Variance (in squared luma levels of the half-resolution guide) at which a window
    /// is smoothed half way: below it counts as skin texture and noise, above as detail.
    public static let eps: Float = 300
    /// How much of the smoothing non-skin areas get.
    public static let nonSkinSmoothing: Float = 0.25
    /// The largest mid-tone lift of the tone curve, as a fraction of the luma range.
    public static let brightening = 0.06
    /// Cr raise and Cb drop on full skin at strength 1, in chroma levels.
    public static let rosiness = (cr: 5.0, cb: -2.0)

    private let setting: LockedValue<Double>

    // Capture-thread state.
    private var workspace: BeautyWorkspace?

    /// - Parameter strength: 0 (off) … 1 (strongest).
    public init(strength: Double = 0.7) {
        setting = LockedValue(BeautyFilter.clamp(strength))
    }

    /// How strong the effect is, 0…1 (clamped).
    public var strength: Double {
        get { setting.load() }
        set { setting.store(BeautyFilter.clamp(newValue)) }
    }

    static func clamp(_ strength: Double) -> Double {
        guard !strength.isNaN else { return 0 }
        return min(max(strength, 0), 1)
    }

    /// The box radius at half resolution for a frame: about 1/180 of the shorter side
    /// (4 at 720p, i.e. a 17-pixel window at full resolution).
    static func radius(width: Int, height: Int) -> Int {
        max(1, Int((Double(min(width, height)) / 180).rounded()))
    }

    public func process(_ frame: VideoFrame) -> VideoFrame {
        let strength = setting.load()
        guard strength > 0 else { return frame }
        let ws = configure(for: frame)
        BeautyFilter.makeGuide(frame, ws)
        BeautyFilter.makeMembership(frame, ws)
        // Smoothing weight = base + perMember × membership.
        let base = Float(strength) * BeautyFilter.nonSkinSmoothing
        let perMember = Float(strength) * (1 - BeautyFilter.nonSkinSmoothing)
        BeautyFilter.windowCoefficients(ws, base: base, perMember: perMember)
        // The tone curve f(q) = q + lift·n·(1 - n), n = (q - 16)/219, is a parabola
        // through black and white that lifts mid-grey by `brightening` of the range.
        let lift = Float(strength * BeautyFilter.brightening) * 4 * 219
        BeautyFilter.meanCoefficients(ws, lift: lift)
        BeautyFilter.applyLuma(frame, ws)
        BeautyFilter.applyChroma(frame, ws, plane: 1, shift: Float(strength * BeautyFilter.rosiness.cb),
                                 base: base, perMember: perMember)
        BeautyFilter.applyChroma(frame, ws, plane: 2, shift: Float(strength * BeautyFilter.rosiness.cr),
                                 base: base, perMember: perMember)
        return frame
    }

    private func configure(for frame: VideoFrame) -> BeautyWorkspace {
        let w = frame.width / 2, h = frame.height / 2
        let r = BeautyFilter.radius(width: frame.width, height: frame.height)
        if let ws = workspace, ws.width == w, ws.height == h, ws.radius == r { return ws }
        let ws = BeautyWorkspace(width: w, height: h, radius: r)
        workspace = ws
        return ws
    }

    /// The skin chroma box: Cb and Cr ranges of full membership, each with a linear
    /// ramp `skinSoft` levels wide down to none outside.
    static let skinCb: (low: Int16, high: Int16) = (77, 127)
    static let skinCr: (low: Int16, high: Int16) = (133, 173)
    static let skinSoft: Int16 = 10

    /// Luma below which a pixel is too dark to be lit skin (hair, shadows, background),
    /// and above which the chroma test alone decides; in between membership ramps up.
    static let skinLuma: (low: Int16, high: Int16) = (48, 88)

    /// The guide: luma averaged over each 2x2 block. Each block's two pixels of a row
    /// are read as one 16-bit lane and split by mask and shift, so the loop vectorises.
    private static func makeGuide(_ frame: VideoFrame, _ ws: BeautyWorkspace) {
        let w = ws.width, s = frame.stride(0), y = frame.y
        for j in 0..<ws.height {
            let r0 = UnsafeRawPointer(y + 2 * j * s), r1 = r0 + s
            let out = ws.guide + j * w
            for i in 0..<w {
                let p = r0.loadUnaligned(fromByteOffset: i &* 2, as: UInt16.self)
                let q = r1.loadUnaligned(fromByteOffset: i &* 2, as: UInt16.self)
                let sum = (p & 0xff) &+ (p >> 8) &+ (q & 0xff) &+ (q >> 8)
                out[i] = UInt8(truncatingIfNeeded: (sum &+ 2) >> 2)
            }
        }
    }

    /// Full skin membership in the units `makeMembership` stores: the product of the
    /// three ramps at their tops.
    static let membershipUnit = Int(skinSoft) * Int(skinSoft) * Int(skinLuma.high - skinLuma.low)

    /// Skin membership of each half-resolution sample: chroma ramps × luma ramp, in
    /// units of 1/`membershipUnit`. The ramps are exact small integers (0…soft,
    /// 0…soft, 0…luma span), so the product is computed in 16-bit lanes.
    private static func makeMembership(_ frame: VideoFrame, _ ws: BeautyWorkspace) {
        let soft = skinSoft, lumaSpan = skinLuma.high - skinLuma.low
        let cbFrom = skinCb.low - soft, cbTo = skinCb.high + soft
        let crFrom = skinCr.low - soft, crTo = skinCr.high + soft
        let w = ws.width
        for j in 0..<ws.height {
            let u = frame.u + j * frame.stride(1), v = frame.v + j * frame.stride(2)
            let g = ws.guide + j * w, membership = ws.membership + j * w
            for i in 0..<w {
                let cb = Int16(u[i]), cr = Int16(v[i])
                let rampCb = min(max(min(cb &- cbFrom, cbTo &- cb), 0), soft)
                let rampCr = min(max(min(cr &- crFrom, crTo &- cr), 0), soft)
                let lit = min(max(Int16(g[i]) &- skinLuma.low, 0), lumaSpan)
                membership[i] = rampCb &* rampCr &* lit
            }
        }
    }

    /// Pass 1: box statistics of the guide and the per-window coefficients
    /// a' = 1 - pull, b' = pull · mean, with pull = weight · eps / (variance + eps),
    /// in 12-bit fixed point; weight = base + perMember × skin membership.
    private static func windowCoefficients(_ ws: BeautyWorkspace, base: Float, perMember: Float) {
        let w = ws.width, h = ws.height, r = ws.radius
        let c1 = ws.columns1, c2 = ws.columns2, s1 = ws.sums1, s2 = ws.sums2
        let invN = 1 / Float((2 * r + 1) * (2 * r + 1))
        let eps = BeautyFilter.eps, perUnit = perMember / Float(membershipUnit)
        (c1 + r).update(repeating: 0, count: w)
        (c2 + r).update(repeating: 0, count: w)
        let column1 = c1 + r, column2 = c2 + r
        for k in -r...r {
            let row = ws.guide + min(max(k, 0), h - 1) * w
            for x in 0..<w {
                let g = Int32(row[x])
                column1[x] &+= g
                column2[x] &+= g &* g
            }
        }
        for y in 0..<h {
            boxRow(c1, c2, width: w, radius: r, into: s1, s2)
            let membership = ws.membership + y * w, a = ws.coefA + y * w, b = ws.coefB + y * w
            for x in 0..<w {
                let mean = Float(s1[x]) * invN
                let variance = atLeast(Float(s2[x]) * invN - mean * mean, 0)
                let weight = base + perUnit * Float(membership[x])
                let pull4096 = weight * (eps * 4096) / (variance + eps)
                // 0…4096 and 0…4096·255: inside `nearestInt32`'s range.
                a[x] = (4096 - pull4096).nearestInt32
                b[x] = (pull4096 * mean).nearestInt32
            }
            let add = ws.guide + min(y + r + 1, h - 1) * w, sub = ws.guide + max(y - r, 0) * w
            for x in 0..<w {
                let p = Int32(add[x]), q = Int32(sub[x])
                column1[x] &+= p &- q
                column2[x] &+= (p &- q) &* (p &+ q)
            }
        }
    }

    /// Pass 2: the box means a and b of a' and b', with the tone curve folded in as its
    /// tangent at the sample's smoothed value q0 = a·guide + b:
    /// A = f'(q0)·a, B = f(q0) + f'(q0)·(b - q0), so A·Y + B = f(q0) + f'(q0)·(a·Y + b - q0).
    /// The curve is gentle (its slope changes by at most 2·lift/219 over the video
    /// range), so the tangent is within a level of the curve for pixels up to ~30 levels
    /// from their neighbourhood and saves a per-pixel curve at full resolution.
    /// A and B are stored in 16-bit fixed point (`fixedA`, `fixedB`) for pass 3.
    private static func meanCoefficients(_ ws: BeautyWorkspace, lift: Float) {
        let w = ws.width, h = ws.height, r = ws.radius
        let c1 = ws.columns1, c2 = ws.columns2, s1 = ws.sums1, s2 = ws.sums2
        let scale = 1 / Float((2 * r + 1) * (2 * r + 1) * 4096)
        (c1 + r).update(repeating: 0, count: w)
        (c2 + r).update(repeating: 0, count: w)
        let column1 = c1 + r, column2 = c2 + r
        for k in -r...r {
            let rowA = ws.coefA + min(max(k, 0), h - 1) * w, rowB = ws.coefB + min(max(k, 0), h - 1) * w
            for x in 0..<w {
                column1[x] &+= rowA[x]
                column2[x] &+= rowB[x]
            }
        }
        for y in 0..<h {
            boxRow(c1, c2, width: w, radius: r, into: s1, s2)
            let a = ws.meanA + y * w, b = ws.meanB + y * w, g = ws.guide + y * w
            for x in 0..<w {
                let meanA = Float(s1[x]) * scale, meanB = Float(s2[x]) * scale
                let q0 = meanA * Float(g[x]) + meanB
                // Outside black…white the curve is the identity: clamping n zeroes the
                // lift there, and the slope's extra term is kept only where n was inside.
                let n = (q0 - 16) * (1 / 219)
                let inside = clamp(n, 0, 1)
                let raised = q0 + lift * inside * (1 - inside)
                let slope = 1 + (inside == n ? lift * (1 / 219) - lift * (2 / 219) * n : 0)
                // B = f(q0) + f'(q0)·(b - q0) with b - q0 = -a·guide.
                let coefficient = slope * meanA
                a[x] = fixedA(coefficient)
                b[x] = fixedB(raised - coefficient * Float(g[x]))
            }
            let add = min(y + r + 1, h - 1) * w, sub = max(y - r, 0) * w
            let addA = ws.coefA + add, subA = ws.coefA + sub, addB = ws.coefB + add, subB = ws.coefB + sub
            for x in 0..<w {
                column1[x] &+= addA[x] &- subA[x]
                column2[x] &+= addB[x] &- subB[x]
            }
        }
    }

    /// Horizontal window sums of two rows of column sums (padded by `radius` each side,
    /// the padding filled here by repeating the edge columns).
    @inline(__always)
    private static func boxRow(_ c1: UnsafeMutablePointer<Int32>, _ c2: UnsafeMutablePointer<Int32>,
                               width w: Int, radius r: Int,
                               into s1: UnsafeMutablePointer<Int32>, _ s2: UnsafeMutablePointer<Int32>) {
        c1.update(repeating: c1[r], count: r)
        c2.update(repeating: c2[r], count: r)
        (c1 + r + w).update(repeating: c1[r + w - 1], count: r)
        (c2 + r + w).update(repeating: c2[r + w - 1], count: r)
        var a: Int32 = 0, b: Int32 = 0
        for i in 0...(2 * r) {
            a &+= c1[i]
            b &+= c2[i]
        }
        s1[0] = a
        s2[0] = b
        // Adding the difference keeps one add on each sum's dependency chain.
        let enter1 = c1 + 2 * r, enter2 = c2 + 2 * r, leave1 = c1 - 1, leave2 = c2 - 1
        for x in 1..<max(w, 1) {
            a &+= enter1[x] &- leave1[x]
            b &+= enter2[x] &- leave2[x]
            s1[x] = a
            s2[x] = b
        }
    }

    /// Interpolates half-resolution row `j` of the mean coefficients horizontally to
    /// full width, into ring slot j % 3, as 16-bit fixed point split into even and odd
    /// full-resolution columns: column 2i gets ¼·c[i-1] + ¾·c[i], column 2i+1 gets
    /// ¾·c[i] + ¼·c[i+1] (a full-resolution pixel sits a quarter sample from the
    /// nearest half-resolution centre; the edge samples repeat outward). Lane i of each
    /// row thus covers the pixel pair 2i, 2i+1, so the full-resolution pass needs no
    /// shuffles.
    @inline(__always)
    private static func widen(_ ws: BeautyWorkspace, row j: Int) {
        let w = ws.width, slot = (j % 3) * w
        let a = ws.meanA + j * w, b = ws.meanB + j * w
        let evenA = ws.wideA + slot, oddA = evenA + 3 * w
        let evenB = ws.wideB + slot, oddB = evenB + 3 * w
        evenA[0] = a[0]
        evenB[0] = b[0]
        oddA[w - 1] = a[w - 1]
        oddB[w - 1] = b[w - 1]
        let nextA = a + 1, nextB = b + 1, evenA1 = evenA + 1, evenB1 = evenB + 1
        for i in 0..<(w - 1) {
            let a0 = a[i], a1 = nextA[i], b0 = b[i], b1 = nextB[i]
            oddA[i] = blend(a0, a1)
            evenA1[i] = blend(a1, a0)
            oddB[i] = blend(b0, b1)
            evenB1[i] = blend(b1, b0)
        }
    }

    /// `max(x, low)` written as the comparison `maxps` implements (the standard
    /// library's `max` orders ties and NaN differently and costs a blend per lane).
    @inline(__always)
    private static func atLeast(_ x: Float, _ low: Float) -> Float { x > low ? x : low }

    /// x clamped to low…high, as `maxps` and `minps`.
    @inline(__always)
    private static func clamp(_ x: Float, _ low: Float, _ high: Float) -> Float {
        let y = x > low ? x : low
        return y < high ? y : high
    }

    /// A in unsigned Q14: its product with Y·256 by a high multiply is A·Y in Q6.
    /// A is a mean of 1 - pull (0…1) times the curve's slope (at most 1.24), so it
    /// needs no clamping.
    @inline(__always)
    private static func fixedA(_ a: Float) -> UInt16 {
        UInt16(truncatingIfNeeded: (a * 16384).nearestInt32)
    }

    /// B in Q6, offset by 2¹⁵ so it averages as an unsigned number. B = f(q0) - A·guide
    /// lies within -316…269 levels, inside the ±511 this holds, so it needs no clamping.
    @inline(__always)
    private static func fixedB(_ b: Float) -> UInt16 {
        UInt16(truncatingIfNeeded: (b * 64 + 32768).nearestInt32)
    }


    /// The rounded mean ¾·near + ¼·far of two 16-bit values, as two rounded halvings
    /// (the compiler turns each into one `pavgw`).
    @inline(__always)
    private static func blend(_ near: UInt16, _ far: UInt16) -> UInt16 {
        let half = (UInt32(near) &+ UInt32(far) &+ 1) >> 1
        return UInt16(truncatingIfNeeded: (UInt32(near) &+ half &+ 1) >> 1)
    }

    /// Pass 3: each full-resolution pixel becomes A·Y + B (rounded, clamped), with A
    /// and B interpolated bilinearly from the half-resolution coefficients: the widened
    /// rows are blended ¾ : ¼ with the row above (even rows) or below (odd rows), all in
    /// 16-bit fixed point, a pixel pair per lane.
    private static func applyLuma(_ frame: VideoFrame, _ ws: BeautyWorkspace) {
        let w = ws.width, h = ws.height, s = frame.stride(0)
        widen(ws, row: 0)
        if h > 1 { widen(ws, row: 1) }
        for j in 0..<h {
            if j >= 1 && j + 1 < h { widen(ws, row: j + 1) }
            let near = (j % 3) * w
            for half in 0..<2 {
                let far = (half == 0 ? max(j - 1, 0) : min(j + 1, h - 1)) % 3 * w
                let pixels = UnsafeMutableRawPointer(frame.y + (2 * j + half) * s)
                let nearEvenA = ws.wideA + near, nearOddA = nearEvenA + 3 * w
                let farEvenA = ws.wideA + far, farOddA = farEvenA + 3 * w
                let nearEvenB = ws.wideB + near, nearOddB = nearEvenB + 3 * w
                let farEvenB = ws.wideB + far, farOddB = farEvenB + 3 * w
                for i in 0..<w {
                    let pair = pixels.loadUnaligned(fromByteOffset: i &* 2, as: UInt16.self)
                    let evenA = blend(nearEvenA[i], farEvenA[i]), oddA = blend(nearOddA[i], farOddA[i])
                    let evenB = Int16(bitPattern: blend(nearEvenB[i], farEvenB[i]) ^ 0x8000)
                    let oddB = Int16(bitPattern: blend(nearOddB[i], farOddB[i]) ^ 0x8000)
                    // (Y·256 · A·2¹⁴) >> 16 = A·Y in Q6.
                    let evenY = UInt32(pair << 8), oddY = UInt32(pair & 0xff00)
                    let even = Int16(truncatingIfNeeded: (evenY &* UInt32(evenA)) >> 16) &+ evenB
                    let odd = Int16(truncatingIfNeeded: (oddY &* UInt32(oddA)) >> 16) &+ oddB
                    let low = UInt16(truncatingIfNeeded: min(max((even &+ 32) >> 6, 0), 255))
                    let high = UInt16(truncatingIfNeeded: min(max((odd &+ 32) >> 6, 0), 255))
                    pixels.storeBytes(of: low | high << 8, toByteOffset: i &* 2, as: UInt16.self)
                }
            }
        }
    }

    /// Chroma plane 1 (Cb) or 2 (Cr): a 3x3 mean blended in by half the smoothing
    /// weight, then `shift` levels in proportion to skin membership. In 16-bit fixed
    /// point: value·8 = c·8 + (sum₉ - 9c)·8 · weight/18 + membership · shift·8, each
    /// product a high multiply (`pmulhw`, `pmulhuw`).
    private static func applyChroma(_ frame: VideoFrame, _ ws: BeautyWorkspace, plane: Int, shift: Float,
                                    base: Float, perMember: Float) {
        let w = ws.width, h = ws.height, pw = w + 2
        let padded = plane == 1 ? ws.paddedU : ws.paddedV
        let src = frame.plane(plane), s = frame.stride(plane)
        for j in -1...h {
            let row = src + min(max(j, 0), h - 1) * s
            let out = padded + (j + 1) * pw
            (out + 1).update(from: row, count: w)
            out[0] = row[0]
            out[w + 1] = row[w - 1]
        }
        let unit = Float(membershipUnit)
        // weight/18 in Q16 = mixBase + membership · mixPer >> 16.
        let mixBase = Int16(base * (0.5 / 9 * 65536) + 0.5)
        // (16-bit factors, so the products are 16-bit high multiplies.)
        let mixPer = UInt16(perMember * (0.5 / 9 * 65536) / unit * 65536 + 0.5)
        // membership · rosy >> 16 = membership fraction · shift in Q3.
        let rosy = Int16((shift * 8 / unit * 65536).rounded())
        let columns = ws.chromaColumns
        for j in 0..<h {
            let r0 = padded + j * pw, r1 = r0 + pw, r2 = r1 + pw
            for x in 0..<pw {
                columns[x] = Int16(r0[x]) &+ Int16(r1[x]) &+ Int16(r2[x])
            }
            let membership = ws.membership + j * w
            let dst = src + j * s
            let centre = r1 + 1, columns1 = columns + 1, columns2 = columns + 2
            for i in 0..<w {
                let m = membership[i]
                let mix = mixBase &+ Int16(truncatingIfNeeded: (UInt32(UInt16(bitPattern: m)) &* UInt32(mixPer)) >> 16)
                let c = Int16(centre[i])
                let sum = columns[i] &+ columns1[i] &+ columns2[i]
                let difference = Int32((sum &- 9 &* c) &<< 3)
                let smooth = Int16(truncatingIfNeeded: (difference &* Int32(mix)) >> 16)
                let tint = Int16(truncatingIfNeeded: (Int32(m) &* Int32(rosy)) >> 16)
                let value = ((c &<< 3) &+ smooth &+ tint &+ 4) >> 3
                dst[i] = UInt8(truncatingIfNeeded: min(max(value, 0), 255))
            }
        }
    }
}
