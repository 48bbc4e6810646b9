import Foundation
import Testing
@testable import LiveCore

@Suite("ConditionLock")
struct ConditionLockTests {
    @Test("a waiter wakes when another thread makes the state ready, and sees that state")
    func wakesWhenReady() {
        let lock = ConditionLock(0)
        let seen = ConditionLock<(value: Int, ready: Bool)?>(nil)
        let waiter = Thread {
            let result = lock.withLock(waitingUntil: { $0 >= 3 }, timeout: .seconds(10)) { value, ready in (value, ready) }
            seen.withLock { $0 = result }
        }
        waiter.start()
        for _ in 0..<3 {
            Thread.sleep(forTimeInterval: 0.01)
            lock.withLock { $0 += 1 }
        }
        let result = seen.withLock(waitingUntil: { $0 != nil }, timeout: .seconds(10)) { seen, _ in seen }
        #expect(result?.value == 3)
        #expect(result?.ready == true)
    }

    @Test("a timeout runs the body with isReady false, after about the timeout, with the lock held")
    func timesOut() {
        let lock = ConditionLock([Int]())
        let start = Date()
        let ready = lock.withLock(waitingUntil: { !$0.isEmpty }, timeout: .milliseconds(100)) { list, ready in
            list.append(1)
            return ready
        }
        let waited = Date().timeIntervalSince(start)
        #expect(!ready)
        #expect(waited >= 0.09)
        #expect(waited < 5)
        #expect(lock.withLock { $0 } == [1])
    }

    @Test("a state already ready does not wait")
    func alreadyReady() {
        let lock = ConditionLock(5)
        let start = Date()
        #expect(lock.withLock(waitingUntil: { $0 == 5 }, timeout: .seconds(10)) { _, ready in ready })
        #expect(Date().timeIntervalSince(start) < 1)
    }
}
