import LiveRTMP
import LiveSignal

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
    /// default HTTP port is 8080). Prefer `discover`, which asks the RTMP server where
    /// its signaling really is.
    public init(rtmp: RTMPURL, httpPort: Int = 8080) {
        let host = rtmp.host.contains(":") ? "[\(rtmp.host)]" : rtmp.host
        self.init(signalURL: "ws://\(host):\(httpPort)/line", rtmp: rtmp)
    }

    /// The hoster's push URL for a line on a server without tokens: `url` with a fresh
    /// random `lineKey=` added to its query (kept when it has one). Push to it and give
    /// it to `LineServer` too: the server lets only the publisher holding this key
    /// create the line named like the stream, so nobody can take the line first.
    public static func hosterPushURL(_ url: RTMPURL) -> RTMPURL {
        guard LineStreams.queryValue("lineKey", in: url.query) == nil else { return url }
        var pushed = url
        let key = "lineKey=" + LineStreams.randomToken(24)
        pushed.query = url.query.map { $0.isEmpty ? key : $0 + "&" + key } ?? key
        return pushed
    }

    /// The `lineKey=` of the hoster's push URL, if any.
    var lineKey: String? { LineStreams.queryValue("lineKey", in: rtmp.query) }

    /// The stream of the co-host with `pubId`; the co-host itself adds its publish
    /// query (`line=SECRET`) from the accepted application.
    public func streamURL(pubId: String, query: String? = nil) -> RTMPURL {
        RTMPURL(host: rtmp.host, port: rtmp.port, app: rtmp.app, streamName: pubId, query: query)
    }
}

extension LineServer {
    /// Why the line's signaling could not be found from an RTMP URL.
    public enum DiscoveryError: Error, CustomStringConvertible, Equatable, Sendable {
        /// The RTMP server could not be asked (cannot connect, not RTMP, refused, timed out).
        case unreachable(rtmp: String, reason: String)
        /// The RTMP server names no line signaling: it is not LiveLine's relay
        /// (nginx-rtmp, SRS, a CDN), so the signaling address must be given.
        case notAnnounced(rtmp: String)
        /// The signaling URL given is not the one the RTMP server announces: a line opened
        /// there would belong to another server, whose co-hosts this one refuses.
        case mismatch(rtmp: String, given: String, announced: String)

        public var description: String {
            switch self {
            case .unreachable(let rtmp, let reason):
                "cannot ask \(rtmp) where its co-host line is: \(reason)"
            case .notAnnounced(let rtmp):
                "\(rtmp) does not say where its co-host line signaling is (it is not liveline serve): "
                    + "give the signaling URL, ws://HOST:PORT/line, of the server that runs the line for it"
            case .mismatch(let rtmp, let given, let announced):
                "\(rtmp) runs its co-host line at \(announced), not at \(given) "
                    + "(a line there would accept co-hosts whose push this server refuses)"
            }
        }

        /// The signaling URL to use instead, when the server named one.
        public var announcedURL: String? {
            if case .mismatch(_, _, let announced) = self { return announced }
            return nil
        }
    }

    /// The line of the server that serves `rtmp`, found by asking it (`RTMPConnectProbe`:
    /// LiveLine's relay names its signaling in connect's answer, see
    /// `LineSignalAnnouncement`). `signalURL`, when given, must be the one announced
    /// (same host, port and path; loopback names count as one host), else `.mismatch`;
    /// from a server that announces nothing it is taken as given, and without it there
    /// is no line to find (`.notAnnounced`). Blocks for up to `timeout`.
    public static func discover(rtmp: RTMPURL, signalURL: String? = nil,
                                timeout: Duration = .seconds(5)) throws(DiscoveryError) -> LineServer {
        let server = "rtmp://\(rtmp.host.contains(":") ? "[\(rtmp.host)]" : rtmp.host):\(rtmp.port)"
        let information: AMF0Object
        do {
            information = try RTMPConnectProbe.information(of: rtmp, timeout: timeout)
        } catch {
            throw .unreachable(rtmp: server, reason: "\(error)")
        }
        guard let announcement = LineSignalAnnouncement(information: information) else {
            guard let signalURL else { throw .notAnnounced(rtmp: server) }
            return LineServer(signalURL: signalURL, rtmp: rtmp)
        }
        let announced = announcement.signalURL(rtmpHost: rtmp.host)
        if let signalURL, !sameEndpoint(signalURL, announced) {
            throw .mismatch(rtmp: server, given: signalURL, announced: announced)
        }
        return LineServer(signalURL: signalURL ?? announced, rtmp: rtmp)
    }

    /// Two ws:// URLs name the same host, port and path.
    static func sameEndpoint(_ a: String, _ b: String) -> Bool {
        guard let x = endpoint(a), let y = endpoint(b) else { return a == b }
        let loopback: Set<String> = ["localhost", "127.0.0.1", "::1"]
        let sameHost = x.host == y.host || (loopback.contains(x.host) && loopback.contains(y.host))
        return sameHost && x.port == y.port && x.path == y.path
    }

    /// Host (lowercased, without brackets), port (80 when absent) and path ("/" when absent) of a ws:// URL.
    static func endpoint(_ url: String) -> (host: String, port: Int, path: String)? {
        guard url.lowercased().hasPrefix("ws://") else { return nil }
        let rest = url.dropFirst(5)
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        let authority = rest[..<slash], path = slash == rest.endIndex ? "/" : String(rest[slash...])
        var host = Substring(authority), port = 80
        if authority.hasPrefix("["), let close = authority.firstIndex(of: "]") {
            host = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if after.hasPrefix(":") { guard let p = Int(after.dropFirst()) else { return nil }; port = p }
        } else if let colon = authority.lastIndex(of: ":") {
            host = authority[..<colon]
            guard let p = Int(authority[authority.index(after: colon)...]) else { return nil }
            port = p
        }
        return (host.lowercased(), port, path)
    }
}
