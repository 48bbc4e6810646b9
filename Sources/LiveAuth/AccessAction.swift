/// What a token may be used for: one of the relay's or the line's operations.
public enum AccessAction: String, Codable, Sendable, CaseIterable {
    /// Publishing an RTMP stream (the hoster's push, a co-host's stream).
    case publish
    /// Playing an RTMP stream.
    case play
    /// Creating and running a line as its host (the anyRTC SDK's hoster side of the line).
    case lineHost = "line:host"
    /// Joining a line as a guest (the anyRTC SDK's guest side of the line).
    case lineGuest = "line:guest"
    /// Calling the relay's HTTP API.
    case api
    /// Registering for 1v1 calls under a user id (the path): the `/call` signaling's
    /// `register` and `renewToken`.
    case call
}
