/// The onMetaData properties of a stream (FLV spec v10.1 §E.5 "onMetaData"), kept as
/// the ordered ECMA array with typed access to the common keys.
public struct RTMPStreamMetadata: Equatable, Sendable {
    public var object: AMF0Object

    public init(_ object: AMF0Object) { self.object = object }

    /// The keys ffmpeg writes for an H.264 video stream (videocodecid 7 = AVC).
    public init(width: Int, height: Int, framerate: Double, videoDataRateKbps: Double, encoder: String = "LiveLine") {
        object = ["duration": 0, "width": .number(Double(width)), "height": .number(Double(height)),
                  "videodatarate": .number(videoDataRateKbps), "framerate": .number(framerate),
                  "videocodecid": .number(Double(FLVVideoTag.CodecID.avc)), "encoder": .string(encoder), "filesize": 0]
    }

    public var width: Double? { object["width"]?.numberValue }
    public var height: Double? { object["height"]?.numberValue }
    public var framerate: Double? { object["framerate"]?.numberValue }
    /// Kilobits per second.
    public var videoDataRate: Double? { object["videodatarate"]?.numberValue }
    /// 7 for AVC (FLV spec §E.4.3.1); some encoders write the string "avc1".
    public var videoCodecID: Double? { object["videocodecid"]?.numberValue }
    public var audioCodecID: Double? { object["audiocodecid"]?.numberValue }
    public var encoder: String? { object["encoder"]?.stringValue }
}
