/// The mix layout model (the anyRTC SDK's `ARMixVideoLayoutModel`, set with `setMixVideoModel:`);
/// raw values are the anyRTC SDK's.
public enum MixTemplate: Int, Sendable, CaseIterable, Codable {
    /// The host fills the canvas, co-hosts are small tiles on top (the default).
    case full = 0
    /// One equal others: every participant gets a cell of the same size in a grid.
    case equal = 1
    /// One big, three small: the host takes most of the canvas, co-hosts a strip beside it.
    case bigSmall = 2

    /// The name `liveline layout --template` takes.
    public var name: String {
        switch self {
        case .full: "full"
        case .equal: "equal"
        case .bigSmall: "bigSmall"
        }
    }

    /// `full`, `equal` or `bigSmall` (any case; the anyRTC SDK's `oneEqualOthers` and
    /// `oneBigThreeSmall` are accepted too); nil for anything else.
    public init?(name: String) {
        switch name.lowercased() {
        case "full": self = .full
        case "equal", "oneequalothers": self = .equal
        case "bigsmall", "big-small", "onebigthreesmall": self = .bigSmall
        default: return nil
        }
    }

    /// As `init?(name:)`, throwing an error that lists the accepted names.
    public init(parsing text: String) throws(MixLayout.Error) {
        guard let value = MixTemplate(name: text) else {
            throw .unknownValue(option: "mix template", value: text, expected: "full|equal|bigSmall")
        }
        self = value
    }
}

/// Where the co-host tiles sit horizontally (the anyRTC SDK's `ARMixVideoHorModel`).
public enum MixHorAlign: Int, Sendable, CaseIterable, Codable {
    case left = 0, center = 1, right = 2

    public var name: String {
        switch self {
        case .left: "left"
        case .center: "center"
        case .right: "right"
        }
    }

    public init?(name: String) {
        switch name.lowercased() {
        case "left": self = .left
        case "center", "centre": self = .center
        case "right": self = .right
        default: return nil
        }
    }

    public init(parsing text: String) throws(MixLayout.Error) {
        guard let value = MixHorAlign(name: text) else {
            throw .unknownValue(option: "horizontal alignment", value: text, expected: "left|center|right")
        }
        self = value
    }
}

/// Where the co-host tiles sit vertically (the anyRTC SDK's `ARMixVideoVerModel`).
public enum MixVerAlign: Int, Sendable, CaseIterable, Codable {
    case top = 0, center = 1, bottom = 2

    public var name: String {
        switch self {
        case .top: "top"
        case .center: "center"
        case .bottom: "bottom"
        }
    }

    public init?(name: String) {
        switch name.lowercased() {
        case "top": self = .top
        case "center", "centre": self = .center
        case "bottom": self = .bottom
        default: return nil
        }
    }

    public init(parsing text: String) throws(MixLayout.Error) {
        guard let value = MixVerAlign(name: text) else {
            throw .unknownValue(option: "vertical alignment", value: text, expected: "top|center|bottom")
        }
        self = value
    }
}

/// Which way the co-host tiles line up (the anyRTC SDK's `ARMixVideoDirModel`).
public enum MixDirection: Int, Sendable, CaseIterable, Codable {
    /// A horizontal row.
    case hor = 0
    /// A vertical column.
    case ver = 1

    public var name: String { self == .hor ? "hor" : "ver" }

    public init?(name: String) {
        switch name.lowercased() {
        case "hor", "horizontal": self = .hor
        case "ver", "vertical": self = .ver
        default: return nil
        }
    }

    public init(parsing text: String) throws(MixLayout.Error) {
        guard let value = MixDirection(name: text) else {
            throw .unknownValue(option: "direction", value: text, expected: "hor|ver")
        }
        self = value
    }
}
