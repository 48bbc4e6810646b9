import LiveCore

/// One stage of the capture-side filter chain: takes an I420 frame and gives back the
/// processed frame (DESIGN.md §2, "source ──► filters").
///
/// `process` is called on the capture thread only, one frame at a time: a filter may
/// keep scratch buffers, and it configures them lazily on the first frame or when the
/// frame size changes, then reuses them, so processing allocates nothing per frame.
/// A filter may work in place and return the frame it was given, or return another
/// frame taken from its own `FramePool` (with the input's timing copied over).
/// Settings a filter exposes (strength, zoom, mirror, logo) are safe to change from
/// any thread and take effect at the next frame.
public protocol VideoFilter: AnyObject, Sendable {
    /// A short name for logs, stats and `FilterChain` look-ups (e.g. "beauty", "zoom").
    var name: String { get }

    /// Processes one frame. Called on the capture thread only.
    func process(_ frame: VideoFrame) -> VideoFrame
}
