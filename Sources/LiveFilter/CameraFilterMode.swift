/// The look applied to the camera picture; raw values are the anyRTC SDK's
/// `ARCameraFilterMode` (`setCameraFilter:`): beautiful=0, original=1, gaussianBlur=2.
public enum CameraFilterMode: Int, Sendable, CaseIterable, CustomStringConvertible {
    /// Skin smoothing, brightening and a warm tone (`BeautyFilter`); the anyRTC SDK's default
    /// when the beauty camera is used.
    case beautiful = 0
    /// The picture as captured.
    case original = 1
    /// A Gaussian blur over the whole picture (`GaussianBlurFilter`).
    case gaussianBlur = 2

    /// Parses the names the CLI accepts: "beauty", "original", "blur" (and a few
    /// spellings of each, plus the raw numbers).
    public init?(name: String) {
        switch name.lowercased() {
        case "beauty", "beautiful", "0": self = .beautiful
        case "original", "none", "off", "1": self = .original
        case "blur", "gaussian", "gaussianblur", "gaussian-blur", "2": self = .gaussianBlur
        default: return nil
        }
    }

    /// The CLI name: "beauty", "original" or "blur".
    public var name: String {
        switch self {
        case .beautiful: "beauty"
        case .original: "original"
        case .gaussianBlur: "blur"
        }
    }

    public var description: String { name }

    /// A fresh filter producing this look, nil for `.original`.
    public func makeFilter() -> VideoFilter? {
        switch self {
        case .beautiful: BeautyFilter()
        case .original: nil
        case .gaussianBlur: GaussianBlurFilter()
        }
    }
}
