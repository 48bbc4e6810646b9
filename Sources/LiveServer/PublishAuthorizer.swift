import Foundation

/// A rule the relay asks before accepting a publish, on top of its one-publisher-per-name
/// rule: given the stream and the publish URL's query, it returns why the publish is
/// refused, or nil. `liveline serve` installs the co-host line's rule (only a co-host may
/// publish its `line-…` pubId stream, with the `line=SECRET` it was given).
///
/// Thread-safe: the rule is swapped and read under `lock`; it runs on the publishing
/// connection's loop.
public final class PublishAuthorizer: @unchecked Sendable {
    // @unchecked: `rule` is touched only while holding `lock`.
    public typealias Rule = @Sendable (_ key: StreamKey, _ query: String?) -> String?

    private let lock = NSLock()
    private var rule: Rule?

    public init(_ rule: Rule? = nil) {
        self.rule = rule
    }

    /// Replaces the rule (nil: allow every publish).
    public func install(_ rule: Rule?) {
        lock.lock()
        self.rule = rule
        lock.unlock()
    }

    /// Why publishing `key` with `query` is refused, nil when allowed.
    public func refusal(_ key: StreamKey, query: String?) -> String? {
        lock.lock()
        let rule = self.rule
        lock.unlock()
        return rule?(key, query)
    }
}
