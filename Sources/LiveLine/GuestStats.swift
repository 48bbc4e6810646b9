/// The guest's figures, as a snapshot readable from any thread (the `--stats json`
/// lines and the final summary).
public struct GuestStats: Sendable, Equatable {
    /// Frames decoded.
    public var frames = 0
    /// The size of the last decoded frame (0 before the first).
    public var width = 0
    public var height = 0
    /// From the start of the play (connect, handshake and play included) to the first
    /// decoded frame; nil before it.
    public var firstFrameMs: Double?
    /// Glass-to-glass latency (decode-time wall clock − the capture time in LiveLine's
    /// SEI) over every frame that carried one; nil when none did.
    public var latencyP50Ms: Double?
    public var latencyP95Ms: Double?
    /// The largest latency, and the median over the first and over the last tenth of the
    /// frames in arrival order: a run whose end is slower than its start drifted.
    public var latencyMaxMs: Double?
    public var latencyStartP50Ms: Double?
    public var latencyEndP50Ms: Double?
    /// Frames that carried a capture time.
    public var latencySamples = 0
    /// Video packets received from the player.
    public var packets = 0
    public var keyframes = 0
    /// Packets dropped before decoding because the decoder fell behind (then to the next keyframe).
    public var droppedPackets = 0
    /// Packets latency control dropped undecoded (before the latest keyframe).
    public var skippedPackets = 0
    /// Frames latency control decoded without showing (still too far behind live).
    public var silentFrames = 0
    /// Reconnects that succeeded.
    public var reconnects = 0
    /// Packets the decoder refused (corrupt or undecodable data); decoding goes on.
    public var decodeErrors = 0
    /// Frames written to the y4m output.
    public var y4mFrames = 0
    /// Packets written to the recording.
    public var recordedPackets = 0
    /// Why the recording stopped before the end (a failed write, e.g. a full disk); nil
    /// while it goes on. Playing goes on without it.
    public var recordingError: String?
    /// The snapshot (`snapshotPath`) was written at the end of the run.
    public var snapshotWritten = false
    /// AAC frames received from the player (those latency control skipped included).
    public var audioPackets = 0
    /// Audio frames decoded.
    public var audioFrames = 0
    /// The rate and channels of the decoded audio (nil before the first).
    public var audioSampleRate: Int?
    public var audioChannels: Int?
    /// The level 0–100 (`AudioLevel`) of the last second of decoded audio; nil before any.
    public var audioLevel: Int?
    /// AAC frames latency control skipped with the video (or, without video, alone).
    public var skippedAudioPackets = 0
    /// AAC frames the decoder refused, and headers it could not be opened with.
    public var audioDecodeErrors = 0
    /// The stream has no video (its metadata says so, or a second of audio came
    /// without a video header).
    public var audioOnly = false
    /// A/V sync (`AVSyncMeter`): audio marker beep − marked video frame, ms, positive
    /// when audio is late; nil without pairs (streams without the test source's markers).
    public var avSyncP50Ms: Double?
    public var avSyncP95Ms: Double?
    public var avSyncSamples = 0
    /// Sample bytes written to `--wav` and `--pcm` (headers not counted).
    public var wavBytes: UInt64 = 0
    public var pcmBytes: UInt64 = 0
    /// Video and audio packets written to `--out`.
    public var outPackets = 0
    /// Bytes received from the server (the current connection's).
    public var bytesReceived: UInt64 = 0
    /// Bytes per second received over the last second (the anyRTC SDK's bitrate of
    /// onRtmpPlayerStatus, in bytes).
    public var receiveBytesPerSecond = 0.0
    /// Media received but not yet shown, in ms (the anyRTC SDK's cacheTime).
    public var cacheMilliseconds = 0

    public init() {}
}

/// Latency samples in microseconds and their percentiles. Pure value; the samples are
/// kept (8 bytes a frame: under 1 MB for an hour at 30 fps) so percentiles are exact.
public struct LatencyStatistics: Sendable, Equatable {
    public private(set) var samples: [Int64] = []

    public init() {
        samples.reserveCapacity(4096)
    }

    public mutating func add(micros: Int64) { samples.append(micros) }

    public var count: Int { samples.count }

    /// The `p`-th percentile (0…100) in milliseconds, nearest-rank; nil without samples.
    public func percentileMs(_ p: Double) -> Double? {
        guard !samples.isEmpty else { return nil }
        let sorted = samples.sorted()
        return Self.percentile(sorted, p)
    }

    /// p50 and p95 in milliseconds from one sort.
    public var p50p95Ms: (Double, Double)? {
        guard !samples.isEmpty else { return nil }
        let sorted = samples.sorted()
        return (Self.percentile(sorted, 50), Self.percentile(sorted, 95))
    }

    public var maxMs: Double? { samples.max().map { Double($0) / 1000 } }

    /// The median of the first (`fromEnd` false) or last `fraction` of the samples in
    /// arrival order, at least one sample; nil without samples.
    public func p50Ms(fraction: Double, fromEnd: Bool) -> Double? {
        guard !samples.isEmpty else { return nil }
        let count = max(1, Int(Double(samples.count) * fraction))
        let slice = fromEnd ? samples.suffix(count) : samples.prefix(count)
        return Self.percentile(slice.sorted(), 50)
    }

    static func percentile(_ sorted: [Int64], _ p: Double) -> Double {
        let rank = Int((p / 100 * Double(sorted.count)).rounded(.up))
        let index = min(sorted.count - 1, max(0, rank - 1))
        return Double(sorted[index]) / 1000
    }
}
