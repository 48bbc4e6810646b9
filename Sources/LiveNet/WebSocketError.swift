/// Why a WebSocket connection failed; each case maps to the close code (RFC 6455 §7.4.1)
/// sent before the connection is dropped.
public enum WebSocketError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A frame or message broke RFC 6455 (reserved bits, bad opcode, unmasked client
    /// frame, fragmented control frame...): close code 1002.
    case protocolViolation(String)
    /// A frame or message longer than the limit: close code 1009.
    case tooBig(length: UInt64, limit: Int)
    /// A text message that is not UTF-8: close code 1007.
    case invalidText
    /// The opening handshake failed; the text says which header or status was wrong.
    case handshake(String)
    /// The TCP connection failed or closed before the handshake finished.
    case connection(NetError)

    /// The close code sent to the peer for this error.
    public var closeCode: UInt16 {
        switch self {
        case .protocolViolation, .handshake: 1002
        case .tooBig: 1009
        case .invalidText: 1007
        case .connection: 1006
        }
    }

    public var description: String {
        switch self {
        case .protocolViolation(let what): "WebSocket protocol violation: \(what)"
        case .tooBig(let length, let limit): "WebSocket frame or message of \(length) bytes exceeds the \(limit)-byte limit"
        case .invalidText: "WebSocket text message is not valid UTF-8"
        case .handshake(let what): "WebSocket handshake failed: \(what)"
        case .connection(let error): "WebSocket connection failed: \(error)"
        }
    }
}
