/// One answer of `VIDIOC_ENUM_FRAMESIZES`: a fixed size, or a range with steps.
public enum V4L2FrameSize: Equatable, Sendable, CustomStringConvertible {
    case discrete(width: Int, height: Int)
    case stepwise(minWidth: Int, maxWidth: Int, stepWidth: Int, minHeight: Int, maxHeight: Int, stepHeight: Int)

    /// The size of this entry nearest to `width`×`height` (itself when discrete;
    /// clamped to the range and rounded to the steps when stepwise).
    public func nearest(toWidth width: Int, height: Int) -> (width: Int, height: Int) {
        switch self {
        case .discrete(let w, let h):
            return (w, h)
        case .stepwise(let minW, let maxW, let stepW, let minH, let maxH, let stepH):
            func snap(_ v: Int, _ lo: Int, _ hi: Int, _ step: Int) -> Int {
                let s = max(1, step)
                let clamped = min(max(v, lo), hi)
                let snapped = lo + (clamped - lo + s / 2) / s * s
                return snapped > hi ? snapped - s : snapped
            }
            return (snap(width, minW, maxW, stepW), snap(height, minH, maxH, stepH))
        }
    }

    public var description: String {
        switch self {
        case .discrete(let w, let h): "\(w)x\(h)"
        case .stepwise(let minW, let maxW, let stepW, let minH, let maxH, let stepH):
            "\(minW)x\(minH)-\(maxW)x\(maxH) step \(stepW)x\(stepH)"
        }
    }
}
