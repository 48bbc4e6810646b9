import Foundation

/// A value another thread may replace while the capture thread reads it once per
/// frame: how a setting such as a beauty strength or a zoom factor changed from the
/// CLI or a kit takes effect at the next frame without a data race.
final class LockedValue<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    /// The current value (a copy taken under the lock).
    func load() -> Value {
        lock.lock()
        defer { lock.unlock() }
        return value
    }

    func store(_ newValue: Value) {
        lock.lock()
        value = newValue
        lock.unlock()
    }
}
