import Foundation
import LiveAuth
import LiveSignal
import Synchronization

/// A rule the relay asks before accepting a publish, on top of its one-publisher-per-name
/// rule (and, with auth on, after the token check): given the stream, the publish URL's
/// query and the verified claims of the publisher's token (nil with auth off), it returns
/// why the publish is refused, or nil. `liveline serve` installs the co-host line's rule
/// (only a co-host may publish its `line-…` pubId stream, with the `line=SECRET` it was
/// given) and the call's (only a call's own user its `call-ROOM-N` stream, with its
/// `call=SECRET`).
///
/// Thread-safe: the rule is swapped and read under a lock; it runs on the publishing
/// connection's loop.
public final class PublishAuthorizer: Sendable {
    public typealias Rule = @Sendable (_ key: StreamKey, _ query: String?, _ claims: AccessClaims?) -> String?

    private let slot: RuleSlot<Rule>

    public init(_ rule: Rule? = nil) {
        slot = RuleSlot(rule)
    }

    /// Replaces the rule (nil: allow every publish).
    public func install(_ rule: Rule?) { slot.install(rule) }

    /// Why publishing `key` with `query` is refused, nil when allowed.
    public func refusal(_ key: StreamKey, query: String?, claims: AccessClaims? = nil) -> String? {
        slot.current?(key, query, claims)
    }
}

/// A rule the relay asks before accepting a play of a co-host stream (a name starting
/// `line-`) or a call's stream (`call-`), after the token check when auth is on: given the
/// stream, the play URL's query and the verified claims of the player's token (nil with
/// auth off), it returns why the play is refused, or nil. `liveline serve` installs the
/// line's rule (a co-host stream is playable only by the line's members) and the call's
/// (a call's stream only by the other user of the call, with its `call=SECRET`).
///
/// Thread-safe like `PublishAuthorizer`; the rule runs on the playing connection's loop.
public final class PlayAuthorizer: Sendable {
    public typealias Rule = @Sendable (_ key: StreamKey, _ query: String?, _ claims: AccessClaims?) -> String?

    private let slot: RuleSlot<Rule>

    public init(_ rule: Rule? = nil) {
        slot = RuleSlot(rule)
    }

    /// Replaces the rule (nil: allow every play).
    public func install(_ rule: Rule?) { slot.install(rule) }

    /// The stream names the rule is asked about: those starting with one of these.
    public static let guardedPrefixes = [LineRegistry.pubIdPrefix, CallStreams.prefix]

    /// True when a play of `key` goes through the rule.
    public static func guards(_ key: StreamKey) -> Bool {
        guardedPrefixes.contains { key.name.hasPrefix($0) }
    }

    /// Why playing `key` is refused, nil when allowed.
    public func refusal(_ key: StreamKey, query: String?, claims: AccessClaims?) -> String? {
        slot.current?(key, query, claims)
    }
}

/// One replaceable rule, read and swapped under a lock.
private final class RuleSlot<Rule: Sendable>: Sendable {
    private let rule: Mutex<Rule?>

    init(_ rule: Rule?) { self.rule = Mutex(rule) }

    func install(_ rule: Rule?) { self.rule.withLock { $0 = rule } }

    var current: Rule? { rule.withLock { $0 } }
}
