/// Settings of an `H264Encoder` (the anyRTC SDK's video profile: size, frame rate, bitrate).
public struct H264EncoderConfig: Sendable, Equatable {
    public var width: Int
    public var height: Int
    public var fps: Int
    /// Target (and, with CBR/VBV, maximum) bitrate in kbit/s.
    public var bitrateKbps: Int
    /// x264 preset: ultrafast … placebo.
    public var preset: String
    /// x264 tune; "zerolatency" turns off lookahead and frame threading so a frame
    /// leaves the encoder as soon as it enters.
    public var tune: String
    /// "baseline", "main" or "high".
    public var profile: String
    /// Seconds between IDR frames (a joining player waits at most this long for a picture).
    public var keyframeIntervalSeconds: Double
    /// B-frames between references; 0 keeps decode order = display order (lowest latency).
    public var bFrames: Int
    /// Encoder threads, 0 = automatic.
    public var threads: Int

    public init(width: Int, height: Int, fps: Int, bitrateKbps: Int, preset: String = "veryfast",
                tune: String = "zerolatency", profile: String = "high", keyframeIntervalSeconds: Double = 2,
                bFrames: Int = 0, threads: Int = 0) {
        self.width = width
        self.height = height
        self.fps = fps
        self.bitrateKbps = bitrateKbps
        self.preset = preset
        self.tune = tune
        self.profile = profile
        self.keyframeIntervalSeconds = keyframeIntervalSeconds
        self.bFrames = bFrames
        self.threads = threads
    }

    /// Frames between IDRs.
    public var gopSize: Int { max(1, Int((keyframeIntervalSeconds * Double(fps)).rounded())) }
}
