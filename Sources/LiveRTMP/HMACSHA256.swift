import LiveAuth

/// The digest handshake's HMAC-SHA256 is the one LiveAuth signs tokens with.
typealias HMACSHA256 = LiveAuth.HMACSHA256
