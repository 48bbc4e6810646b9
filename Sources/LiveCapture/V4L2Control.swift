import CV4L2

/// The camera controls LiveLine exposes (the anyRTC SDK's camera zoom, focus and exposure).
public enum V4L2Control: String, CaseIterable, Sendable {
    case zoom, focus, exposure
    /// Continuous autofocus on (1) or off (0): `focus_automatic_continuous`.
    case focusAutomatic

    /// The V4L2 control id (`V4L2_CID_*_ABSOLUTE`).
    public var id: UInt32 {
        switch self {
        case .zoom: LL_V4L2_CID_ZOOM_ABSOLUTE
        case .focus: LL_V4L2_CID_FOCUS_ABSOLUTE
        case .exposure: LL_V4L2_CID_EXPOSURE_ABSOLUTE
        case .focusAutomatic: LL_V4L2_CID_FOCUS_AUTO
        }
    }
}
