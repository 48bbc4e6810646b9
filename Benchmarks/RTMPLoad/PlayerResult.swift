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
    /// The largest timestamp step between two frames (a dropped run of frames shows here).
    var maxMediaGapMilliseconds = 0
    /// Media time from the first frame to the last.
    var mediaSpanMicros: Int64 = 0
    /// Lag at the last frame and the largest lag seen (see `LoadPlayer`).
    var lagMicros: Int64 = 0
    var maxLagMicros: Int64 = 0
    var failure: String?

    /// The bounds a player must stay within to count as keeping up.
    struct Bounds {
        /// Largest allowed lag.
        var maxLagMicros: Int64 = 1_000_000
        /// Largest allowed timestamp step between frames (a 30 fps stream steps 33 ms).
        var maxMediaGapMilliseconds = 500
        /// Media time received ÷ wall time since the first frame, at least.
        var minSpanRatio = 0.9
    }

    /// True when the player got frames until `endMicros` at the stream's rate: media
    /// span ≥ `minSpanRatio` of the wall time since its first frame in the window, lag never above
    /// `maxLagMicros`, no timestamp step above `maxMediaGapMilliseconds` (no frames
    /// dropped), and the connection open until `endMicros`.
    func keptUp(endMicros: UInt64, bounds: Bounds) -> Bool {
        guard failure == nil, closedMicros == 0 || closedMicros >= endMicros, windowFrames > 0, endMicros > firstFrameWallMicros else { return false }
        let wall = Double(endMicros - firstFrameWallMicros)
        return Double(mediaSpanMicros) >= bounds.minSpanRatio * wall
            && maxLagMicros <= bounds.maxLagMicros
            && maxMediaGapMilliseconds <= bounds.maxMediaGapMilliseconds
    }
}
