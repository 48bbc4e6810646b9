import LiveRTMP
import Synchronization

/// Kit-wide settings and facts (the anyRTC SDK's ARRtmpEngine class methods).
///
/// The SDK's `initEngine:token:` configures an app id and developer token for its
/// cloud; LiveLine has no cloud account to name (the server is the relay in the URL,
/// tokens are given per push or line: `Hoster.Options.tokenProvider`,
/// `Hoster.createLine(token:)`), so it has no equivalent. `setLogLevel:` is
/// `Log.threshold` (LiveCore).
public enum LiveLineSDK {
    /// The kits' version (the anyRTC SDK's getSDKVersion); `liveline --version` prints it.
    public static let version = "0.1.0"

    /// The anyRTC SDK's getSDKVersion.
    public static func getSDKVersion() -> String { version }

    /// A server's address: where a push or play URL without one goes.
    public struct Server: Sendable, Equatable {
        public var host: String
        public var port: Int

        public init(host: String, port: Int = 1935) {
            self.host = host
            self.port = port
        }
    }

    private static let server = Mutex<Server?>(nil)

    /// The server a URL without one goes to (`live/room`, `rtmp:///live/room`): the
    /// anyRTC SDK's configServerForPriCloud:port: (a private deployment instead of its
    /// cloud); `Hoster.startPush(url:)` and `Guest.startPlay(url:sink:play:)` given text
    /// consult it. nil (the default): such a URL is an error. Any thread.
    public static var defaultServer: Server? {
        get { server.withLock { $0 } }
        set { server.withLock { $0 = newValue } }
    }

    /// The anyRTC SDK's configServerForPriCloud:port: (`defaultServer`).
    public static func configServerForPriCloud(address: String, port: Int) {
        defaultServer = Server(host: address, port: port)
    }

    /// `text` as a push or play URL: as given when it names a server, else on
    /// `defaultServer` (when set). Throws the URL's parse error otherwise.
    public static func pushURL(_ text: String) throws -> RTMPURL {
        let scheme = "rtmp://"
        let lower = text.lowercased()
        let path: Substring
        if lower.hasPrefix(scheme + "/") {
            path = text.dropFirst(scheme.count + 1)
        } else if !lower.hasPrefix(scheme), !lower.contains("://") {
            path = Substring(text.drop { $0 == "/" })
        } else {
            return try RTMPURL(parsing: text)
        }
        guard let server = defaultServer else { return try RTMPURL(parsing: text) }
        let host = server.host.contains(":") ? "[\(server.host)]" : server.host
        return try RTMPURL(parsing: "\(scheme)\(host):\(server.port)/\(path)")
    }
}
