/// An RTMP stream URL, `rtmp://host[:port]/app[/instance]/stream[?query]`, split the way
/// ffmpeg's rtmpproto.c splits it, so LiveLine and ffmpeg send the same connect and
/// publish/play commands for the same URL:
///
/// - the path's first segment is the app; when the path has three or more segments the
///   second one belongs to the app too (`app/instance`), unless it contains a ':'
///   (a `mp4:` style stream prefix); everything after is the stream name, slashes
///   included: `/live/a` → app `live`, stream `a`; `/live/inst/a` → `live/inst`, `a`;
///   `/live/inst/a/b` → `live/inst`, `a/b`; `/vod/mp4:x/y` → `vod`, `mp4:x/y`.
/// - the query (after the first '?') is kept apart and sent on the stream name of
///   publish and play (`stream?query`), as ffmpeg does; nginx-rtmp passes it to its
///   on_publish/on_play hooks and SRS reads it there.
/// - the default port is 1935; `tcUrl` is `rtmp://host:port/app`, port written out,
///   as ffmpeg writes it.
public struct RTMPURL: Equatable, Hashable, Sendable, CustomStringConvertible {
    /// Why a string is not an RTMP URL LiveLine can use. Each case keeps the text as
    /// given; the description shows it with its credentials hidden (see `redacted`).
    public enum Error: Swift.Error, CustomStringConvertible, Equatable, Sendable {
        case unsupportedScheme(String)
        case missingHost(String)
        /// `rtmp://user:password@host/…`: RTMP has no place for them.
        case userInfo(String)
        /// The text after the host's ':' is not a number.
        case portNotANumber(String, port: String)
        /// The port is a number outside 1…65535.
        case portOutOfRange(String, port: String)
        /// The path has no first segment (`rtmp://h`, `rtmp://h/`, `rtmp://h//cam`).
        case missingApp(String)
        case missingStreamName(String)

        public var description: String {
            switch self {
            case .unsupportedScheme(let url) where url.lowercased().hasPrefix("rtmps://"):
                "\(RTMPURL.redacted(url)): RTMPS (RTMP over TLS) is not supported, only rtmp://"
            case .unsupportedScheme(let url):
                "\(RTMPURL.redacted(url)) does not start with rtmp:// (the only scheme LiveLine speaks)"
            case .missingHost(let url):
                "\(RTMPURL.redacted(url)) has no host: write rtmp://HOST[:PORT]/APP/STREAM"
            case .userInfo(let url):
                "\(RTMPURL.redacted(url)) has a user name or password before the host, which RTMP URLs cannot carry: "
                    + "leave them out (a relay with access control takes a token as ?token=…)"
            case .portNotANumber(let url, let port) where port.isEmpty:
                "\(RTMPURL.redacted(url)) has no port after the ':'"
            case .portNotANumber(let url, let port):
                "\(RTMPURL.redacted(url)) has a port that is not a number: '\(port)'"
            case .portOutOfRange(let url, let port):
                "\(RTMPURL.redacted(url)) has the port \(port), outside 1…65535"
            case .missingApp(let url):
                "\(RTMPURL.redacted(url)) has no application name: write rtmp://HOST[:PORT]/APP/STREAM, e.g. /live/cam"
            case .missingStreamName(let url):
                "\(RTMPURL.redacted(url)) has no stream name: write rtmp://HOST[:PORT]/APP/STREAM, e.g. /live/cam"
            }
        }
    }

    public static let defaultPort = 1935

    /// Host name or address (IPv6 without brackets).
    public var host: String
    public var port: Int
    /// The application, possibly `app/instance`.
    public var app: String
    /// The stream name without the query.
    public var streamName: String
    /// The text after '?', without it; nil when the URL has none.
    public var query: String?

    public init(host: String, port: Int = RTMPURL.defaultPort, app: String, streamName: String, query: String? = nil) {
        self.host = host
        self.port = port
        self.app = app
        self.streamName = streamName
        self.query = query
    }

    /// Parses `rtmp://host[:port]/app[/instance]/stream[?query]`.
    public init(parsing string: String) throws {
        let prefix = "rtmp://"
        guard string.lowercased().hasPrefix(prefix) else { throw Error.unsupportedScheme(string) }
        var rest = Substring(string.dropFirst(prefix.count))
        if let mark = rest.firstIndex(of: "?") {
            query = String(rest[rest.index(after: mark)...])
            rest = rest[..<mark]
        } else {
            query = nil
        }
        let authorityEnd = rest.firstIndex(of: "/") ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        // One slash ends the authority; an empty segment after it is a missing app.
        let path = rest[authorityEnd...].dropFirst()
        (host, port) = try Self.hostAndPort(authority, of: string, defaultPort: Self.defaultPort)
        let segments = path.split(separator: "/", omittingEmptySubsequences: false)
        guard let first = segments.first, !first.isEmpty else { throw Error.missingApp(string) }
        var appSegments = 1
        if segments.count >= 3 && !segments[1].contains(":") { appSegments = 2 }
        app = segments[..<appSegments].joined(separator: "/")
        streamName = segments[appSegments...].joined(separator: "/")
        guard !streamName.isEmpty else { throw Error.missingStreamName(string) }
    }

    /// The host and port of a URL's authority (`host[:port]`, an IPv6 literal in
    /// brackets) with `defaultPort` when none is written; `string` is the whole URL, for
    /// the errors. HTTP-FLV URLs are read with it too.
    static func hostAndPort(_ authority: Substring, of string: String, defaultPort: Int) throws(Error) -> (String, Int) {
        guard !authority.contains("@") else { throw Error.userInfo(string) }
        // Host and port; an IPv6 literal is in brackets.
        var hostPart = authority
        var portPart: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw Error.missingHost(string) }
            hostPart = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if after.hasPrefix(":") {
                portPart = after.dropFirst()
            } else if !after.isEmpty {
                throw Error.portNotANumber(string, port: String(after))
            }
        } else if let colon = authority.lastIndex(of: ":") {
            hostPart = authority[..<colon]
            portPart = authority[authority.index(after: colon)...]
        }
        guard !hostPart.isEmpty else { throw Error.missingHost(string) }
        if let portPart {
            guard !portPart.isEmpty, portPart.allSatisfy({ $0.isASCII && $0.isNumber }) else {
                throw Error.portNotANumber(string, port: String(portPart))
            }
            guard let value = Int(portPart), (1...65535).contains(value) else {
                throw Error.portOutOfRange(string, port: String(portPart))
            }
            return (String(hostPart), value)
        }
        return (String(hostPart), defaultPort)
    }

    /// `rtmp://host:port/app`: the tcUrl of connect.
    public var tcUrl: String { "rtmp://\(hostForURL):\(port)/\(app)" }

    /// The name to send in publish and play: the stream name with the query.
    public var streamNameWithQuery: String {
        guard let query else { return streamName }
        return "\(streamName)?\(query)"
    }

    /// The URL for logs and error messages: the values of the query's secrets (`token`,
    /// `line`, `lineKey`) are shown as `…`, so they never reach a log or a terminal.
    public var description: String {
        guard let query else { return "\(tcUrl)/\(streamName)" }
        return "\(tcUrl)/\(streamName)?\(Self.redactedQuery(Substring(query)))"
    }

    /// Query keys whose values are credentials.
    public static let secretQueryKeys: Set<String> = ["token", "line", "lineKey", "call"]

    /// `text` (a URL that may not parse) fit for a log or an error message: a user name
    /// and password before the host become `…@` and the values of the query's secrets
    /// `…`, as in `description`.
    public static func redacted(_ text: String) -> String {
        var shown = text
        var query: Substring?
        if let mark = shown.firstIndex(of: "?") {
            query = shown[shown.index(after: mark)...]
            shown = String(shown[..<mark])
        }
        let authorityStart = shown.range(of: "://").map(\.upperBound) ?? shown.startIndex
        let authorityEnd = shown[authorityStart...].firstIndex(of: "/") ?? shown.endIndex
        if let at = shown[authorityStart..<authorityEnd].lastIndex(of: "@") {
            shown.replaceSubrange(authorityStart..<at, with: "…")
        }
        guard let query else { return shown }
        return shown + "?" + redactedQuery(query)
    }

    /// A query with the values of `secretQueryKeys` shown as `…`.
    private static func redactedQuery(_ query: Substring) -> String {
        query.split(separator: "&", omittingEmptySubsequences: false).map { pair -> String in
            let key = pair.split(separator: "=", maxSplits: 1).first.map(String.init) ?? ""
            return secretQueryKeys.contains(key) && pair.contains("=") ? "\(key)=…" : String(pair)
        }.joined(separator: "&")
    }

    private var hostForURL: String { host.contains(":") ? "[\(host)]" : host }

    /// A stream name as publish/play carry it, split at the first '?' into the name and
    /// the query (nil when there is none).
    public static func splitQuery(_ name: String) -> (name: String, query: String?) {
        guard let mark = name.firstIndex(of: "?") else { return (name, nil) }
        return (String(name[..<mark]), String(name[name.index(after: mark)...]))
    }

    /// The value of `key` in a query string (`a=1&b=2`), without percent-decoding; nil
    /// when absent.
    public static func queryValue(_ key: String, in query: String?) -> String? {
        guard let query else { return nil }
        for pair in query.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            if parts.first.map(String.init) == key { return parts.count > 1 ? String(parts[1]) : "" }
        }
        return nil
    }
}
