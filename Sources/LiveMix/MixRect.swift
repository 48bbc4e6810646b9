/// One participant's rectangle on the mix canvas, with the width of the white border
/// drawn inside it (0: none). Coordinates and sizes are even (I420).
///
/// Encodes as `{"x":…,"y":…,"w":…,"h":…,"border":…}`, the objects
/// `liveline layout --json` prints.
public struct MixRect: Codable, Equatable, Hashable, Sendable, CustomStringConvertible {
    public var x: Int
    public var y: Int
    public var w: Int
    public var h: Int
    public var border: Int

    public init(x: Int, y: Int, w: Int, h: Int, border: Int = 0) {
        self.x = x
        self.y = y
        self.w = w
        self.h = h
        self.border = border
    }

    public var maxX: Int { x + w }
    public var maxY: Int { y + h }

    /// True when the two rectangles share at least one pixel.
    public func overlaps(_ other: MixRect) -> Bool {
        x < other.maxX && other.x < maxX && y < other.maxY && other.y < maxY
    }

    /// True when the pixel (px, py) lies inside.
    public func contains(x px: Int, y py: Int) -> Bool {
        px >= x && px < maxX && py >= y && py < maxY
    }

    /// The rectangle inside the border: where the participant's picture goes.
    public var inner: MixRect {
        MixRect(x: x + border, y: y + border, w: w - 2 * border, h: h - 2 * border)
    }

    public var description: String { "\(w)x\(h)+\(x)+\(y)" + (border > 0 ? " border \(border)" : "") }
}
