import Foundation
import Synchronization

/// A fixed set of event loops, one thread each (the relay uses one per core). A
/// listener hands accepted connections to `next()`, round-robin. Safe from any thread.
public final class EventLoopGroup: Sendable {
    public let loops: [EventLoop]
    private let cursor = Mutex(0)

    /// Creates `count` loops named "\(name)-0", "\(name)-1"... and starts their threads;
    /// each queues at most `maxPendingTasks` tasks (see `EventLoop.execute`).
    public init(count: Int, name: String = "liveline-loop",
                maxPendingTasks: Int = EventLoop.defaultMaxPendingTasks) throws(NetError) {
        precondition(count > 0, "an event loop group needs at least one loop")
        var loops: [EventLoop] = []
        for index in 0..<count {
            do {
                loops.append(try EventLoop(name: "\(name)-\(index)", maxPendingTasks: maxPendingTasks))
            } catch {
                for loop in loops { loop.shutdown() }
                throw error
            }
        }
        self.loops = loops
        for loop in loops { loop.start() }
    }

    /// Wraps loops that already exist (and that their owner starts and shuts down).
    public init(loops: [EventLoop]) {
        precondition(!loops.isEmpty, "an event loop group needs at least one loop")
        self.loops = loops
    }

    /// The next loop, round-robin.
    public func next() -> EventLoop {
        cursor.withLock { cursor in
            let loop = loops[cursor]
            cursor = (cursor + 1) % loops.count
            return loop
        }
    }

    /// Shuts every loop down (closing their connections) and joins their threads.
    public func shutdown() {
        for loop in loops { loop.shutdown() }
    }
}
