/// A colour in limited-range BT.601 YUV, the values an I420 frame stores.
public struct YUVColor: Equatable, Hashable, Sendable, CustomStringConvertible {
    public var y: UInt8
    public var u: UInt8
    public var v: UInt8

    public init(y: UInt8, u: UInt8, v: UInt8) {
        self.y = y
        self.u = u
        self.v = v
    }

    /// Converts full-range 8-bit RGB with the BT.601 limited-range matrix (as swscale does by default).
    public init(r: UInt8, g: UInt8, b: UInt8) {
        let r = Int(r), g = Int(g), b = Int(b)
        func clamp(_ v: Int) -> UInt8 { UInt8(max(0, min(255, v))) }
        y = clamp((66 * r + 129 * g + 25 * b + 128) >> 8 + 16)
        u = clamp((-38 * r - 74 * g + 112 * b + 128) >> 8 + 128)
        v = clamp((112 * r - 94 * g - 18 * b + 128) >> 8 + 128)
    }

    /// Converts back to full-range RGB.
    public var rgb: (r: UInt8, g: UInt8, b: UInt8) {
        let c = Int(y) - 16, d = Int(u) - 128, e = Int(v) - 128
        func clamp(_ v: Int) -> UInt8 { UInt8(max(0, min(255, v))) }
        return (clamp((298 * c + 409 * e + 128) >> 8),
                clamp((298 * c - 100 * d - 208 * e + 128) >> 8),
                clamp((298 * c + 516 * d + 128) >> 8))
    }

    public var description: String { "YUV(\(y),\(u),\(v))" }

    public static let black = YUVColor(r: 0, g: 0, b: 0)
    public static let white = YUVColor(r: 255, g: 255, b: 255)
    public static let grey = YUVColor(r: 128, g: 128, b: 128)

    /// The colours `color:NAME` accepts, by name.
    public static let named: [String: (UInt8, UInt8, UInt8)] = [
        "black": (0, 0, 0), "white": (255, 255, 255), "grey": (128, 128, 128), "gray": (128, 128, 128),
        "red": (255, 0, 0), "green": (0, 255, 0), "blue": (0, 0, 255),
        "yellow": (255, 255, 0), "cyan": (0, 255, 255), "magenta": (255, 0, 255),
        "orange": (255, 165, 0), "purple": (128, 0, 128), "pink": (255, 192, 203),
        "navy": (0, 0, 128), "teal": (0, 128, 128), "olive": (128, 128, 0), "maroon": (128, 0, 0),
    ]

    /// Parses a named colour (`red`) or `#RRGGBB`; nil when it is neither.
    public init?(parsing text: String) {
        let lower = text.lowercased()
        if let (r, g, b) = YUVColor.named[lower] {
            self.init(r: r, g: g, b: b)
            return
        }
        guard lower.hasPrefix("#"), lower.count == 7, let value = UInt32(lower.dropFirst(), radix: 16) else {
            return nil
        }
        self.init(r: UInt8(value >> 16 & 0xFF), g: UInt8(value >> 8 & 0xFF), b: UInt8(value & 0xFF))
    }
}
