import Foundation
import LiveCore

/// Counters of a running hoster pipeline, read from any thread as a snapshot.
public struct PipelineStats: Sendable, Equatable {
    /// Frames the source delivered.
    public var captured = 0
    /// Frames the encoder consumed.
    public var encoded = 0
    /// Frames dropped between capture and encode because the encoder fell behind.
    public var dropped = 0
    /// Encoded bytes handed to the sinks.
    public var bytes = 0
    public var keyframes = 0
    /// Time spent per stage, summed over all frames, in microseconds.
    public var sourceMicros: UInt64 = 0
    public var filterMicros: UInt64 = 0
    public var mixMicros: UInt64 = 0
    public var encodeMicros: UInt64 = 0
    /// Current encoder target bitrate in kbit/s.
    public var bitrateKbps = 0
    /// Audio blocks the audio source delivered (about 10 ms each).
    public var audioFramesCaptured = 0
    /// AAC frames (1024 samples each) handed to the sinks.
    public var audioFramesEncoded = 0
    /// AAC bytes handed to the sinks.
    public var audioBytes = 0

    public init() {}

    func perFrameMillis(_ micros: UInt64, _ frames: Int) -> Double {
        frames == 0 ? 0 : Double(micros) / Double(frames) / 1000
    }

    public var sourceMsPerFrame: Double { perFrameMillis(sourceMicros, captured) }
    public var filterMsPerFrame: Double { perFrameMillis(filterMicros, captured) }
    public var mixMsPerFrame: Double { perFrameMillis(mixMicros, captured) }
    public var encodeMsPerFrame: Double { perFrameMillis(encodeMicros, encoded) }
}
