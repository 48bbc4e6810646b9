/// What one player measured (microseconds on the monotonic clock unless named otherwise).
struct PlayerResult {
    var startMicros: UInt64 = 0
    /// TCP connect, from start.
    var tcpConnectMicros: UInt64 = 0
    /// NetStream.Play.Start, from start (handshake, connect, createStream, play).
    var playMicros: UInt64 = 0
    /// The first video frame (a keyframe), from start; 0 when none arrived.
    var firstFrameMicros: UInt64 = 0
    /// The first frame inside the measurement window (lag and span start there).
    var firstFrameWallMicros: UInt64 = 0
    var lastFrameWallMicros: UInt64 = 0
    var closedMicros: UInt64 = 0
    var bytes: UInt64 = 0
    /// Video frames from the first keyframe on (sequence headers excluded).
    var frames = 0
    /// Video frames inside the measurement window.
    var windowFrames = 0
    var keyframes = 0
    var framesBeforeKeyframe = 0
    var videoHeaders = 0
    var audioMessages = 0
    /// The longest wall-clock wait between two frames.
    var maxGapMicros: UInt64 = 0
    /// The largest timestamp step between two frames (reported; keeping up is judged by
    /// counting frames, below).
    var maxMediaGapMilliseconds = 0
    /// Frames counted against what was published (`PublishedStream`): from the first
    /// keyframe in the measurement window to the last, the frames this player received
    /// and the frames the publisher sent between the same two keyframes.
    var countedFrames = 0
    var publishedFrames = 0
    /// Keyframes in the window that are not in the published recording.
    var unknownKeyframes = 0
    /// Media time from the first frame to the last.
    var mediaSpanMicros: Int64 = 0
    /// Lag at the last frame and the largest lag seen (see `LoadPlayer`).
    var lagMicros: Int64 = 0
    var maxLagMicros: Int64 = 0
    var failure: String?

    /// Frames the publisher sent that this player did not receive (between the window's
    /// first and last keyframes).
    var missingFrames: Int { publishedFrames - countedFrames }

    /// The bounds a player must stay within to count as keeping up.
    struct Bounds {
        /// Largest allowed lag.
        var maxLagMicros: Int64 = 1_000_000
        /// Media time received ÷ wall time since the first frame, at least.
        var minSpanRatio = 0.9
        /// Whether frames were counted against the published recording (`--published`).
        var countFrames = false
    }

    /// True when the player got every frame until `endMicros`: with `countFrames`, at
    /// least one whole GOP was counted and every frame published between the window's
    /// first and last keyframes arrived (no frame missing, no keyframe unknown); and the
    /// frames came at the stream's rate (media span ≥ `minSpanRatio` of the wall time
    /// since its first frame in the window), its lag never above `maxLagMicros`, and the
    /// connection open until `endMicros`.
    func keptUp(endMicros: UInt64, bounds: Bounds) -> Bool {
        guard failure == nil, closedMicros == 0 || closedMicros >= endMicros, windowFrames > 0, endMicros > firstFrameWallMicros else { return false }
        if bounds.countFrames {
            guard publishedFrames > 0, missingFrames == 0, unknownKeyframes == 0 else { return false }
        }
        let wall = Double(endMicros - firstFrameWallMicros)
        return Double(mediaSpanMicros) >= bounds.minSpanRatio * wall && maxLagMicros <= bounds.maxLagMicros
    }
}
