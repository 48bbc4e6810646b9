import LiveRTMP
import LiveServer

/// Where a co-host line lives: the signaling WebSocket (`ws://HOST:HTTPPORT/line`) and
/// the RTMP application the co-hosts publish their pubId streams to (DESIGN.md §4).
public struct LineServer: Sendable, Equatable {
    /// The signaling address, `ws://HOST:PORT/line`.
    public var signalURL: String
    /// Host, port and app of the co-host streams (`rtmp://HOST:PORT/APP/<pubId>`); for
    /// the hoster, its own push URL: on a server without tokens, the line named like
    /// its stream is created with that stream and the `lineKey=` of its query (see
    /// `hosterPushURL`).
    public var rtmp: RTMPURL

    /// `rtmp` gives the RTMP host, port and app (and, for the hoster, its stream).
    public init(signalURL: String, rtmp: RTMPURL) {
        self.signalURL = signalURL
        self.rtmp = rtmp
    }

    /// The signaling address on the RTMP URL's host at `httpPort` (`liveline serve`'s
    /// default HTTP port is 8080).
    public init(rtmp: RTMPURL, httpPort: Int = 8080) {
        let host = rtmp.host.contains(":") ? "[\(rtmp.host)]" : rtmp.host
        self.init(signalURL: "ws://\(host):\(httpPort)/line", rtmp: rtmp)
    }

    /// The hoster's push URL for a line on a server without tokens: `url` with a fresh
    /// random `lineKey=` added to its query (kept when it has one). Push to it and give
    /// it to `LineServer` too: the server lets only the publisher holding this key
    /// create the line named like the stream, so nobody can take the line first.
    public static func hosterPushURL(_ url: RTMPURL) -> RTMPURL {
        guard LineRegistry.queryValue("lineKey", in: url.query) == nil else { return url }
        var pushed = url
        let key = "lineKey=" + LineRegistry.randomToken(24)
        pushed.query = url.query.map { $0.isEmpty ? key : $0 + "&" + key } ?? key
        return pushed
    }

    /// The `lineKey=` of the hoster's push URL, if any.
    var lineKey: String? { LineRegistry.queryValue("lineKey", in: rtmp.query) }

    /// The stream of the co-host with `pubId`; the co-host itself adds its publish
    /// query (`line=SECRET`) from the accepted application.
    public func streamURL(pubId: String, query: String? = nil) -> RTMPURL {
        RTMPURL(host: rtmp.host, port: rtmp.port, app: rtmp.app, streamName: pubId, query: query)
    }
}
