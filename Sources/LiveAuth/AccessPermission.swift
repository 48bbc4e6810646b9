/// One grant of a token: an action on a path or a family of paths.
public struct AccessPermission: Codable, Sendable, Equatable {
    public var action: AccessAction
    /// "live/room1" (exactly that), "live/*" or "live*" (everything starting "live/" or
    /// "live"), "*" (everything), or a line id such as "room1".
    public var path: String

    public init(action: AccessAction, path: String) {
        self.action = action
        self.path = path
    }

    /// Whether this grant allows `action` on `path`: the same action and either the exact
    /// path or, for a pattern ending in `*`, any path starting with what comes before it.
    public func covers(_ action: AccessAction, path: String) -> Bool {
        guard action == self.action else { return false }
        if self.path.hasSuffix("*") {
            return path.hasPrefix(self.path.dropLast())
        }
        return path == self.path
    }
}
