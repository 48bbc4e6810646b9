import LiveCore
import LiveNet

/// What a guest plays a stream with: `RTMPPlayer` or `HTTPFLVPlayer`. Both deliver the
/// same events (`RTMPPlayer.Event`) on their loop thread and keep the same figures, so
/// one decode path serves both.
public protocol StreamPlayer: AnyObject, Sendable {
    /// Events, on the loop thread; set before `start()`.
    var onEvent: (@Sendable (RTMPPlayer.Event) -> Void)? { get set }
    /// The current figures (any thread).
    var stats: RTMPPlayer.Stats { get }
    /// Connects and plays (any thread; the loop must be running).
    func start()
    /// Closes; `.closed` follows (any thread).
    func close()
    /// Waits until closed or failed; false on timeout.
    @discardableResult
    func waitUntilClosed(timeout: Duration) -> Bool
    /// The consumer has taken the packets up to `dts` (any thread).
    func markConsumed(upTo dts: MediaTime)
}

extension RTMPPlayer: StreamPlayer {}
extension HTTPFLVPlayer: StreamPlayer {}

/// A stream a guest can play: `rtmp://…` or HTTP-FLV `http://…`.
public enum PlayURL: Equatable, Hashable, Sendable, CustomStringConvertible {
    case rtmp(RTMPURL)
    case httpFLV(HTTPFLVURL)

    /// Parses an `rtmp://` or `http://` URL; the error of the scheme's own parser, or
    /// one naming both schemes.
    public init(parsing text: String) throws {
        let lower = text.lowercased()
        if lower.hasPrefix("http://") || lower.hasPrefix("https://") {
            self = .httpFLV(try HTTPFLVURL(parsing: text))
        } else {
            self = .rtmp(try RTMPURL(parsing: text))
        }
    }

    /// The query, where a token goes (`?token=`).
    public var query: String? {
        get {
            switch self {
            case .rtmp(let url): url.query
            case .httpFLV(let url): url.query
            }
        }
        set {
            switch self {
            case .rtmp(var url):
                url.query = newValue
                self = .rtmp(url)
            case .httpFLV(var url):
                url.query = newValue
                self = .httpFLV(url)
            }
        }
    }

    /// The URL for logs and errors, secrets hidden.
    public var description: String {
        switch self {
        case .rtmp(let url): url.description
        case .httpFLV(let url): url.description
        }
    }

    /// A player of this URL on `loop`, not started.
    public func makePlayer(loop: EventLoop, connectTimeout: Duration) -> any StreamPlayer {
        switch self {
        case .rtmp(let url):
            RTMPPlayer(url: url, loop: loop, configuration: RTMPPlayer.Configuration(connectTimeout: connectTimeout))
        case .httpFLV(let url):
            HTTPFLVPlayer(url: url, loop: loop, configuration: HTTPFLVPlayer.Configuration(connectTimeout: connectTimeout))
        }
    }
}
