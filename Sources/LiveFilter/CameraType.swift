/// What kind of camera pipeline the hoster runs; raw values are the anyRTC SDK's
/// `ARRtmpCameraType`: normal=0, beauty=1, thirdFilter=2.
public enum CameraType: Int, Sendable, CaseIterable, CustomStringConvertible {
    /// Frames go out as captured (mirror and zoom still apply).
    case normal = 0
    /// The beauty camera: `CameraFilterMode` filters and the watermark apply.
    case beauty = 1
    /// A "third-party filter": the application gets each raw captured frame and returns
    /// a processed one (the anyRTC SDK's `onRTCCaptureVideoPixelBuffer`; `FrameHookFilter`).
    case thirdFilter = 2

    /// Parses "normal", "beauty" or "third-filter" (also "hook", "custom" and the raw numbers).
    public init?(name: String) {
        switch name.lowercased() {
        case "normal", "0": self = .normal
        case "beauty", "1": self = .beauty
        case "third-filter", "thirdfilter", "third", "hook", "custom", "2": self = .thirdFilter
        default: return nil
        }
    }

    /// The CLI name: "normal", "beauty" or "third-filter".
    public var name: String {
        switch self {
        case .normal: "normal"
        case .beauty: "beauty"
        case .thirdFilter: "third-filter"
        }
    }

    public var description: String { name }
}
