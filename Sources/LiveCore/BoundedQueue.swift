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

    /// The ring of queued elements and what the threads wait on.
    fileprivate struct Ring {
        var items: [Element?]
        var head = 0
        var count = 0
        var closed = false
        var dropped = 0

        /// Takes the oldest element out (the ring must not be empty).
        mutating func removeFirst() -> Element? {
            let element = items[head]
            items[head] = nil
            head = (head + 1) % items.count
            count -= 1
            return element
        }
    }

    private let ring: ConditionLock<Ring>

    public init(capacity: Int, policy: DropPolicy) {
        precondition(capacity > 0, "queue capacity must be positive")
        self.capacity = capacity
        self.policy = policy
        ring = ConditionLock(Ring(items: Array(repeating: nil, count: capacity)))
    }

    /// Adds an element; returns false when it (or, with `.dropOldest`, an older one)
    /// was dropped, or the queue is closed.
    @discardableResult
    public func push(_ element: Element) -> Bool {
        let capacity = capacity, policy = policy
        // Only `.block` waits, for room or the close.
        return ring.withLock(waitingUntil: { policy != .block || $0.count < capacity || $0.closed }) { ring, _ in
            if ring.closed { return false }
            var keptAll = true
            if ring.count == capacity {
                switch policy {
                case .dropNewest:
                    ring.dropped += 1
                    return false
                case .dropOldest:
                    _ = ring.removeFirst()
                    ring.dropped += 1
                    keptAll = false
                case .block:
                    break  // not reached: it waited for room
                }
            }
            ring.items[(ring.head + ring.count) % capacity] = element
            ring.count += 1
            return keptAll
        }
    }

    /// Takes the oldest element, waiting up to `timeout` seconds (nil: forever).
    /// Returns nil on timeout, or when the queue is closed and empty.
    public func pop(timeout: Double? = nil) -> Element? {
        ring.withLock(waitingUntil: { $0.count > 0 || $0.closed }, timeout: timeout.map { .seconds($0) }) { ring, _ in
            ring.count > 0 ? ring.removeFirst() : nil
        }
    }

    /// Ends the stream: producers are refused, consumers drain what is left and then get nil.
    public func close() {
        ring.withLock { $0.closed = true }
    }

    public var isClosed: Bool { ring.withLock { $0.closed } }

    public var depth: Int { ring.withLock { $0.count } }

    /// Elements dropped by the policy since the queue was made.
    public var dropped: Int { ring.withLock { $0.dropped } }
}

extension BoundedQueue: Sendable where Element: Sendable {}

extension BoundedQueue.Ring: Sendable where Element: Sendable {}
