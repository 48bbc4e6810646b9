/// How a player reaches the relay: what `/api/streams` shows for each player.
public enum PlayerTransport: String, Codable, Sendable, CaseIterable {
    /// An RTMP play.
    case rtmp
    /// `GET /{app}/{stream}.flv`.
    case httpFLV = "http-flv"
    /// The WebSocket FLV feed, `GET /ws/{app}/{stream}`.
    case webSocketFLV = "ws-flv"
}
