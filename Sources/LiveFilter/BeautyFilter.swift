import LiveCore

/// Skin smoothing with brightening and a warm, rosy tone, as mobile beauty cameras do:
/// the seed's `ARCameraFilterMode.beautiful` (`setCameraFilter:`), on by default in its
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
///    back to full resolution, where each pixel becomes `A·Y + B` (fixed point).
/// 4. A tone curve brightens mid-tones (`brightening`), chroma gets a light 3x3
///    smoothing on skin and a shift toward red (`rosiness`) on skin.
///
/// Works in place. `process` runs on the capture thread only and allocates nothing
/// after the first frame of a size; `strength` may be set from any thread and applies
/// from the next frame.
public final class BeautyFilter: VideoFilter, @unchecked Sendable {
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
    private var toneStrength = -1.0
    private var toneCurve = [UInt8](repeating: 0, count: 256)
    private var crShift: Int32 = 0
    private var cbShift: Int32 = 0

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
        let ws = configure(for: frame, strength: strength)
        BeautyFilter.makeGuide(frame, ws)
        BeautyFilter.makeWeights(frame, ws, strength: Float(strength))
        BeautyFilter.windowCoefficients(ws)
        BeautyFilter.meanCoefficients(ws)
        toneCurve.withUnsafeBufferPointer { BeautyFilter.applyLuma(frame, ws, curve: $0.baseAddress!) }
        BeautyFilter.applyChroma(frame, ws, cbShift: cbShift, crShift: crShift)
        return frame
    }

    private func configure(for frame: VideoFrame, strength: Double) -> BeautyWorkspace {
        let w = frame.width / 2, h = frame.height / 2
        let r = BeautyFilter.radius(width: frame.width, height: frame.height)
        if workspace == nil || workspace!.width != w || workspace!.height != h || workspace!.radius != r {
            workspace = BeautyWorkspace(width: w, height: h, radius: r)
        }
        if strength != toneStrength {
            toneStrength = strength
            // A parabola through the ends of the video range lifts mid-tones most and
            // keeps black and white where they are.
            let lift = strength * BeautyFilter.brightening * 4 * 219
            for v in 0..<256 {
                let n = min(max(Double(v - 16) / 219, 0), 1)
                toneCurve[v] = UInt8(min(255, (Double(v) + lift * n * (1 - n)).rounded()))
            }
            // Q8 shifts, applied in proportion to the skin weight.
            crShift = Int32((strength * BeautyFilter.rosiness.cr * 256).rounded())
            cbShift = Int32((strength * BeautyFilter.rosiness.cb * 256).rounded())
        }
        return workspace!
    }

    /// Skin membership 0…255 indexed by `Cb << 8 | Cr`.
    static let skinTable: [UInt8] = {
        func ramp(_ value: Int, _ low: Int, _ high: Int, soft: Int) -> Double {
            if value < low { return max(0, 1 - Double(low - value) / Double(soft)) }
            if value > high { return max(0, 1 - Double(value - high) / Double(soft)) }
            return 1
        }
        var table = [UInt8](repeating: 0, count: 65536)
        for cb in 0..<256 {
            for cr in 0..<256 {
                let m = ramp(cb, 77, 127, soft: 10) * ramp(cr, 133, 173, soft: 10)
                table[cb << 8 | cr] = UInt8((m * 255).rounded())
            }
        }
        return table
    }()

    /// The guide: luma averaged over each 2x2 block.
    private static func makeGuide(_ frame: VideoFrame, _ ws: BeautyWorkspace) {
        let w = ws.width, s = frame.stride(0), y = frame.y
        for j in 0..<ws.height {
            let r0 = y + 2 * j * s, r1 = r0 + s
            let out = ws.guide + j * w
            for i in 0..<w {
                let sum = UInt16(r0[2 * i]) &+ UInt16(r0[2 * i + 1]) &+ UInt16(r1[2 * i]) &+ UInt16(r1[2 * i + 1])
                out[i] = UInt8(truncatingIfNeeded: (sum &+ 2) >> 2)
            }
        }
    }

    /// Luma below which a pixel is too dark to be lit skin (hair, shadows, background),
    /// and above which the chroma test alone decides; in between membership ramps up.
    static let skinLuma = (low: 48, high: 88)

    /// Skin membership 0…255 indexed by `Cb << 8 | Cr` of the sample and by its guide luma.
    static func skinMembership(_ skin: UnsafePointer<UInt8>, cb: UInt8, cr: UInt8, luma: UInt8) -> Int32 {
        let m = Int32(skin[Int(cb) << 8 | Int(cr)])
        let l = min(max(Int32(luma) - Int32(skinLuma.low), 0), Int32(skinLuma.high - skinLuma.low))
        return m * l / Int32(skinLuma.high - skinLuma.low)
    }

    /// How much each half-resolution sample may be smoothed: strength × (skin weight,
    /// with a floor of `nonSkinSmoothing` elsewhere).
    private static func makeWeights(_ frame: VideoFrame, _ ws: BeautyWorkspace, strength: Float) {
        let floor = nonSkinSmoothing
        let perLevel = strength * (1 - floor) / 255, base = strength * floor
        skinTable.withUnsafeBufferPointer { skin in
            let skin = skin.baseAddress!
            for j in 0..<ws.height {
                let u = frame.u + j * frame.stride(1), v = frame.v + j * frame.stride(2)
                let out = ws.weight + j * ws.width, g = ws.guide + j * ws.width
                let membership = ws.membership + j * ws.width
                for i in 0..<ws.width {
                    let m = skinMembership(skin, cb: u[i], cr: v[i], luma: g[i])
                    membership[i] = UInt8(truncatingIfNeeded: m)
                    out[i] = base + perLevel * Float(m)
                }
            }
        }
    }

    /// Pass 1: box statistics of the guide and the per-window coefficients
    /// a' = 1 - pull, b' = pull · mean, with pull = weight · eps / (variance + eps),
    /// in 12-bit fixed point.
    private static func windowCoefficients(_ ws: BeautyWorkspace) {
        let w = ws.width, h = ws.height, r = ws.radius
        let c1 = ws.columns1, c2 = ws.columns2
        let invN = 1 / Float((2 * r + 1) * (2 * r + 1))
        let eps = BeautyFilter.eps
        (c1 + r).update(repeating: 0, count: w)
        (c2 + r).update(repeating: 0, count: w)
        for k in -r...r {
            let row = ws.guide + min(max(k, 0), h - 1) * w
            for x in 0..<w {
                let g = Int32(row[x])
                c1[r + x] &+= g
                c2[r + x] &+= g &* g
            }
        }
        for y in 0..<h {
            c1.update(repeating: c1[r], count: r)
            c2.update(repeating: c2[r], count: r)
            (c1 + r + w).update(repeating: c1[r + w - 1], count: r)
            (c2 + r + w).update(repeating: c2[r + w - 1], count: r)
            var s1: Int32 = 0, s2: Int32 = 0
            for i in 0..<(2 * r) {
                s1 &+= c1[i]
                s2 &+= c2[i]
            }
            let weight = ws.weight + y * w, a = ws.coefA + y * w, b = ws.coefB + y * w
            for x in 0..<w {
                s1 &+= c1[x + 2 * r]
                s2 &+= c2[x + 2 * r]
                let mean = Float(s1) * invN
                let variance = max(Float(s2) * invN - mean * mean, 0)
                let pull = weight[x] * eps / (variance + eps)
                a[x] = Int32(4096 - pull * 4096 + 0.5)
                b[x] = Int32(pull * mean * 4096 + 0.5)
                s1 &-= c1[x]
                s2 &-= c2[x]
            }
            let add = ws.guide + min(y + r + 1, h - 1) * w, sub = ws.guide + max(y - r, 0) * w
            for x in 0..<w {
                let p = Int32(add[x]), q = Int32(sub[x])
                c1[r + x] &+= p &- q
                c2[r + x] &+= p &* p &- q &* q
            }
        }
    }

    /// Pass 2: the box means of a' and b' (still 12-bit fixed point).
    private static func meanCoefficients(_ ws: BeautyWorkspace) {
        let w = ws.width, h = ws.height, r = ws.radius
        let c1 = ws.columns1, c2 = ws.columns2
        let count = (2 * r + 1) * (2 * r + 1)
        let reciprocal = ((1 << 24) + count / 2) / count
        (c1 + r).update(repeating: 0, count: w)
        (c2 + r).update(repeating: 0, count: w)
        for k in -r...r {
            let row = min(max(k, 0), h - 1) * w
            for x in 0..<w {
                c1[r + x] &+= ws.coefA[row + x]
                c2[r + x] &+= ws.coefB[row + x]
            }
        }
        for y in 0..<h {
            c1.update(repeating: c1[r], count: r)
            c2.update(repeating: c2[r], count: r)
            (c1 + r + w).update(repeating: c1[r + w - 1], count: r)
            (c2 + r + w).update(repeating: c2[r + w - 1], count: r)
            var s1 = 0, s2 = 0
            for i in 0..<(2 * r) {
                s1 &+= Int(c1[i])
                s2 &+= Int(c2[i])
            }
            let a = ws.meanA + y * w, b = ws.meanB + y * w
            for x in 0..<w {
                s1 &+= Int(c1[x + 2 * r])
                s2 &+= Int(c2[x + 2 * r])
                a[x] = Int32(truncatingIfNeeded: (s1 &* reciprocal &+ (1 << 23)) >> 24)
                b[x] = Int32(truncatingIfNeeded: (s2 &* reciprocal &+ (1 << 23)) >> 24)
                s1 &-= Int(c1[x])
                s2 &-= Int(c2[x])
            }
            let add = min(y + r + 1, h - 1) * w, sub = max(y - r, 0) * w
            for x in 0..<w {
                c1[r + x] &+= ws.coefA[add + x] &- ws.coefA[sub + x]
                c2[r + x] &+= ws.coefB[add + x] &- ws.coefB[sub + x]
            }
        }
    }

    /// Pass 3: each full-resolution pixel becomes tone(A·Y + B), with A and B
    /// interpolated bilinearly from the half-resolution means (weights 1/4 and 3/4 in
    /// each direction, since a full-resolution pixel sits a quarter sample away from
    /// the nearest half-resolution centre).
    private static func applyLuma(_ frame: VideoFrame, _ ws: BeautyWorkspace, curve: UnsafePointer<UInt8>) {
        let w = ws.width, h = ws.height, s = frame.stride(0)
        let rowA = ws.rowA, rowB = ws.rowB
        for j in 0..<h {
            for dy in 0..<2 {
                let near = j * w
                let far = (dy == 0 ? max(j - 1, 0) : min(j + 1, h - 1)) * w
                for i in 0..<w {
                    rowA[i + 1] = 3 &* ws.meanA[near + i] &+ ws.meanA[far + i]
                    rowB[i + 1] = 3 &* ws.meanB[near + i] &+ ws.meanB[far + i]
                }
                rowA[0] = rowA[1]
                rowB[0] = rowB[1]
                rowA[w + 1] = rowA[w]
                rowB[w + 1] = rowB[w]
                let p = frame.y + (2 * j + dy) * s
                for i in 0..<w {
                    let ca = 3 &* rowA[i + 1], cb = 3 &* rowB[i + 1]
                    let a0 = rowA[i] &+ ca, b0 = rowB[i] &+ cb
                    let a1 = ca &+ rowA[i + 2], b1 = cb &+ rowB[i + 2]
                    let q0 = (a0 &* Int32(p[2 * i]) &+ b0 &+ 32768) >> 16
                    let q1 = (a1 &* Int32(p[2 * i + 1]) &+ b1 &+ 32768) >> 16
                    p[2 * i] = curve[Int(min(max(q0, 0), 255))]
                    p[2 * i + 1] = curve[Int(min(max(q1, 0), 255))]
                }
            }
        }
    }

    /// Chroma: a 3x3 mean blended in by half the smoothing weight, then the rosy shift
    /// in proportion to the skin membership.
    private static func applyChroma(_ frame: VideoFrame, _ ws: BeautyWorkspace, cbShift: Int32, crShift: Int32) {
        let w = ws.width, h = ws.height, pw = w + 2
        for plane in 1...2 {
            let padded = plane == 1 ? ws.paddedU : ws.paddedV
            let src = frame.plane(plane), s = frame.stride(plane)
            for j in -1...h {
                let row = src + min(max(j, 0), h - 1) * s
                let out = padded + (j + 1) * pw
                (out + 1).update(from: row, count: w)
                out[0] = row[0]
                out[w + 1] = row[w - 1]
            }
        }
        for j in 0..<h {
            let u = frame.u + j * frame.stride(1), v = frame.v + j * frame.stride(2)
            let weight = ws.weight + j * w, membership = ws.membership + j * w
            let pu = ws.paddedU + (j + 1) * pw + 1, pv = ws.paddedV + (j + 1) * pw + 1
            for i in 0..<w {
                let cu = Int32(pu[i]), cv = Int32(pv[i])
                let su = Int32(pu[i - pw - 1]) &+ Int32(pu[i - pw]) &+ Int32(pu[i - pw + 1])
                    &+ Int32(pu[i - 1]) &+ cu &+ Int32(pu[i + 1])
                    &+ Int32(pu[i + pw - 1]) &+ Int32(pu[i + pw]) &+ Int32(pu[i + pw + 1])
                let sv = Int32(pv[i - pw - 1]) &+ Int32(pv[i - pw]) &+ Int32(pv[i - pw + 1])
                    &+ Int32(pv[i - 1]) &+ cv &+ Int32(pv[i + 1])
                    &+ Int32(pv[i + pw - 1]) &+ Int32(pv[i + pw]) &+ Int32(pv[i + pw + 1])
                // Q8 weights: half the luma smoothing weight, and the skin membership.
                let k = Int32(weight[i] * 128)
                let m = Int32(membership[i])
                // 9 * cu * 7282 / 65536 ≈ cu: both in Q8 after the shift.
                let meanU = (su &* 7282) >> 8, meanV = (sv &* 7282) >> 8
                let outU = (cu << 8) &+ ((meanU &- (cu << 8)) &* k) >> 8 &+ (cbShift &* m) / 255
                let outV = (cv << 8) &+ ((meanV &- (cv << 8)) &* k) >> 8 &+ (crShift &* m) / 255
                u[i] = UInt8(min(max((outU &+ 128) >> 8, 0), 255))
                v[i] = UInt8(min(max((outV &+ 128) >> 8, 0), 255))
            }
        }
    }
}
