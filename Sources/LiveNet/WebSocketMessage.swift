/// What a WebSocket peer said: a whole data message (fragments joined) or a control frame.
public enum WebSocketMessage: Equatable, Sendable {
    case text(String)
    case binary([UInt8])
    case ping([UInt8])
    case pong([UInt8])
    /// The peer's close frame: its status code (nil when the frame had none) and reason.
    case close(code: UInt16?, reason: String)
}
