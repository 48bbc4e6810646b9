import Synchronization

/// A value another thread may replace while the capture thread reads it once per
/// frame: how a setting such as a beauty strength or a zoom factor changed from the
/// CLI or a kit takes effect at the next frame without a data race.
final class LockedValue<Value: Sendable>: Sendable {
    private let value: Mutex<Value>

    init(_ value: Value) { self.value = Mutex(value) }

    /// The current value (a copy taken under the lock).
    func load() -> Value { value.withLock { $0 } }

    func store(_ newValue: Value) { value.withLock { $0 = newValue } }
}
