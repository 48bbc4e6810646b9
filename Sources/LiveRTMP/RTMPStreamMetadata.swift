/// The onMetaData properties of a stream (FLV spec v10.1 §E.5 "onMetaData"), kept as
/// the ordered ECMA array with typed access to the common keys.
///
/// The publisher writes these numbers, so the typed accessors validate them, once,
/// here: a value that is not finite, not positive or beyond what any encoder sends
/// (`Bounds`) reads as absent, and any `Int(...)` of it downstream is safe.
public struct RTMPStreamMetadata: Equatable, Sendable {
    public var object: AMF0Object

    public init(_ object: AMF0Object) { self.object = object }

    /// The keys ffmpeg writes for an H.264 video stream (videocodecid 7 = AVC).
    public init(width: Int, height: Int, framerate: Double, videoDataRateKbps: Double, encoder: String = "LiveLine") {
        object = ["duration": 0, "width": .number(Double(width)), "height": .number(Double(height)),
                  "videodatarate": .number(videoDataRateKbps), "framerate": .number(framerate),
                  "videocodecid": .number(Double(FLVVideoTag.CodecID.avc)), "hasVideo": .boolean(true),
                  "encoder": .string(encoder), "filesize": 0]
    }

    /// An audio-only stream's keys (the anyRTC SDK's audio live mode): no video keys,
    /// `hasVideo` false, and the AAC keys of `setAudio`.
    public init(audioSampleRate: Int, channelCount: Int, audioDataRateKbps: Double, encoder: String = "LiveLine") {
        object = ["duration": 0, "hasVideo": .boolean(false), "encoder": .string(encoder), "filesize": 0]
        setAudio(sampleRate: audioSampleRate, channelCount: channelCount, dataRateKbps: audioDataRateKbps)
    }

    /// Adds the keys ffmpeg writes for an AAC track (audiocodecid 10, FLV spec §E.4.2.1):
    /// the sample rate, 16-bit samples (what AAC decodes to), stereo or not, the bitrate,
    /// and `hasAudio`. A stream without them says `hasAudio` false.
    public mutating func setAudio(sampleRate: Int, channelCount: Int, dataRateKbps: Double) {
        object["audiocodecid"] = .number(Double(FLVAudioTag.SoundFormat.aac))
        object["audiosamplerate"] = .number(Double(sampleRate))
        object["audiosamplesize"] = .number(16)
        object["stereo"] = .boolean(channelCount == 2)
        object["audiodatarate"] = .number(dataRateKbps)
        object["hasAudio"] = .boolean(true)
    }

    /// Samples per second of the audio track, 1…`Bounds.sampleRate`.
    public var audioSampleRate: Double? { number("audiosamplerate", max: Bounds.sampleRate) }
    /// The `stereo` key; nil when absent.
    public var stereo: Bool? { object["stereo"]?.booleanValue }
    /// `hasAudio` / `hasVideo`; nil when the publisher did not say.
    public var hasAudio: Bool? { object["hasAudio"]?.booleanValue }
    public var hasVideo: Bool? { object["hasVideo"]?.booleanValue }

    /// The largest values the typed accessors return.
    public enum Bounds {
        /// Width and height in pixels (H.264 level 6.2 allows 8192 × 4320; above 16384
        /// no encoder goes).
        public static let dimension = 16384.0
        public static let framerate = 1000.0
        /// Kilobits per second (10 Gbit/s).
        public static let dataRate = 10_000_000.0
        /// Hertz (the highest AudioSpecificConfig index is 96 kHz).
        public static let sampleRate = 192_000.0
    }

    /// Pixels, 1…`Bounds.dimension`.
    public var width: Double? { number("width", max: Bounds.dimension) }
    /// Pixels, 1…`Bounds.dimension`.
    public var height: Double? { number("height", max: Bounds.dimension) }
    /// Frames per second, above 0 and at most `Bounds.framerate`.
    public var framerate: Double? { number("framerate", max: Bounds.framerate) }
    /// Kilobits per second, above 0 and at most `Bounds.dataRate`.
    public var videoDataRate: Double? { number("videodatarate", max: Bounds.dataRate) }
    /// Kilobits per second, above 0 and at most `Bounds.dataRate`.
    public var audioDataRate: Double? { number("audiodatarate", max: Bounds.dataRate) }
    /// 7 for AVC (FLV spec §E.4.3.1); some encoders write the string "avc1".
    public var videoCodecID: Double? { object["videocodecid"]?.numberValue }
    public var audioCodecID: Double? { object["audiocodecid"]?.numberValue }
    public var encoder: String? { object["encoder"]?.stringValue }

    /// Property `key` when it is a number above 0 and at most `max` (NaN and the
    /// infinities fail both tests).
    private func number(_ key: String, max: Double) -> Double? {
        guard let value = object[key]?.numberValue, value > 0, value <= max else { return nil }
        return value
    }
}
