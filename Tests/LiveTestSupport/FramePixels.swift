import LiveCore

/// The mean colour of a rectangle of a frame.
public func meanColor(_ frame: VideoFrame, x: Int, y: Int, width: Int, height: Int) -> YUVColor {
    var sums = (0, 0, 0), count = 0, chroma = 0
    for row in y..<(y + height) {
        for column in x..<(x + width) {
            sums.0 += Int(frame.y[row * frame.stride(0) + column])
            count += 1
        }
    }
    for row in (y / 2)..<((y + height) / 2) {
        for column in (x / 2)..<((x + width) / 2) {
            sums.1 += Int(frame.u[row * frame.stride(1) + column])
            sums.2 += Int(frame.v[row * frame.stride(2) + column])
            chroma += 1
        }
    }
    return YUVColor(y: UInt8(sums.0 / count), u: UInt8(sums.1 / max(1, chroma)), v: UInt8(sums.2 / max(1, chroma)))
}

/// Whether two colours are within `tolerance` on every component.
public func near(_ a: YUVColor, _ b: YUVColor, tolerance: Int = 6) -> Bool {
    abs(Int(a.y) - Int(b.y)) <= tolerance && abs(Int(a.u) - Int(b.u)) <= tolerance && abs(Int(a.v) - Int(b.v)) <= tolerance
}
