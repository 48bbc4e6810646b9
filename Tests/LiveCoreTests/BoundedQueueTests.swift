import Foundation
import Testing
@testable import LiveCore

@Suite("BoundedQueue")
struct BoundedQueueTests {
    @Test("dropOldest keeps the newest elements and counts the drops")
    func dropOldest() {
        let queue = BoundedQueue<Int>(capacity: 3, policy: .dropOldest)
        for i in 1...5 { queue.push(i) }
        #expect(queue.dropped == 2)
        #expect(queue.depth == 3)
        #expect([queue.pop(timeout: 0), queue.pop(timeout: 0), queue.pop(timeout: 0)] == [3, 4, 5])
        #expect(queue.pop(timeout: 0.01) == nil)
    }

    @Test("dropNewest refuses what does not fit")
    func dropNewest() {
        let queue = BoundedQueue<Int>(capacity: 2, policy: .dropNewest)
        let accepted = (1...4).map { queue.push($0) }
        #expect(accepted == [true, true, false, false])
        #expect(queue.dropped == 2)
        #expect(queue.pop(timeout: 0) == 1)
        #expect(queue.pop(timeout: 0) == 2)
    }

    @Test("block makes the producer wait for room and loses nothing")
    func block() {
        let queue = BoundedQueue<Int>(capacity: 2, policy: .block)
        let producer = Thread {
            for i in 0..<100 { queue.push(i) }
            queue.close()
        }
        producer.start()
        var received: [Int] = []
        while let value = queue.pop(timeout: 5) { received.append(value) }
        #expect(received == Array(0..<100))
        #expect(queue.dropped == 0)
    }

    @Test("close lets consumers drain and then ends them")
    func closeDrains() {
        let queue = BoundedQueue<String>(capacity: 4, policy: .dropOldest)
        queue.push("a")
        queue.close()
        #expect(queue.push("b") == false)
        #expect(queue.pop() == "a")
        #expect(queue.pop() == nil)
    }

    @Test("pop times out on an empty open queue")
    func popTimesOut() {
        let queue = BoundedQueue<Int>(capacity: 1, policy: .dropOldest)
        let start = Date()
        #expect(queue.pop(timeout: 0.05) == nil)
        #expect(Date().timeIntervalSince(start) >= 0.04)
    }

    @Test("close wakes a producer blocked on a full queue, which is refused")
    func closeWakesBlockedProducer() {
        let queue = BoundedQueue<Int>(capacity: 1, policy: .block)
        #expect(queue.push(1))
        let outcome = BoundedQueue<Bool>(capacity: 1, policy: .dropOldest)
        let producer = Thread { outcome.push(queue.push(2)) }
        producer.start()
        Thread.sleep(forTimeInterval: 0.05)
        #expect(outcome.depth == 0)  // still waiting for room
        queue.close()
        #expect(outcome.pop(timeout: 5) == false)
        #expect(queue.pop() == 1)
        #expect(queue.pop() == nil)
    }
}
