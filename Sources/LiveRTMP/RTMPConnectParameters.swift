/// The command object of `connect` (RTMP 1.0 §7.2.1.1), kept as the ordered AMF0 object
/// the peer sent, with typed access to the fields LiveLine uses.
///
/// The stream URL's query (a token, say) may ride in `app` ("live?token=…") or in
/// `tcUrl`; nginx-rtmp and SRS look in both, and `RTMPURL` puts it in both.
public struct RTMPConnectParameters: Equatable, Sendable {
    public var object: AMF0Object

    public init(_ object: AMF0Object) { self.object = object }

    /// The fields a publisher or player sends, in ffmpeg's order (byte for byte what
    /// ffmpeg 5.1 sends for the same values). `forPlaying` adds the capability fields
    /// ffmpeg sends only when it plays.
    public init(app: String, tcUrl: String, flashVer: String = "FMLE/3.0 (compatible; LiveLine)",
                swfUrl: String? = nil, pageUrl: String? = nil, forPlaying: Bool = false)
    {
        // ffmpeg adds type "nonprivate" only when publishing.
        var object = AMF0Object([.init("app", .string(app))])
        if !forPlaying { object["type"] = "nonprivate" }
        object["flashVer"] = .string(flashVer)
        if let swfUrl { object["swfUrl"] = .string(swfUrl) }
        object["tcUrl"] = .string(tcUrl)
        if forPlaying {
            object["fpad"] = false
            object["capabilities"] = 15
            object["audioCodecs"] = 4071
            object["videoCodecs"] = 252
            object["videoFunction"] = 1
        }
        if let pageUrl { object["pageUrl"] = .string(pageUrl) }
        self.object = object
    }

    public var app: String? {
        get { object["app"]?.stringValue }
        set { object["app"] = newValue.map(AMF0Value.string) }
    }

    public var tcUrl: String? {
        get { object["tcUrl"]?.stringValue }
        set { object["tcUrl"] = newValue.map(AMF0Value.string) }
    }

    public var flashVer: String? {
        get { object["flashVer"]?.stringValue }
        set { object["flashVer"] = newValue.map(AMF0Value.string) }
    }

    public var swfUrl: String? { object["swfUrl"]?.stringValue }
    public var pageUrl: String? { object["pageUrl"]?.stringValue }

    /// 0 for AMF0, 3 for AMF3; LiveLine answers in AMF0 either way.
    public var objectEncoding: Double? {
        get { object["objectEncoding"]?.numberValue }
        set { object["objectEncoding"] = newValue.map(AMF0Value.number) }
    }
}
