extension MixLayout {
    /// The rectangles as a JSON array, host first, one object per line with the keys
    /// in the order x, y, w, h, border (what `liveline layout --json` prints).
    public func json() -> String {
        MixLayout.json(rects)
    }

    /// `rects` as `json()` prints them.
    public static func json(_ rects: [MixRect]) -> String {
        let lines = rects.map { r in
            "  {\"x\": \(r.x), \"y\": \(r.y), \"w\": \(r.w), \"h\": \(r.h), \"border\": \(r.border)}"
        }
        return lines.isEmpty ? "[]" : "[\n" + lines.joined(separator: ",\n") + "\n]"
    }

    /// A small ASCII picture of the canvas, `columns` characters wide (rows are half as
    /// tall as columns are wide, as terminal cells are), each rectangle boxed and
    /// labelled with its index (0 = host), drawn host first so tiles cover it.
    /// A tile too small for the scale still shows its label.
    public func asciiDrawing(columns: Int = 64) -> String {
        let cols = max(8, columns)
        let rows = max(4, Int((Double(cols) * Double(canvasHeight) / Double(canvasWidth) / 2).rounded()))
        var grid = [[Character]](repeating: [Character](repeating: ".", count: cols), count: rows)
        func col(_ x: Int) -> Int { min(cols - 1, x * cols / canvasWidth) }
        func row(_ y: Int) -> Int { min(rows - 1, y * rows / canvasHeight) }
        for (index, r) in rects.enumerated() {
            let c0 = col(r.x), c1 = max(c0, col(r.maxX - 1))
            let r0 = row(r.y), r1 = max(r0, row(r.maxY - 1))
            for y in r0...r1 {
                for x in c0...c1 {
                    let edgeX = x == c0 || x == c1, edgeY = y == r0 || y == r1
                    grid[y][x] = edgeX && edgeY ? "+" : edgeY ? "-" : edgeX ? "|" : " "
                }
            }
            let label = Array(String(index))
            let start = max(c0, (c0 + c1 + 1 - label.count) / 2)
            for (k, ch) in label.enumerated() where start + k < cols {
                grid[(r0 + r1) / 2][start + k] = ch
            }
        }
        let header = "\(template.name) \(canvasWidth)x\(canvasHeight), \(cohosts) co-host(s)"
        let legend = rects.enumerated().map { i, r in "\(i) \(i == 0 ? "host  " : "cohost")  \(r)" }
        return ([header] + grid.map { String($0) } + legend).joined(separator: "\n")
    }
}
