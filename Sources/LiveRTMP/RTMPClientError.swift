import LiveCore
import LiveNet

/// Why an RTMP publisher or player stopped or could not start. Every message names the
/// stream URL and what went wrong, so a user sees which server said what.
public enum RTMPClientError: Error, CustomStringConvertible, Equatable, Sendable {
    /// The TCP connection could not be opened (refused, unreachable, timed out, bad host).
    case connectFailed(url: String, NetError)
    /// The RTMP handshake failed: the peer closed or sent something that is not RTMP.
    case handshakeFailed(url: String, reason: String)
    /// The server refused: a connect or createStream `_error`, or an error onStatus
    /// (NetStream.Play.StreamNotFound, NetStream.Publish.BadName, …).
    case rejected(url: String, RTMPStatus)
    /// Connect, handshake and publish/play did not complete in time.
    case timedOut(url: String, what: String)
    /// The connection ended while the stream was running (or starting).
    case connectionLost(url: String, NetError?)
    /// The server sent bytes LiveLine cannot read (a chunk, command or tag).
    case protocolViolation(url: String, reason: String)
    /// The stream carries video LiveLine cannot decode.
    case unsupportedCodec(url: String, codecID: UInt8)

    public var url: String {
        switch self {
        case .connectFailed(let url, _), .handshakeFailed(let url, _), .rejected(let url, _), .timedOut(let url, _),
             .connectionLost(let url, _), .protocolViolation(let url, _), .unsupportedCodec(let url, _):
            url
        }
    }

    /// For `.rejected`: the anyRTC SDK code of the refusal. A LiveLine relay starts its
    /// reason with one ("202 authentication failed: bad signature"); any other refusal
    /// (a name already published, a server's own rule) is 102, live error. Nil when the
    /// server did not refuse.
    public var refusalCode: LiveCode? {
        guard case .rejected(_, let status) = self else { return nil }
        let digits = status.description.prefix { $0.isASCII && $0.isNumber }
        let afterDigits = status.description.dropFirst(digits.count)
        if digits.count == 3, afterDigits.hasPrefix(" "), let code = Int(digits).flatMap(LiveCode.init(rawValue:)), code != .ok {
            return code
        }
        return .liveError
    }

    /// For `.rejected`: the status code, such as "NetStream.Play.StreamNotFound".
    public var statusCode: String? {
        if case .rejected(_, let status) = self { return status.code }
        return nil
    }

    public var description: String {
        switch self {
        case .connectFailed(let url, let error):
            "\(url): cannot connect: \(error)"
        case .handshakeFailed(let url, let reason):
            "\(url): RTMP handshake failed: \(reason)"
        case .rejected(let url, let status):
            "\(url): the server refused: \(status.code)" + (status.description.isEmpty ? "" : " (\(status.description))")
        case .timedOut(let url, let what):
            "\(url): \(what) timed out"
        case .connectionLost(let url, let error):
            "\(url): connection lost" + (error.map { ": \($0)" } ?? ": the server closed it")
        case .protocolViolation(let url, let reason):
            "\(url): protocol error: \(reason)"
        case .unsupportedCodec(let url, let codecID):
            "\(url): the stream's video codec id \(codecID) is not H.264 (7)"
        }
    }
}
