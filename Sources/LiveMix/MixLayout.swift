/// The geometry of a mix: (canvas size, template, number of co-hosts, options) → one
/// rectangle per participant, host first (DESIGN.md §5; the anyRTC SDK's `setMixVideoModel:`
/// with `setVideoTemplate:ver:dir:horPad:verPad:borderWidth:`). Pure: no frames.
///
/// Notation: W × H is the canvas, N the number of co-hosts, `even(v)` rounds v down
/// to an even number. Pads, gap and border are first rounded *up* to even (see
/// `MixOptions`); every coordinate and size below is then even.
///
/// - `full`: the host is (0, 0, W, H). Tiles are even(W/4) × even(H/4), in a line
///   along `dir`, `gap` apart; when N such tiles, their gaps and the two pads are longer
///   than the canvas side they line up on, the tiles shrink to the largest even size
///   along the line that fits, keeping their shape (the other side is even(along × the
///   quarter tile's ratio)), so 4 co-hosts fit whatever the pads and gap. Along each axis the line is anchored by `hor` / `ver`:
///   left/top puts its near edge at the pad, right/bottom puts its far edge at
///   W − horPad / H − verPad, center puts its start at even((W − length) / 2)
///   (so a centred line sits at most 2 pixels left of or above the exact centre).
///   Co-host 1 is the tile nearest the anchored end of the line; for a centred line,
///   the first from the left / top.
/// - `equal`: 1 + N cells in c = ceil(sqrt(1 + N)) columns and r = ceil((1 + N) / c)
///   rows, each even((W − 2·horPad) / c) × even((H − 2·verPad) / r), touching (no gap:
///   the borders separate them). The grid is placed inside the padded area by `hor` and
///   `ver` as a line is for `full` (the even rounding can leave up to 2c − 1 pixels);
///   host first in reading order; an incomplete last row is shifted right by
///   even(missing cells × cell width / 2). `dir` does not apply. Every cell, the host's
///   included, gets the border.
/// - `bigSmall`: the co-hosts sit in a strip: a column of width even(W/4) (dir = ver)
///   on the side named by `hor` (center counts as right), or a row of height
///   even(H/4) (dir = hor) on the side named by `ver` (center counts as bottom). The
///   host takes the rest of the canvas. Tiles are even(W/4) × even(H/4), filling the
///   strip across exactly (no pad), placed along it as `full` places its line, with the
///   other axis's anchor, pad and the gap; when they do not fit along the strip they
///   shrink along it only (they still fill it across). With no co-hosts there is no strip and the
///   host fills the canvas.
///
/// Capacity: `capacity(...)` is the most co-hosts (up to `maxCohosts`) a canvas, template
/// and options hold; the hoster offers the line no more than that.
///
/// Fitting: a line of tiles must fit with its pad on both sides
/// (length + 2·pad ≤ canvas side) on each axis, every tile must keep at least 2x2 pixels
/// of picture inside its border; otherwise the layout is an error, never an overlap.
public struct MixLayout: Equatable, Sendable {
    public let canvasWidth: Int
    public let canvasHeight: Int
    public let template: MixTemplate
    public let cohosts: Int
    public let options: MixOptions
    /// One rectangle per participant: the host, then co-host 1…N.
    public let rects: [MixRect]

    /// Co-hosts a mix holds at most (the anyRTC SDK's older "1 full + 4 small" layout).
    public static let maxCohosts = 4
    /// The smallest canvas side accepted.
    public static let minCanvas = 16

    public init(canvasWidth: Int, canvasHeight: Int, template: MixTemplate, cohosts: Int,
                options: MixOptions = MixOptions()) throws(MixLayout.Error) {
        self.canvasWidth = canvasWidth
        self.canvasHeight = canvasHeight
        self.template = template
        self.cohosts = cohosts
        self.options = options
        rects = try MixLayout.rectangles(canvasWidth: canvasWidth, canvasHeight: canvasHeight,
                                         template: template, cohosts: cohosts, options: options)
    }

    /// The rectangles of a layout, host first; see the type's documentation for the geometry.
    public static func rectangles(canvasWidth W: Int, canvasHeight H: Int, template: MixTemplate,
                                  cohosts N: Int, options: MixOptions) throws(MixLayout.Error) -> [MixRect] {
        guard W >= minCanvas, H >= minCanvas, W % 2 == 0, H % 2 == 0 else {
            throw .badCanvas(width: W, height: H)
        }
        guard N >= 0, N <= maxCohosts else { throw .tooManyCohosts(N) }
        for (name, value) in [("horPad", options.horPad), ("verPad", options.verPad),
                              ("borderWidth", options.borderWidth), ("gap", options.gap)] where value < 0 {
            throw .negativeOption(name: name, value: value)
        }
        let o = Effective(options)
        let rects: [MixRect]
        switch template {
        case .full: rects = try full(W, H, N, o)
        case .equal: rects = try equal(W, H, N, o)
        case .bigSmall: rects = try bigSmall(W, H, N, o)
        }
        for (i, r) in rects.enumerated() where r.w - 2 * r.border < 2 || r.h - 2 * r.border < 2 {
            throw .doesNotFit("tile \(i) is \(r.w)x\(r.h) with a \(r.border)-pixel border: no picture left inside")
        }
        return rects
    }

    /// The most co-hosts, 0…`maxCohosts`, that `template` shows on this canvas with
    /// `options` (every count up to it fits); 0 also when even the host alone does not.
    public static func capacity(canvasWidth: Int, canvasHeight: Int, template: MixTemplate,
                                options: MixOptions) -> Int {
        var held = 0
        for n in 0...maxCohosts {
            guard (try? rectangles(canvasWidth: canvasWidth, canvasHeight: canvasHeight, template: template,
                                   cohosts: n, options: options)) != nil else { break }
            held = n
        }
        return held
    }

    /// Options with pads, gap and border rounded up to even.
    struct Effective {
        let hor: MixHorAlign, ver: MixVerAlign, dir: MixDirection
        let horPad: Int, verPad: Int, border: Int, gap: Int

        init(_ o: MixOptions) {
            hor = o.hor
            ver = o.ver
            dir = o.dir
            horPad = evenUp(o.horPad)
            verPad = evenUp(o.verPad)
            border = evenUp(o.borderWidth)
            gap = evenUp(o.gap)
        }
    }

    /// Where a line is anchored along one axis.
    enum Anchor { case start, center, end }

    /// Start offsets of `count` tiles of `size`, `gap` apart, along an axis of `length`
    /// with `pad`, nearest-the-anchor first; throws when they do not fit.
    static func line(count: Int, size: Int, gap: Int, length: Int, pad: Int, anchor: Anchor,
                     axis: String) throws(MixLayout.Error) -> [Int] {
        guard size >= 2 else {
            throw .doesNotFit("\(count) tile(s) with \(gap) px gaps and 2×\(pad) px pad \(axis) leave no room in \(length) px")
        }
        let total = count * size + max(0, count - 1) * gap
        guard total + 2 * pad <= length else {
            throw .doesNotFit("\(count) tile(s) of \(size) px with \(gap) px gaps need \(total) px "
                              + "+ 2×\(pad) px pad \(axis), the canvas has \(length)")
        }
        let step = size + gap
        switch anchor {
        case .start: return (0..<count).map { pad + $0 * step }
        case .center:
            let start = even((length - total) / 2)
            return (0..<count).map { start + $0 * step }
        case .end: return (0..<count).map { length - pad - size - $0 * step }
        }
    }

    static func anchor(_ hor: MixHorAlign) -> Anchor { hor == .left ? .start : hor == .center ? .center : .end }
    static func anchor(_ ver: MixVerAlign) -> Anchor { ver == .top ? .start : ver == .center ? .center : .end }

    /// The tile size of `N` (> 0) tiles lined up along `o.dir`: a quarter of the canvas
    /// each way, or, when N of those with the gaps and both pads are longer than the
    /// side, the largest even size along the line that fits (`keepShape`: the other side
    /// shrinks in proportion; otherwise it stays a quarter). May be < 2: `line` refuses it.
    static func tileSize(_ W: Int, _ H: Int, _ N: Int, _ o: Effective, keepShape: Bool) -> (w: Int, h: Int) {
        let qw = even(W / 4), qh = even(H / 4)
        let horizontal = o.dir == .hor
        let length = horizontal ? W : H, pad = horizontal ? o.horPad : o.verPad, quarter = horizontal ? qw : qh
        let fitting = max(0, even((length - 2 * pad - (N - 1) * o.gap) / N))
        guard fitting < quarter else { return (qw, qh) }
        if horizontal { return (fitting, keepShape ? even(fitting * qh / qw) : qh) }
        return (keepShape ? even(fitting * qw / qh) : qw, fitting)
    }

    static func full(_ W: Int, _ H: Int, _ N: Int, _ o: Effective) throws(MixLayout.Error) -> [MixRect] {
        let host = MixRect(x: 0, y: 0, w: W, h: H)
        guard N > 0 else { return [host] }
        let (tw, th) = tileSize(W, H, N, o, keepShape: true)
        let xs: [Int], ys: [Int]
        if o.dir == .hor {
            xs = try line(count: N, size: tw, gap: o.gap, length: W, pad: o.horPad, anchor: anchor(o.hor),
                          axis: "horizontally")
            ys = try line(count: 1, size: th, gap: 0, length: H, pad: o.verPad, anchor: anchor(o.ver),
                          axis: "vertically")
        } else {
            xs = try line(count: 1, size: tw, gap: 0, length: W, pad: o.horPad, anchor: anchor(o.hor),
                          axis: "horizontally")
            ys = try line(count: N, size: th, gap: o.gap, length: H, pad: o.verPad, anchor: anchor(o.ver),
                          axis: "vertically")
        }
        return [host] + (0..<N).map { i in
            MixRect(x: xs[o.dir == .hor ? i : 0], y: ys[o.dir == .ver ? i : 0], w: tw, h: th, border: o.border)
        }
    }

    static func equal(_ W: Int, _ H: Int, _ N: Int, _ o: Effective) throws(MixLayout.Error) -> [MixRect] {
        let n = 1 + N
        var c = 1
        while c * c < n { c += 1 }
        let r = (n + c - 1) / c
        let areaW = W - 2 * o.horPad, areaH = H - 2 * o.verPad
        guard areaW >= 2 * c, areaH >= 2 * r else {
            throw .doesNotFit("a \(c)x\(r) grid inside \(W)x\(H) with pads \(o.horPad)/\(o.verPad) "
                              + "leaves \(areaW)x\(areaH) px")
        }
        let cw = even(areaW / c), ch = even(areaH / r)
        let gx = try line(count: 1, size: c * cw, gap: 0, length: W, pad: o.horPad, anchor: anchor(o.hor),
                          axis: "horizontally")[0]
        let gy = try line(count: 1, size: r * ch, gap: 0, length: H, pad: o.verPad, anchor: anchor(o.ver),
                          axis: "vertically")[0]
        return (0..<n).map { i in
            let row = i / c, col = i % c
            let inRow = row == r - 1 ? n - row * c : c
            let shift = even((c - inRow) * cw / 2)
            return MixRect(x: gx + shift + col * cw, y: gy + row * ch, w: cw, h: ch, border: o.border)
        }
    }

    static func bigSmall(_ W: Int, _ H: Int, _ N: Int, _ o: Effective) throws(MixLayout.Error) -> [MixRect] {
        guard N > 0 else { return [MixRect(x: 0, y: 0, w: W, h: H)] }
        let (tw, th) = tileSize(W, H, N, o, keepShape: false)
        if o.dir == .ver {
            let left = o.hor == .left
            let host = MixRect(x: left ? tw : 0, y: 0, w: W - tw, h: H)
            let ys = try line(count: N, size: th, gap: o.gap, length: H, pad: o.verPad, anchor: anchor(o.ver),
                              axis: "vertically")
            return [host] + ys.map { MixRect(x: left ? 0 : W - tw, y: $0, w: tw, h: th, border: o.border) }
        } else {
            let top = o.ver == .top
            let host = MixRect(x: 0, y: top ? th : 0, w: W, h: H - th)
            let xs = try line(count: N, size: tw, gap: o.gap, length: W, pad: o.horPad, anchor: anchor(o.hor),
                              axis: "horizontally")
            return [host] + xs.map { MixRect(x: $0, y: top ? 0 : H - th, w: tw, h: th, border: o.border) }
        }
    }

    /// Why a layout cannot be made.
    public enum Error: Swift.Error, Equatable, Sendable, CustomStringConvertible {
        /// The canvas is odd-sized or smaller than 16 pixels on a side.
        case badCanvas(width: Int, height: Int)
        /// A pad, the gap or the border is negative.
        case negativeOption(name: String, value: Int)
        /// More than `maxCohosts` co-hosts (or a negative count).
        case tooManyCohosts(Int)
        /// The tiles and pads do not fit on the canvas.
        case doesNotFit(String)
        /// A name that is not one of the accepted values of an option.
        case unknownValue(option: String, value: String, expected: String)

        public var description: String {
            switch self {
            case let .badCanvas(w, h):
                "a mix canvas of \(w)x\(h) must have even sides of at least \(MixLayout.minCanvas) pixels"
            case let .negativeOption(name, value):
                "the mix option \(name) is \(value); it must not be negative"
            case let .tooManyCohosts(n):
                "\(n) co-hosts; a mix holds 0…\(MixLayout.maxCohosts)"
            case let .doesNotFit(detail):
                "the mix layout does not fit: \(detail)"
            case let .unknownValue(option, value, expected):
                "unknown \(option) '\(value)' (expected \(expected))"
            }
        }
    }
}

/// Rounds down to even.
@inline(__always) func even(_ v: Int) -> Int { v & ~1 }
/// Rounds up to even.
@inline(__always) func evenUp(_ v: Int) -> Int { (v + 1) & ~1 }
