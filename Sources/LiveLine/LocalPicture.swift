import LiveCapture
import LiveCore
import Synchronization

extension HosterEvent {
    /// The local-picture event a captured frame gives: `firstLocalVideoFrame` for the
    /// first one (`previous` nil), `localVideoViewChanged` when its size differs from
    /// `previous`, else nil; `previous` becomes its size. A camera reports the size it
    /// captures at, before the picture is fitted to the stream.
    static func localPicture(_ frame: VideoFrame, from source: VideoSource,
                             after previous: inout (width: Int, height: Int)?) -> HosterEvent? {
        let size = (source as? V4L2Camera).map { (width: $0.mode.width, height: $0.mode.height) } ?? (width: frame.width, height: frame.height)
        defer { previous = size }
        guard let last = previous else { return .firstLocalVideoFrame(width: size.width, height: size.height) }
        return last != size ? .localVideoViewChanged(width: size.width, height: size.height) : nil
    }
}

/// The local picture's size over one push, for its first-frame and size events
/// (`HosterEvent.localPicture`); any thread.
final class LocalPictureSize: Sendable {
    private let size = Mutex<(width: Int, height: Int)?>(nil)

    /// The event `frame` gives, if any.
    func event(_ frame: VideoFrame, from source: VideoSource) -> HosterEvent? {
        size.withLock { HosterEvent.localPicture(frame, from: source, after: &$0) }
    }
}
