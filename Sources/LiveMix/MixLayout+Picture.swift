import LiveCore

extension MixLayout {
    /// Colours of the tiles in `picture()`, by participant index.
    public static let pictureColors: [(r: UInt8, g: UInt8, b: UInt8)] = [
        (70, 90, 140), (200, 60, 60), (60, 170, 80), (60, 110, 210), (220, 190, 50),
    ]

    /// A picture of the layout for `liveline layout --png`: the canvas (scaled by
    /// `scale`, e.g. 0.5 for a half-size picture) dark grey, each rectangle in its own
    /// colour with its white border, and its index (0 = host) in big white digits.
    public func picture(scale: Double = 1) -> RGBAImage {
        let pw = max(1, Int((Double(canvasWidth) * scale).rounded()))
        let ph = max(1, Int((Double(canvasHeight) * scale).rounded()))
        var image = RGBAImage(width: pw, height: ph, r: 40, g: 40, b: 40, a: 255)
        func s(_ v: Int) -> Int { Int((Double(v) * scale).rounded()) }
        for (index, rect) in rects.enumerated() {
            let color = MixLayout.pictureColors[index % MixLayout.pictureColors.count]
            let x0 = s(rect.x), y0 = s(rect.y), x1 = min(pw, s(rect.maxX)), y1 = min(ph, s(rect.maxY))
            let b = rect.border > 0 ? max(1, s(rect.border)) : 0
            image.fillRect(x0, y0, x1, y1, (255, 255, 255))
            image.fillRect(x0 + b, y0 + b, x1 - b, y1 - b, (color.r, color.g, color.b))
            // Digits half the tile's height, at most a third of its width per digit.
            let label = String(index)
            let cell = max(1, min((y1 - y0) / 2 / Digits.rows, (x1 - x0) / 3 / Digits.columns / label.count))
            let textW = label.count * (Digits.columns + 1) * cell - cell, textH = Digits.rows * cell
            image.drawText(label, x: (x0 + x1 - textW) / 2, y: (y0 + y1 - textH) / 2, cell: cell)
        }
        return image
    }
}

extension RGBAImage {
    /// Fills [x0, x1) × [y0, y1), clipped to the picture.
    mutating func fillRect(_ x0: Int, _ y0: Int, _ x1: Int, _ y1: Int, _ c: (UInt8, UInt8, UInt8)) {
        let xa = max(0, x0), xb = min(width, x1), ya = max(0, y0), yb = min(height, y1)
        guard xa < xb, ya < yb else { return }
        let w = width
        pixels.withUnsafeMutableBufferPointer { buffer in
            for y in ya..<yb {
                for x in xa..<xb {
                    let i = (y * w + x) * 4
                    buffer[i] = c.0; buffer[i + 1] = c.1; buffer[i + 2] = c.2; buffer[i + 3] = 255
                }
            }
        }
    }

    /// Writes decimal digits in white, each bitmap dot a `cell` × `cell` square.
    mutating func drawText(_ text: String, x: Int, y: Int, cell: Int) {
        var left = x
        for ch in text {
            guard let digit = ch.wholeNumberValue else { continue }
            for (row, bits) in Digits.glyphs[digit].enumerated() {
                for col in 0..<Digits.columns where bits & (1 << (Digits.columns - 1 - col)) != 0 {
                    fillRect(left + col * cell, y + row * cell, left + (col + 1) * cell, y + (row + 1) * cell,
                             (255, 255, 255))
                }
            }
            left += (Digits.columns + 1) * cell
        }
    }
}

/// A 5x7 bitmap font of the ten digits, one row per element, high bit on the left.
enum Digits {
    static let columns = 5
    static let rows = 7
    static let glyphs: [[UInt8]] = [
        [0b01110, 0b10001, 0b10011, 0b10101, 0b11001, 0b10001, 0b01110],
        [0b00100, 0b01100, 0b00100, 0b00100, 0b00100, 0b00100, 0b01110],
        [0b01110, 0b10001, 0b00001, 0b00010, 0b00100, 0b01000, 0b11111],
        [0b11111, 0b00010, 0b00100, 0b00010, 0b00001, 0b10001, 0b01110],
        [0b00010, 0b00110, 0b01010, 0b10010, 0b11111, 0b00010, 0b00010],
        [0b11111, 0b10000, 0b11110, 0b00001, 0b00001, 0b10001, 0b01110],
        [0b00110, 0b01000, 0b10000, 0b11110, 0b10001, 0b10001, 0b01110],
        [0b11111, 0b00001, 0b00010, 0b00100, 0b01000, 0b01000, 0b01000],
        [0b01110, 0b10001, 0b10001, 0b01110, 0b10001, 0b10001, 0b01110],
        [0b01110, 0b10001, 0b10001, 0b01111, 0b00001, 0b00010, 0b01100],
    ]
}
