/// One stream as `GET /api/streams` lists it.
public struct StreamStats: Codable, Equatable, Sendable {
    /// One player of the stream.
    public struct Player: Codable, Equatable, Sendable {
        /// "ip:port".
        public var address: String
        /// How it plays: "rtmp", "http-flv" or "ws-flv".
        public var transport: PlayerTransport
        public var droppedFrames: UInt64
        public var bytesOut: UInt64
        /// Bytes in its write queue now, and the most it ever held.
        public var queuedBytes: Int
        public var peakQueuedBytes: Int
    }

    public var app: String
    /// The stream name, without its query.
    public var name: String
    /// "ip:port" of the publisher, nil while players wait for one.
    public var publisher: String?
    /// "h264" for AVC, "codec N" for other FLV codec ids, nil before any video.
    public var codec: String?
    public var width: Int?
    public var height: Int?
    /// Video frames per second, measured over the last second.
    public var fps: Double
    /// Audio and video payload bits per second, measured over the last second.
    public var bitrate: Int
    /// "aac", or the FLV sound format's name ("mp3", "speex", …); nil (absent from the
    /// JSON, as every audio field) while the stream has sent no audio.
    public var audioCodec: String?
    /// Samples per second of the audio (AAC: from its AudioSpecificConfig), nil when unknown.
    public var audioSampleRate: Int?
    /// Channels of the audio, nil when unknown.
    public var audioChannels: Int?
    /// Audio payload bits per second, measured over the last second as `bitrate` is.
    public var audioBitrate: Int?
    public var players: Int
    /// Video frames not sent to players that fell behind, summed over players.
    public var droppedFrames: UInt64
    /// Video frames relayed since the current publisher started.
    public var frames: UInt64
    /// Seconds since the current publisher started.
    public var publishedSeconds: Double?
    /// Bytes the stream's GOP cache holds (payloads and their shared encodings).
    public var cachedBytes: Int
    public var playerDetails: [Player]
}
