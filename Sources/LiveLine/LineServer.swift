import LiveRTMP

/// Where a co-host line lives: the signaling WebSocket (`ws://HOST:HTTPPORT/line`) and
/// the RTMP application the co-hosts publish their pubId streams to (DESIGN.md §4).
public struct LineServer: Sendable, Equatable {
    /// The signaling address, `ws://HOST:PORT/line`.
    public var signalURL: String
    /// Host, port and app of the co-host streams (`rtmp://HOST:PORT/APP/<pubId>`).
    public var rtmp: RTMPURL

    /// `rtmp` gives the RTMP host, port and app (its stream name is not used).
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

    /// The stream of the co-host with `pubId`; the co-host itself adds its publish
    /// query (`line=SECRET`) from the accepted application.
    public func streamURL(pubId: String, query: String? = nil) -> RTMPURL {
        RTMPURL(host: rtmp.host, port: rtmp.port, app: rtmp.app, streamName: pubId, query: query)
    }
}
