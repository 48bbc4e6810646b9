/// A relayed stream's identity: the connect's app and the publish/play name without
/// its query (`rtmp://host/live/cam?token=x` → live, cam).
public struct StreamKey: Hashable, Sendable, CustomStringConvertible {
    public var app: String
    public var name: String

    public init(app: String, name: String) {
        self.app = app
        self.name = name
    }

    public var description: String { "\(app)/\(name)" }
}
