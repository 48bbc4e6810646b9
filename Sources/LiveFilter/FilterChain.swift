import LiveCore
import Synchronization

/// An ordered list of filters run one after the other on each captured frame.
///
/// `process` runs on the capture thread. Any other thread (the CLI, a kit reacting to
/// `setCameraFilter`) may add, remove or replace filters while capture runs: the change
/// is made under a lock and the capture thread picks up the new list at the start of
/// the next frame; a frame already being processed finishes with the list it started
/// with.
public final class FilterChain: Sendable {
    // Swift arrays are copy-on-write: the capture thread takes a snapshot (a retain,
    // no copy) under the lock and runs it unlocked, so a slow filter never blocks a
    // settings change and a change never tears a frame.
    private let list: Mutex<[VideoFilter]>

    public init(_ filters: [VideoFilter] = []) {
        list = Mutex(filters)
    }

    /// The filters in the order they run.
    public var filters: [VideoFilter] { list.withLock { $0 } }

    /// Their names in the order they run.
    public var names: [String] { filters.map(\.name) }

    public var isEmpty: Bool { filters.isEmpty }

    /// The first filter called `name`, if any.
    public func filter(named name: String) -> VideoFilter? {
        filters.first { $0.name == name }
    }

    /// The first filter of type `T`, if any.
    public func first<T: VideoFilter>(_ type: T.Type) -> T? {
        filters.lazy.compactMap { $0 as? T }.first
    }

    /// Adds a filter at the end of the chain.
    public func append(_ filter: VideoFilter) {
        mutate { $0.append(filter) }
    }

    /// Inserts a filter at `index` (clamped to the chain's length).
    public func insert(_ filter: VideoFilter, at index: Int) {
        mutate { $0.insert(filter, at: max(0, min(index, $0.count))) }
    }

    /// Removes every filter called `name`; returns whether one was there.
    @discardableResult
    public func remove(named name: String) -> Bool {
        var removed = false
        mutate { list in
            let before = list.count
            list.removeAll { $0.name == name }
            removed = list.count != before
        }
        return removed
    }

    /// Removes `filter` (by identity); returns whether it was there.
    @discardableResult
    public func remove(_ filter: VideoFilter) -> Bool {
        var removed = false
        mutate { list in
            let before = list.count
            list.removeAll { $0 === filter }
            removed = list.count != before
        }
        return removed
    }

    /// Puts `filter` in the place of the first filter with the same name, or appends it
    /// when there is none: how a setting such as the camera filter mode is switched.
    public func replace(_ filter: VideoFilter) {
        mutate { list in
            if let i = list.firstIndex(where: { $0.name == filter.name }) {
                list[i] = filter
            } else {
                list.append(filter)
            }
        }
    }

    /// Replaces the whole list at once.
    public func set(_ filters: [VideoFilter]) {
        mutate { $0 = filters }
    }

    public func removeAll() {
        mutate { $0.removeAll() }
    }

    /// Runs every filter in order on `frame` and returns the result. Capture thread only.
    public func process(_ frame: VideoFrame) -> VideoFrame {
        let snapshot = filters
        var current = frame
        for filter in snapshot {
            current = filter.process(current)
        }
        return current
    }

    private func mutate(_ change: (inout [VideoFilter]) -> Void) {
        list.withLock { change(&$0) }
    }
}
