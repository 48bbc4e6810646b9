import LiveCore

/// Hands each frame to application code and passes on what it returns: the anyRTC SDK's
/// "third-party filter" camera type (`ARRtmpCameraTypeThreeFilter`) with its
/// `onRTCCaptureVideoPixelBuffer:` callback, which receives every raw captured frame
/// and returns it processed or untouched.
///
/// The closure runs on the capture thread, once per frame; it may change the frame in
/// place and return it, or return another frame of any size (it must not keep the
/// frame it was given after returning another one, since that frame returns to its pool).
public final class FrameHookFilter: VideoFilter, @unchecked Sendable {
    // @unchecked: the hook is called only on the capture thread (`process`), one frame at a time.
    public let name: String
    private let hook: (VideoFrame) -> VideoFrame

    public init(name: String = "hook", _ hook: @escaping (VideoFrame) -> VideoFrame) {
        self.name = name
        self.hook = hook
    }

    public func process(_ frame: VideoFrame) -> VideoFrame {
        hook(frame)
    }
}
