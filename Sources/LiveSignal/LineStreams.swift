import Foundation

/// What the kits and the relay agree on about the line's RTMP streams, outside the JSON
/// messages: a co-host publishes its pubId stream with the `line=SECRET` query its
/// accepted application carried, the hoster publishes each co-host's hear stream (the
/// pubId + `hearSuffix`), and a hoster on a server without tokens pushes with a
/// `lineKey=` of its own choosing so that only it can create the line named like its
/// stream (DESIGN.md §4). Pure.
public enum LineStreams {
    /// A co-host's hear stream is its pubId with this suffix: what the hoster sends it to
    /// hear (everyone but itself). `.` is outside the pubId alphabet.
    public static let hearSuffix = ".hear"

    /// The value of `name=` in a URL query ("a=1&lineKey=XYZ"), as it is (no
    /// percent-decoding: the line's secrets are URL-safe); nil when absent.
    public static func queryValue(_ name: String, in query: String?) -> String? {
        let prefix = name + "="
        return (query ?? "").split(separator: "&").first { $0.hasPrefix(prefix) }.map { String($0.dropFirst(prefix.count)) }
    }

    /// `bytes` random bytes from the system's generator in unpadded base64url: lineKeys,
    /// and the relay's peerIds, pubIds and secrets.
    @Sendable public static func randomToken(_ bytes: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        let data = Data((0..<bytes).map { _ in UInt8.random(in: 0...255, using: &generator) })
        return data.base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }
}
