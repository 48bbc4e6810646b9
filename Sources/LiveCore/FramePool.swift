import Foundation
import Synchronization

/// Recycles frames of one size so the hot path allocates no pixel memory.
///
/// The pool keeps a strong reference to every frame it made; a frame is free again
/// when the pool holds the only reference (the stage that used it let it go).
/// Safe to use from any thread.
public final class FramePool: Sendable {
    public let width: Int
    public let height: Int
    /// Frames kept for reuse at most; beyond it `acquire` still hands out a frame
    /// (never stalls the pipeline) but lets it go when it is released.
    public let capacity: Int

    private struct State {
        var frames: [VideoFrame] = []
        var allocations = 0
    }

    private let state = Mutex(State())

    public init(width: Int, height: Int, capacity: Int = 8) {
        self.width = (width + 1) & ~1
        self.height = (height + 1) & ~1
        self.capacity = capacity
    }

    /// A frame nobody else holds, reused when possible. Its pixels are whatever the
    /// last user left; its timing is reset.
    public func acquire() -> VideoFrame {
        state.withLock { state in
            for i in state.frames.indices where isKnownUniquelyReferenced(&state.frames[i]) {
                let frame = state.frames[i]
                frame.pts = .zero
                frame.captureTimeMicros = 0
                return frame
            }
            state.allocations += 1
            let frame = VideoFrame(width: width, height: height)
            if state.frames.count < capacity { state.frames.append(frame) }
            return frame
        }
    }

    /// How many frames the pool has allocated so far (a steady pipeline stops growing it).
    public var allocations: Int { state.withLock { $0.allocations } }
}
