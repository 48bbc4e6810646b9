/// The information object of onStatus, onFCPublish and _error (RTMP 1.0 §7.2.2):
/// level, code and description, plus whatever else the peer adds (details, clientid).
public struct RTMPStatus: Equatable, Sendable {
    public var level: String
    public var code: String
    public var description: String
    /// Further properties, kept in order after the three above.
    public var extra: AMF0Object

    public init(level: String = "status", code: String, description: String = "", extra: AMF0Object = AMF0Object()) {
        self.level = level
        self.code = code
        self.description = description
        self.extra = extra
    }

    /// Reads a status object; missing fields become empty strings.
    public init(_ object: AMF0Object) {
        level = object["level"]?.stringValue ?? ""
        code = object["code"]?.stringValue ?? ""
        description = object["description"]?.stringValue ?? ""
        extra = AMF0Object(object.properties.filter { !["level", "code", "description"].contains($0.name) })
    }

    public var object: AMF0Object {
        AMF0Object([.init("level", .string(level)), .init("code", .string(code)), .init("description", .string(description))]
                   + extra.properties)
    }

    /// True for level "error".
    public var isError: Bool { level == "error" }

    /// The codes LiveLine sends and looks for.
    public enum Code {
        public static let connectSuccess = "NetConnection.Connect.Success"
        public static let connectRejected = "NetConnection.Connect.Rejected"
        public static let publishStart = "NetStream.Publish.Start"
        public static let publishBadName = "NetStream.Publish.BadName"
        public static let unpublishSuccess = "NetStream.Unpublish.Success"
        public static let playReset = "NetStream.Play.Reset"
        public static let playStart = "NetStream.Play.Start"
        public static let playStop = "NetStream.Play.Stop"
        public static let playStreamNotFound = "NetStream.Play.StreamNotFound"
        public static let playFailed = "NetStream.Play.Failed"
        public static let playUnpublishNotify = "NetStream.Play.UnpublishNotify"
        public static let playPublishNotify = "NetStream.Play.PublishNotify"
        public static let deleteStreamSuccess = "NetStream.DeleteStream.Suceeded"
    }
}
