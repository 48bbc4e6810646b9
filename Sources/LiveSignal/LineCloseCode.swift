/// How the server ends a line session on purpose: the WebSocket close code is `base` plus
/// the anyRTC SDK's code (4211 forced exit, 4212 token expired, …), in RFC 6455's range
/// for applications, 4000–4999. A shutdown closes with 1001 (going away) instead.
public enum LineCloseCode {
    public static let base: UInt16 = 4000
}
