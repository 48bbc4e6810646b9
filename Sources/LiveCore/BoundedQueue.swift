import Foundation

/// What a full `BoundedQueue` does with one more element.
public enum DropPolicy: Sendable {
    /// Drop the oldest queued element to make room: live video wants the newest frame.
    case dropOldest
    /// Refuse the new element: the queue keeps what it has.
    case dropNewest
    /// Make the producer wait until there is room (for offline work such as recording a file).
    case block
}

/// A thread-safe FIFO with a fixed capacity and an explicit drop policy, the only
/// way state crosses between pipeline threads (STYLE.md habit 5).
public final class BoundedQueue<Element> {
    public let capacity: Int
    public let policy: DropPolicy

    private let condition = NSCondition()
    private var items: [Element?]
    private var head = 0
    private var count = 0
    private var closed = false
    private var _dropped = 0

    public init(capacity: Int, policy: DropPolicy) {
        precondition(capacity > 0, "queue capacity must be positive")
        self.capacity = capacity
        self.policy = policy
        items = Array(repeating: nil, count: capacity)
    }

    /// Adds an element; returns false when it (or, with `.dropOldest`, an older one)
    /// was dropped, or the queue is closed.
    @discardableResult
    public func push(_ element: Element) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        if closed { return false }
        var keptAll = true
        if count == capacity {
            switch policy {
            case .dropNewest:
                _dropped += 1
                return false
            case .dropOldest:
                items[head] = nil
                head = (head + 1) % capacity
                count -= 1
                _dropped += 1
                keptAll = false
            case .block:
                while count == capacity && !closed { condition.wait() }
                if closed { return false }
            }
        }
        items[(head + count) % capacity] = element
        count += 1
        condition.broadcast()
        return keptAll
    }

    /// Takes the oldest element, waiting up to `timeout` seconds (nil: forever).
    /// Returns nil on timeout, or when the queue is closed and empty.
    public func pop(timeout: Double? = nil) -> Element? {
        condition.lock()
        defer { condition.unlock() }
        let deadline = timeout.map { Date(timeIntervalSinceNow: $0) }
        while count == 0 && !closed {
            if let deadline {
                if !condition.wait(until: deadline) && count == 0 { return nil }
            } else {
                condition.wait()
            }
        }
        guard count > 0 else { return nil }
        let element = items[head]
        items[head] = nil
        head = (head + 1) % capacity
        count -= 1
        condition.broadcast()
        return element
    }

    /// Ends the stream: producers are refused, consumers drain what is left and then get nil.
    public func close() {
        condition.lock()
        closed = true
        condition.broadcast()
        condition.unlock()
    }

    public var isClosed: Bool {
        condition.lock()
        defer { condition.unlock() }
        return closed
    }

    public var depth: Int {
        condition.lock()
        defer { condition.unlock() }
        return count
    }

    /// Elements dropped by the policy since the queue was made.
    public var dropped: Int {
        condition.lock()
        defer { condition.unlock() }
        return _dropped
    }
}

// @unchecked: every mutable field is touched only while holding `condition` (a Mutex cannot
// wait), and only Sendable elements may cross threads through it.
extension BoundedQueue: @unchecked Sendable where Element: Sendable {}
