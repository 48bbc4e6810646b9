import LiveCore

/// Flips the picture left to right, exactly (every sample of every plane moves, none
/// is recomputed): the anyRTC SDK's `setFontCameraMirrorEnable:` for the front camera.
///
/// Works in place. `process` runs on the capture thread only; `isEnabled` may be
/// changed from any thread and applies from the next frame.
public final class MirrorFilter: VideoFilter, @unchecked Sendable {
    // @unchecked: `process` runs on the capture thread only; the switch is in a Mutex.
    public let name = "mirror"
    private let enabled: LockedValue<Bool>

    /// - Parameter enabled: whether frames are flipped (the anyRTC SDK's default is on).
    public init(enabled: Bool = true) {
        self.enabled = LockedValue(enabled)
    }

    /// Whether frames are flipped; `setFontCameraMirrorEnable:`.
    public var isEnabled: Bool {
        get { enabled.load() }
        set { enabled.store(newValue) }
    }

    public func process(_ frame: VideoFrame) -> VideoFrame {
        guard enabled.load() else { return frame }
        for p in 0..<3 {
            MirrorFilter.flipRows(frame.plane(p), stride: frame.stride(p),
                                  width: frame.planeWidth(p), height: frame.planeHeight(p))
        }
        return frame
    }

    static func flipRows(_ base: UnsafeMutablePointer<UInt8>, stride: Int, width: Int, height: Int) {
        for row in 0..<height {
            var left = base + row * stride
            var right = left + (width - 1)
            while left < right {
                let t = left.pointee
                left.pointee = right.pointee
                right.pointee = t
                left += 1
                right -= 1
            }
        }
    }
}
