import Foundation
import LiveCore
import Testing
@testable import LiveMix

/// Shorthand for expected rectangles written out by hand from DESIGN.md §6.
private func R(_ x: Int, _ y: Int, _ w: Int, _ h: Int, _ border: Int = 0) -> MixRect {
    MixRect(x: x, y: y, w: w, h: h, border: border)
}

@Suite struct MixLayoutTests {
    // MARK: hand-computed layouts

    struct Case: CustomTestStringConvertible, Sendable {
        let name: String
        let canvas: (Int, Int)
        let template: MixTemplate
        let cohosts: Int
        let options: MixOptions
        let expected: [MixRect]
        var testDescription: String { name }
    }

    static let handCases: [Case] = [
        // Tiles 1280/4 × 720/4 = 320×180; column at x = 1280−16−320 = 944; co-host 1 at the
        // bottom: y = 720−16−180 = 524, then 524−188 = 336, 336−188 = 148.
        Case(name: "full right/bottom column", canvas: (1280, 720), template: .full, cohosts: 3,
             options: MixOptions(hor: .right, ver: .bottom, dir: .ver, horPad: 16, verPad: 16, borderWidth: 2, gap: 8),
             expected: [R(0, 0, 1280, 720), R(944, 524, 320, 180, 2), R(944, 336, 320, 180, 2),
                        R(944, 148, 320, 180, 2)]),
        // Row of 3×320 + 2×8 = 976 px centred: (1280−976)/2 = 152; top at verPad 10.
        Case(name: "full centred row at top", canvas: (1280, 720), template: .full, cohosts: 3,
             options: MixOptions(hor: .center, ver: .top, dir: .hor, horPad: 0, verPad: 10, borderWidth: 0, gap: 8),
             expected: [R(0, 0, 1280, 720), R(152, 10, 320, 180), R(480, 10, 320, 180), R(808, 10, 320, 180)]),
        // Portrait: tiles 180×320; column of 2×320 + 8 = 648 centred: (1280−648)/2 = 316.
        Case(name: "portrait full left/center column", canvas: (720, 1280), template: .full, cohosts: 2,
             options: MixOptions(hor: .left, ver: .center, dir: .ver, horPad: 20, verPad: 0, borderWidth: 4, gap: 8),
             expected: [R(0, 0, 720, 1280), R(20, 316, 180, 320, 4), R(20, 644, 180, 320, 4)]),
        // Portrait row from the right: 720−16−180 = 524, 524−188 = 336, 148; y = 1280−16−320 = 944.
        Case(name: "portrait full right/bottom row", canvas: (720, 1280), template: .full, cohosts: 3,
             options: MixOptions(hor: .right, ver: .bottom, dir: .hor, horPad: 16, verPad: 16, borderWidth: 2, gap: 8),
             expected: [R(0, 0, 720, 1280), R(524, 944, 180, 320, 2), R(336, 944, 180, 320, 2),
                        R(148, 944, 180, 320, 2)]),
        // Odd pads round up: 15 → 16, 7 → 8.
        Case(name: "full odd pads round up", canvas: (1280, 720), template: .full, cohosts: 1,
             options: MixOptions(hor: .left, ver: .top, dir: .hor, horPad: 15, verPad: 7, borderWidth: 1, gap: 8),
             expected: [R(0, 0, 1280, 720), R(16, 8, 320, 180, 2)]),
        // 3 participants: c = 2, r = 2, cells 640×360; the last row's single cell shifted by 320.
        Case(name: "equal 2 co-hosts", canvas: (1280, 720), template: .equal, cohosts: 2,
             options: MixOptions(hor: .center, ver: .center, dir: .hor, horPad: 0, verPad: 0, borderWidth: 0, gap: 8),
             expected: [R(0, 0, 640, 360), R(640, 0, 640, 360), R(320, 360, 640, 360)]),
        // 5 participants: c = 3, r = 2; area 1260×680 → cells 420×340 from (10, 20);
        // last row of 2 shifted by 420/2 = 210.
        Case(name: "equal 4 co-hosts with pads", canvas: (1280, 720), template: .equal, cohosts: 4,
             options: MixOptions(hor: .left, ver: .top, dir: .ver, horPad: 10, verPad: 20, borderWidth: 2, gap: 8),
             expected: [R(10, 20, 420, 340, 2), R(430, 20, 420, 340, 2), R(850, 20, 420, 340, 2),
                        R(220, 360, 420, 340, 2), R(640, 360, 420, 340, 2)]),
        // 1280/3 = 426.67 → cells 426, grid 1278 anchored right: x = 1280 − 1278 = 2.
        Case(name: "equal 3 columns anchored right", canvas: (1280, 720), template: .equal, cohosts: 4,
             options: MixOptions(hor: .right, ver: .bottom, dir: .hor, horPad: 0, verPad: 0, borderWidth: 0, gap: 0),
             expected: [R(2, 0, 426, 360), R(428, 0, 426, 360), R(854, 0, 426, 360),
                        R(214, 360, 426, 360), R(640, 360, 426, 360)]),
        Case(name: "equal host alone", canvas: (1280, 720), template: .equal, cohosts: 0,
             options: MixOptions(hor: .center, ver: .center, dir: .hor, horPad: 0, verPad: 0, borderWidth: 0, gap: 8),
             expected: [R(0, 0, 1280, 720)]),
        // Strip of width 320 on the right (x = 960); host 960×720; tiles stacked up from the bottom.
        Case(name: "bigSmall right strip", canvas: (1280, 720), template: .bigSmall, cohosts: 3,
             options: MixOptions(hor: .right, ver: .bottom, dir: .ver, horPad: 50, verPad: 16, borderWidth: 2, gap: 8),
             expected: [R(0, 0, 960, 720), R(960, 524, 320, 180, 2), R(960, 336, 320, 180, 2),
                        R(960, 148, 320, 180, 2)]),
        // hor = center counts as right for a vertical strip; ver = top stacks from verPad 0.
        Case(name: "bigSmall centre means right", canvas: (1280, 720), template: .bigSmall, cohosts: 2,
             options: MixOptions(hor: .center, ver: .top, dir: .ver, horPad: 0, verPad: 0, borderWidth: 0, gap: 10),
             expected: [R(0, 0, 960, 720), R(960, 0, 320, 180), R(960, 190, 320, 180)]),
        // Strip of height 180 at the top; host below it (0, 180, 1280, 540); tiles from horPad 12.
        Case(name: "bigSmall top strip", canvas: (1280, 720), template: .bigSmall, cohosts: 2,
             options: MixOptions(hor: .left, ver: .top, dir: .hor, horPad: 12, verPad: 40, borderWidth: 0, gap: 8),
             expected: [R(0, 180, 1280, 540), R(12, 0, 320, 180), R(340, 0, 320, 180)]),
        // Left strip in portrait: tiles 180×320; column of 1 centred: (1280−320)/2 = 480.
        Case(name: "portrait bigSmall left strip", canvas: (720, 1280), template: .bigSmall, cohosts: 1,
             options: MixOptions(hor: .left, ver: .center, dir: .ver, horPad: 0, verPad: 0, borderWidth: 2, gap: 8),
             expected: [R(180, 0, 540, 1280), R(0, 480, 180, 320, 2)]),
        Case(name: "bigSmall without co-hosts", canvas: (1280, 720), template: .bigSmall, cohosts: 0,
             options: MixOptions(), expected: [R(0, 0, 1280, 720)]),
    ]

    @Test(arguments: handCases)
    func handComputedLayouts(_ c: Case) throws {
        let rects = try MixLayout.rectangles(canvasWidth: c.canvas.0, canvasHeight: c.canvas.1, template: c.template,
                                             cohosts: c.cohosts, options: c.options)
        #expect(rects == c.expected)
    }

    // MARK: every combination

    static let canvases = [(1280, 720), (720, 1280)]

    @Test(arguments: MixTemplate.allCases, 0...4)
    func everyCombinationHoldsTheRules(template: MixTemplate, cohosts: Int) throws {
        for (W, H) in MixLayoutTests.canvases {
            for hor in MixHorAlign.allCases {
                for ver in MixVerAlign.allCases {
                    for dir in MixDirection.allCases {
                        for (horPad, verPad) in [(0, 0), (16, 24), (30, 10)] {
                            let options = MixOptions(hor: hor, ver: ver, dir: dir, horPad: horPad, verPad: verPad,
                                                     borderWidth: 2, gap: 8)
                            let label = "\(template.name) \(W)x\(H) N=\(cohosts) \(hor) \(ver) \(dir) pads \(horPad)/\(verPad)"
                            let rects = try MixLayout.rectangles(canvasWidth: W, canvasHeight: H, template: template,
                                                                 cohosts: cohosts, options: options)
                            try checkRules(rects, W: W, H: H, template: template, cohosts: cohosts,
                                           options: options, label: label)
                        }
                    }
                }
            }
        }
    }

    private func checkRules(_ rects: [MixRect], W: Int, H: Int, template: MixTemplate, cohosts: Int,
                            options o: MixOptions, label: String) throws {
        #expect(rects.count == 1 + cohosts, "\(label)")
        for r in rects {
            #expect(r.x >= 0 && r.y >= 0 && r.maxX <= W && r.maxY <= H, "\(label): \(r) outside")
            #expect(r.x % 2 == 0 && r.y % 2 == 0 && r.w % 2 == 0 && r.h % 2 == 0, "\(label): \(r) odd")
            #expect(r.w > 0 && r.h > 0, "\(label): \(r) empty")
        }
        // Small tiles never overlap each other; in equal and bigSmall nothing overlaps at all.
        let first = template == .full ? 1 : 0
        for i in first..<rects.count {
            for j in (i + 1)..<max(i + 1, rects.count) {
                #expect(!rects[i].overlaps(rects[j]), "\(label): \(rects[i]) overlaps \(rects[j])")
            }
        }
        let tiles = Array(rects.dropFirst())
        switch template {
        case .full:
            #expect(rects[0] == MixRect(x: 0, y: 0, w: W, h: H), "\(label)")
            guard !tiles.isEmpty else { return }
            // Quarter-size tiles where N of them fit along the line; smaller ones of the same shape where not.
            let quarter = (w: W / 4 / 2 * 2, h: H / 4 / 2 * 2)
            let fitsAtQuarter = Self.fitsAtQuarter(cohosts, W: W, H: H, options: o)
            for t in tiles {
                #expect(t.w == tiles[0].w && t.h == tiles[0].h && t.border == o.borderWidth, "\(label)")
                if fitsAtQuarter {
                    #expect(t.w == quarter.w && t.h == quarter.h, "\(label)")
                } else {
                    #expect(t.w < quarter.w && t.h < quarter.h, "\(label)")
                    #expect(abs(Double(t.w) / Double(t.h) - Double(quarter.w) / Double(quarter.h)) < 0.05, "\(label): shape")
                }
            }
            try checkAnchors(tiles, W: W, H: H, hor: o.hor, ver: o.ver, horPad: o.horPad, verPad: o.verPad, label)
            try checkOrder(tiles, along: o.dir, hor: o.hor, ver: o.ver, label)
        case .equal:
            let n = rects.count
            let c = Int(Double(n).squareRoot().rounded(.up))
            #expect(Set(rects.map { $0.w }).count == 1 && Set(rects.map { $0.h }).count == 1, "\(label)")
            #expect(rects[0].w == (W - 2 * o.horPad) / c / 2 * 2, "\(label)")
            #expect(rects.allSatisfy { $0.border == o.borderWidth }, "\(label)")
            try checkAnchors(rects, W: W, H: H, hor: o.hor, ver: o.ver, horPad: o.horPad, verPad: o.verPad, label)
            // Reading order: by row, then by column.
            let sorted = rects.sorted { ($0.y, $0.x) < ($1.y, $1.x) }
            #expect(sorted == rects, "\(label)")
        case .bigSmall:
            guard !tiles.isEmpty else {
                #expect(rects == [MixRect(x: 0, y: 0, w: W, h: H)], "\(label)")
                return
            }
            let tw = W / 4 / 2 * 2, th = H / 4 / 2 * 2
            // Along the strip the tiles shrink only when quarter-size ones do not fit.
            let fitsAtQuarter = Self.fitsAtQuarter(cohosts, W: W, H: H, options: o)
            let along = tiles[0].w == tw && tiles[0].h == th
            #expect(along == fitsAtQuarter, "\(label): \(tiles[0])")
            if o.dir == .ver {
                let stripX = o.hor == .left ? 0 : W - tw
                #expect(tiles.allSatisfy { $0.x == stripX && $0.w == tw && $0.h == tiles[0].h && $0.h <= th }, "\(label)")
                #expect(rects[0] == MixRect(x: o.hor == .left ? tw : 0, y: 0, w: W - tw, h: H), "\(label)")
                try checkAnchors(tiles, W: W, H: H, hor: nil, ver: o.ver, horPad: 0, verPad: o.verPad, label)
            } else {
                let stripY = o.ver == .top ? 0 : H - th
                #expect(tiles.allSatisfy { $0.y == stripY && $0.h == th && $0.w == tiles[0].w && $0.w <= tw }, "\(label)")
                #expect(rects[0] == MixRect(x: 0, y: o.ver == .top ? th : 0, w: W, h: H - th), "\(label)")
                try checkAnchors(tiles, W: W, H: H, hor: o.hor, ver: nil, horPad: o.horPad, verPad: 0, label)
            }
            try checkOrder(tiles, along: o.dir, hor: o.hor, ver: o.ver, label)
        }
    }

    /// N quarter-size tiles with their gaps and both pads fit the side they line up on.
    static func fitsAtQuarter(_ n: Int, W: Int, H: Int, options o: MixOptions) -> Bool {
        let (length, pad, quarter) = o.dir == .hor ? (W, o.horPad, W / 4 / 2 * 2) : (H, o.verPad, H / 4 / 2 * 2)
        return n * quarter + (n - 1) * o.gap + 2 * pad <= length
    }

    /// The outermost tile edge is exactly the pad from the anchored canvas edge; a
    /// centred group has margins equal to within the 2-pixel even rounding.
    private func checkAnchors(_ tiles: [MixRect], W: Int, H: Int, hor: MixHorAlign?, ver: MixVerAlign?,
                              horPad: Int, verPad: Int, _ label: String) throws {
        let left = tiles.map(\.x).min()!, right = W - tiles.map(\.maxX).max()!
        let top = tiles.map(\.y).min()!, bottom = H - tiles.map(\.maxY).max()!
        switch hor {
        case .left: #expect(left == horPad, "\(label): left margin \(left)")
        case .right: #expect(right == horPad, "\(label): right margin \(right)")
        case .center: #expect(right - left == 0 || right - left == 2, "\(label): margins \(left)/\(right)")
        case nil: break
        }
        switch ver {
        case .top: #expect(top == verPad, "\(label): top margin \(top)")
        case .bottom: #expect(bottom == verPad, "\(label): bottom margin \(bottom)")
        case .center: #expect(bottom - top == 0 || bottom - top == 2, "\(label): margins \(top)/\(bottom)")
        case nil: break
        }
    }

    /// Co-host 1 is nearest the anchored end of the line, the rest follow away from it, `gap` apart.
    private func checkOrder(_ tiles: [MixRect], along dir: MixDirection, hor: MixHorAlign, ver: MixVerAlign,
                            _ label: String) throws {
        let positions = tiles.map { dir == .hor ? $0.x : $0.y }
        let fromEnd = dir == .hor ? hor == .right : ver == .bottom
        let expected = fromEnd ? positions.sorted(by: >) : positions.sorted()
        #expect(positions == expected, "\(label): order \(positions)")
        for (a, b) in zip(tiles, tiles.dropFirst()) {
            let distance = dir == .hor ? abs(a.x - b.x) - a.w : abs(a.y - b.y) - a.h
            #expect(distance == 8, "\(label): gap \(distance)")
        }
    }

    // MARK: errors

    @Test func canvasTooSmallForTilesAndPads() {
        // 64x64: tiles 16x16; 16 + 2×30 > 64.
        #expect(throws: MixLayout.Error.self) {
            try MixLayout.rectangles(canvasWidth: 64, canvasHeight: 64, template: .full, cohosts: 1,
                                     options: MixOptions(horPad: 30, verPad: 0))
        }
        // The pads eat the whole area of an equal grid.
        #expect(throws: MixLayout.Error.self) {
            try MixLayout.rectangles(canvasWidth: 64, canvasHeight: 64, template: .equal, cohosts: 3,
                                     options: MixOptions(horPad: 32, verPad: 0))
        }
        // A border that leaves nothing inside a 16x16 tile.
        #expect(throws: MixLayout.Error.self) {
            try MixLayout.rectangles(canvasWidth: 64, canvasHeight: 64, template: .full, cohosts: 1,
                                     options: MixOptions(horPad: 0, verPad: 0, borderWidth: 8))
        }
    }

    @Test func negativeOptionsAreErrors() throws {
        let error = try #require(throws: MixLayout.Error.self) {
            try MixLayout.rectangles(canvasWidth: 1280, canvasHeight: 720, template: .full, cohosts: 1,
                                     options: MixOptions(horPad: -2))
        }
        #expect(error == .negativeOption(name: "horPad", value: -2))
        #expect(error.description.contains("horPad"))
        #expect(throws: MixLayout.Error.negativeOption(name: "gap", value: -1)) {
            try MixLayout.rectangles(canvasWidth: 1280, canvasHeight: 720, template: .equal, cohosts: 1,
                                     options: MixOptions(gap: -1))
        }
    }

    // MARK: capacity

    /// Four co-hosts, the most a mix offers (`--cohosts 0-4`, `--mix-test 0..4`), fit in
    /// every template with the default pads and gap: `full` and `bigSmall` used to refuse
    /// them at any canvas size (four quarter tiles plus gaps and pads exceed the side).
    @Test(arguments: MixTemplate.allCases)
    func fourCohostsFitWithDefaultOptions(template: MixTemplate) throws {
        for (W, H) in [(1280, 720), (640, 360), (720, 1280), (320, 240)] {
            for dir in MixDirection.allCases {
                let options = MixOptions(dir: dir)
                let rects = try MixLayout.rectangles(canvasWidth: W, canvasHeight: H, template: template, cohosts: 4,
                                                     options: options)
                try checkRules(rects, W: W, H: H, template: template, cohosts: 4, options: options,
                               label: "\(template.name) \(W)x\(H) \(dir.name)")
                #expect(MixLayout.capacity(canvasWidth: W, canvasHeight: H, template: template, options: options)
                        == MixLayout.maxCohosts)
            }
        }
    }

    /// The default full column of four: 4×180 + 3×8 + 2×16 = 776 > 720, so tiles shrink to
    /// even((720 − 32 − 24) / 4) = 166 high and even(166 × 320 / 180) = 294 wide, at
    /// x = 1280 − 16 − 294 = 970, stacked up from y = 720 − 16 − 166 = 538 in steps of 174.
    @Test func fullColumnOfFourShrinksToFit() throws {
        let rects = try MixLayout.rectangles(canvasWidth: 1280, canvasHeight: 720, template: .full, cohosts: 4,
                                             options: MixOptions())
        #expect(rects == [R(0, 0, 1280, 720), R(970, 538, 294, 166, 2), R(970, 364, 294, 166, 2),
                          R(970, 190, 294, 166, 2), R(970, 16, 294, 166, 2)])
        // The strip of bigSmall keeps its width: only the height shrinks.
        let strip = try MixLayout.rectangles(canvasWidth: 1280, canvasHeight: 720, template: .bigSmall, cohosts: 4,
                                             options: MixOptions())
        #expect(strip == [R(0, 0, 960, 720), R(960, 538, 320, 166, 2), R(960, 364, 320, 166, 2),
                          R(960, 190, 320, 166, 2), R(960, 16, 320, 166, 2)])
    }

    @Test func capacityIsTheMostThatFits() {
        // 16x16 with 16-pixel pads: not even one tile.
        #expect(MixLayout.capacity(canvasWidth: 16, canvasHeight: 16, template: .full, options: MixOptions()) == 0)
        // 64x64, no pads, 6-pixel borders: a tile needs 14 px (12 of border + 2 of picture).
        // A row of three 16-px quarter tiles with 8-px gaps is exactly 64 px; four shrink
        // to even((64 − 24) / 4) = 10 px, too small for their borders.
        let options = MixOptions(dir: .hor, horPad: 0, verPad: 0, borderWidth: 6, gap: 8)
        #expect(MixLayout.capacity(canvasWidth: 64, canvasHeight: 64, template: .full, options: options) == 3)
        #expect(MixLayout.capacity(canvasWidth: 1280, canvasHeight: 720, template: .equal, options: MixOptions()) == 4)
    }

    @Test func fiveCohostsAreTooMany() {
        #expect(throws: MixLayout.Error.tooManyCohosts(5)) {
            try MixLayout.rectangles(canvasWidth: 1280, canvasHeight: 720, template: .equal, cohosts: 5,
                                     options: MixOptions())
        }
    }

    @Test func badCanvases() {
        for (w, h) in [(1281, 720), (1280, 719), (14, 720), (0, 0)] {
            #expect(throws: MixLayout.Error.badCanvas(width: w, height: h)) {
                try MixLayout.rectangles(canvasWidth: w, canvasHeight: h, template: .full, cohosts: 0,
                                         options: MixOptions())
            }
        }
    }

    @Test func namesParse() throws {
        #expect(try MixTemplate(parsing: "bigSmall") == .bigSmall)
        #expect(try MixTemplate(parsing: "equal") == .equal)
        #expect(MixTemplate(name: "full")?.rawValue == 0)
        #expect(MixTemplate(name: "oneBigThreeSmall")?.rawValue == 2)
        #expect(MixHorAlign(name: "right")?.rawValue == 2)
        #expect(MixVerAlign(name: "bottom")?.rawValue == 2)
        #expect(MixDirection(name: "ver")?.rawValue == 1)
        let error = try #require(throws: MixLayout.Error.self) { try MixTemplate(parsing: "grid") }
        #expect(error.description.contains("full|equal|bigSmall"))
    }

    // MARK: text output

    @Test func jsonDecodesToTheRectangles() throws {
        let layout = try MixLayout(canvasWidth: 1280, canvasHeight: 720, template: .full, cohosts: 3)
        let text = layout.json()
        #expect(text.contains("{\"x\": 0, \"y\": 0, \"w\": 1280, \"h\": 720, \"border\": 0}"))
        let decoded = try JSONDecoder().decode([MixRect].self, from: Data(text.utf8))
        #expect(decoded == layout.rects)
    }

    @Test func asciiDrawingLabelsEveryTile() throws {
        let layout = try MixLayout(canvasWidth: 1280, canvasHeight: 720, template: .full, cohosts: 3)
        let drawing = layout.asciiDrawing(columns: 64)
        let lines = drawing.split(separator: "\n", omittingEmptySubsequences: false)
        // Header + 18 rows (64 × 720/1280 / 2) + 4 legend lines.
        #expect(lines.count == 1 + 18 + 4)
        let picture = lines[1...18].joined()
        for label in ["0", "1", "2", "3"] {
            #expect(picture.contains(label), "label \(label) missing")
        }
        // Co-host 1 sits at the bottom right: its label is in the lower right quadrant.
        let row = try #require(lines[1...18].firstIndex { $0.contains("1") })
        #expect(row > 9)
        #expect(try #require(lines[row].firstIndex(of: "1")).utf16Offset(in: lines[row]) > 32)
    }
}
