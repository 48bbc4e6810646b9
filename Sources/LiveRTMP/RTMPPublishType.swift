/// The publishing type argument of `publish` (RTMP 1.0 §7.2.2.6).
public struct RTMPPublishType: RawRepresentable, Hashable, Sendable {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// Live, not recorded (what ffmpeg and LiveLine send).
    public static let live = RTMPPublishType(rawValue: "live")
    /// Recorded to a new file.
    public static let record = RTMPPublishType(rawValue: "record")
    /// Appended to an existing recording.
    public static let append = RTMPPublishType(rawValue: "append")
}
