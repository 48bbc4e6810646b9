/// An HTTP-FLV stream URL, `http://host[:port]/path[?query]` (a LiveLine relay's
/// `/{app}/{stream}.flv`, nginx-http-flv's, SRS's, ffmpeg's `-listen 1` server). Plain
/// HTTP only; the default port is 80. The query is kept apart so a token can be put on
/// it (`?token=`, what the relay reads from browsers and players).
public struct HTTPFLVURL: Equatable, Hashable, Sendable, CustomStringConvertible {
    /// Why a string is not an HTTP-FLV URL LiveLine can play.
    public enum Error: Swift.Error, CustomStringConvertible, Equatable, Sendable {
        case unsupportedScheme(String)
        case missingHost(String)
        case userInfo(String)
        case badPort(String, reason: String)
        case missingPath(String)
        /// A space or a control character in the path or query (they must be percent-encoded).
        case badCharacter(String)

        public var description: String {
            switch self {
            case .unsupportedScheme(let url) where url.lowercased().hasPrefix("https://"):
                "\(RTMPURL.redacted(url)): HTTPS is not supported, only http://"
            case .unsupportedScheme(let url):
                "\(RTMPURL.redacted(url)) does not start with http://"
            case .missingHost(let url):
                "\(RTMPURL.redacted(url)) has no host: write http://HOST[:PORT]/APP/STREAM.flv"
            case .userInfo(let url):
                "\(RTMPURL.redacted(url)) has a user name or password before the host: leave them out "
                    + "(a relay with access control takes a token as ?token=…)"
            case .badPort(_, let reason):
                reason
            case .missingPath(let url):
                "\(RTMPURL.redacted(url)) has no path: write http://HOST[:PORT]/APP/STREAM.flv, e.g. /live/cam.flv"
            case .badCharacter(let url):
                "\(RTMPURL.redacted(url)) has a space or a control character in its path or query: percent-encode it"
            }
        }
    }

    public static let defaultPort = 80

    /// Host name or address (IPv6 without brackets).
    public var host: String
    public var port: Int
    /// The path, with its leading slash, without the query.
    public var path: String
    /// The text after '?', without it; nil when the URL has none.
    public var query: String?

    public init(host: String, port: Int = HTTPFLVURL.defaultPort, path: String, query: String? = nil) {
        self.host = host
        self.port = port
        self.path = path
        self.query = query
    }

    /// Parses `http://host[:port]/path[?query]`; a fragment (`#…`) is dropped.
    public init(parsing string: String) throws(Error) {
        let prefix = "http://"
        guard string.lowercased().hasPrefix(prefix) else { throw .unsupportedScheme(string) }
        var rest = Substring(string.dropFirst(prefix.count))
        if let hash = rest.firstIndex(of: "#") { rest = rest[..<hash] }
        if let mark = rest.firstIndex(of: "?") {
            query = String(rest[rest.index(after: mark)...])
            rest = rest[..<mark]
        } else {
            query = nil
        }
        let authorityEnd = rest.firstIndex(of: "/") ?? rest.endIndex
        do throws(RTMPURL.Error) {
            (host, port) = try RTMPURL.hostAndPort(rest[..<authorityEnd], of: string, defaultPort: Self.defaultPort)
        } catch {
            switch error {
            case .userInfo: throw .userInfo(string)
            case .missingHost: throw .missingHost(string)
            default: throw .badPort(string, reason: error.description)
            }
        }
        path = String(rest[authorityEnd...])
        guard path.count > 1 else { throw .missingPath(string) }
        // What goes on the request line must be one token: no spaces or control bytes.
        let unsafe: (Character) -> Bool = { $0.isWhitespace || ($0.asciiValue.map { $0 < 0x20 || $0 == 0x7F } ?? false) }
        guard !path.contains(where: unsafe), !(query ?? "").contains(where: unsafe) else { throw .badCharacter(string) }
    }

    /// The request target: the path with the query.
    public var target: String {
        guard let query else { return path }
        return "\(path)?\(query)"
    }

    /// The Host header's value (RFC 9112 §3.2): the port written when not 80.
    public var hostHeader: String {
        let name = host.contains(":") ? "[\(host)]" : host
        return port == Self.defaultPort ? name : "\(name):\(port)"
    }

    /// The URL for logs and error messages, with the query's secrets shown as `…`.
    public var description: String {
        RTMPURL.redacted("http://\(hostHeader)\(target)")
    }
}
