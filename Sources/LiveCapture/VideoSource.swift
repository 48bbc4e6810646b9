import LiveCore

/// Where a hoster's pictures come from: a camera, a file or a generated pattern
/// (the anyRTC SDK's local video capturer, `setLocalVideoCapturer`).
///
/// A source is confined to the capture thread: `start`, `nextFrame` and `stop` are
/// called from that one thread. Every frame is I420 of exactly `width`×`height`,
/// comes from the source's `FramePool`, carries `pts = MediaTime(frame: index, fps: fps)`
/// and the wall-clock time it was captured (`Clock.wallMicros()`).
public protocol VideoSource: AnyObject {
    /// Width of the frames delivered, in pixels (even).
    var width: Int { get }
    /// Height of the frames delivered, in pixels (even).
    var height: Int { get }
    /// Frames per second delivered; the pts step is `1 / fps`.
    var fps: Int { get }
    /// A human description, such as `test pattern 1280x720@30` or `camera /dev/video0 (YUYV 640x480)`.
    var name: String { get }

    /// Prepares the source (opens the stream, starts the clock that paces it).
    func start() throws
    /// The next frame. Blocks until it is due when the source is paced in real time
    /// (or until the device delivers it); nil at the end of the stream.
    func nextFrame() throws -> VideoFrame?
    /// Releases what `start` acquired. Safe to call twice.
    func stop()
}
