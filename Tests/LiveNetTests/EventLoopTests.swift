import Foundation
import LiveTestSupport
import Testing
@testable import LiveNet

@Suite("EventLoop")
struct EventLoopTests {
    @Test("timers fire in deadline order, on the loop thread")
    func timersFireInOrder() throws {
        let loop = try EventLoop(name: "timer-order")
        loop.start()
        defer { loop.shutdown() }
        let fired = Locked<[String]>([])
        let onLoop = Locked(true)
        let done = Signal()
        for (name, delay) in [("c", 60), ("a", 20), ("d", 80), ("b", 40)] {
            loop.schedule(after: .milliseconds(delay)) {
                if !loop.inEventLoop { onLoop.update { $0 = false } }
                let count = fired.update { $0.append(name); return $0.count }
                if count == 4 { done.fire() }
            }
        }
        #expect(done.wait())
        #expect(fired.value == ["a", "b", "c", "d"])
        #expect(onLoop.value)
    }

    @Test("timers with the same delay fire in the order they were scheduled")
    func sameDelayKeepsOrder() throws {
        let loop = try EventLoop(name: "timer-ties")
        loop.start()
        defer { loop.shutdown() }
        let fired = Locked<[Int]>([])
        let done = Signal()
        loop.execute {
            for index in 0..<100 {
                loop.schedule(after: .milliseconds(5)) {
                    if fired.update({ $0.append(index); return $0.count }) == 100 { done.fire() }
                }
            }
        }
        #expect(done.wait())
        #expect(fired.value == Array(0..<100))
    }

    @Test("a cancelled timer never fires")
    func cancel() throws {
        let loop = try EventLoop(name: "timer-cancel")
        loop.start()
        defer { loop.shutdown() }
        let fired = Locked<[String]>([])
        let done = Signal()
        let cancelled = loop.schedule(after: .milliseconds(20)) { fired.update { $0.append("cancelled") } }
        loop.schedule(after: .milliseconds(60)) {
            fired.update { $0.append("kept") }
            done.fire()
        }
        cancelled.cancel()
        #expect(cancelled.isCancelled)
        #expect(done.wait())
        #expect(fired.value == ["kept"])
    }

    @Test("execute from many threads runs every task on the loop thread, in each thread's order")
    func executeFromThreads() throws {
        let loop = try EventLoop(name: "execute")
        loop.start()
        defer { loop.shutdown() }
        let threads = 4
        let perThread = 2000
        let seen = Locked<[[Int]]>(Array(repeating: [], count: threads))
        let offLoop = Locked(0)
        let done = Signal()
        for thread in 0..<threads {
            Thread {
                for index in 0..<perThread {
                    loop.execute {
                        if !loop.inEventLoop { offLoop.update { $0 += 1 } }
                        let total = seen.update { lists -> Int in
                            lists[thread].append(index)
                            return lists.reduce(0) { $0 + $1.count }
                        }
                        if total == threads * perThread { done.fire() }
                    }
                }
            }.start()
        }
        #expect(done.wait())
        #expect(offLoop.value == 0)
        #expect(seen.value.allSatisfy { $0 == Array(0..<perThread) })
        #expect(!loop.inEventLoop)
    }

    @Test("run() serves the calling thread until shutdown() from another thread")
    func runOnCallerThread() throws {
        let loop = try EventLoop(name: "run-caller")
        let returned = Signal()
        let ran = Locked(false)
        Thread {
            loop.run()
            returned.fire()
        }.start()
        loop.execute { ran.update { $0 = loop.inEventLoop } }
        #expect(eventually { ran.value })
        loop.shutdown()
        #expect(returned.wait())
        #expect(!loop.isRunning)
        #expect(loop.execute {} == false)
    }

    @Test("shutdown ends the loop thread and drops later tasks")
    func shutdownJoinsThread() throws {
        let loop = try EventLoop(name: "joins-thread")
        loop.start()
        let started = Signal()
        loop.execute { started.fire() }
        #expect(started.wait())
        #expect(threadNames().contains("joins-thread"))
        #expect(loop.isRunning)

        loop.shutdown()
        #expect(!loop.isRunning)
        // pthread_join returns once the kernel clears the thread's tid, a moment before the
        // task leaves /proc/self/task: wait for that, briefly.
        #expect(eventually(seconds: 2) { !threadNames().contains("joins-thread") })
        let late = Locked(false)
        #expect(loop.execute { late.update { $0 = true } } == false)
        usleep(20_000)
        #expect(late.value == false)
    }

    @Test("tasks queued before shutdown still run")
    func tasksBeforeShutdownRun() throws {
        let loop = try EventLoop(name: "drain")
        loop.start()
        let count = Locked(0)
        for _ in 0..<100 { loop.execute { count.update { $0 += 1 } } }
        loop.shutdown()
        #expect(count.value == 100)
    }

    @Test("a group hands out its loops round-robin")
    func groupRoundRobin() throws {
        let group = try EventLoopGroup(count: 3, name: "rr")
        defer { group.shutdown() }
        let picks = (0..<6).map { _ in group.next() }
        #expect(picks[0] !== picks[1] && picks[1] !== picks[2] && picks[0] !== picks[2])
        #expect(picks[3] === picks[0] && picks[4] === picks[1] && picks[5] === picks[2])
    }

    @Test("the task queue is bounded: execute refuses beyond maxPendingTasks, counts it, and the queued tasks still run")
    func boundedTaskQueue() throws {
        // Not started yet, so nothing drains the queue while it fills.
        let loop = try EventLoop(name: "bounded", maxPendingTasks: 100)
        let ran = Locked(0)
        var accepted = 0
        for _ in 0..<150 where loop.execute({ ran.update { $0 += 1 } }) { accepted += 1 }
        #expect(accepted == 100)
        #expect(loop.droppedTaskCount == 50)
        #expect(loop.pendingTaskCount == 100)
        loop.start()
        #expect(eventually { ran.value == 100 })
        // Room again once the loop has run them.
        #expect(loop.execute { ran.update { $0 += 1 } })
        #expect(eventually { ran.value == 101 })
        loop.shutdown()
        #expect(loop.droppedTaskCount == 50)
    }

    @Test("a listener still closes when its loop's task queue is full")
    func listenerCloseIsNotDropped() throws {
        let loop = try EventLoop(name: "close-full", maxPendingTasks: 1)
        let group = EventLoopGroup(loops: [loop])
        let listener = try TCPListener.bind(host: "127.0.0.1", port: 0, group: group) { _ in }
        let port = listener.localPort
        // The listener's registration fills the one slot.
        #expect(!loop.execute {})
        listener.close()
        loop.start()
        defer { loop.shutdown() }
        #expect(eventually { (try? RawSocketClient(port: port)) == nil })
    }

    @Test("connect on a loop whose queue is full fails at once with loopBusy instead of never answering")
    func connectOnAFullLoop() throws {
        let loop = try EventLoop(name: "connect-full", maxPendingTasks: 1)
        #expect(loop.execute {})
        let failures = Locked<[String]>([])
        TCPConnection.connect(host: "127.0.0.1", port: 9, on: loop) { result in
            if case .failure(let error) = result { failures.update { $0.append("\(error)") } }
        }
        WebSocketClient.connect(url: "http://not-a-websocket", on: loop) { result in
            if case .failure(let error) = result { failures.update { $0.append("\(error)") } }
        }
        #expect(failures.value == [
            "\(NetError.loopBusy)",
            "\(WebSocketError.handshake("'http://not-a-websocket' is not a ws:// URL"))",
        ])
        loop.shutdown()
        TCPConnection.connect(host: "127.0.0.1", port: 9, on: loop) { result in
            if case .failure(let error) = result { failures.update { $0.append("\(error)") } }
        }
        #expect(failures.value.last == "\(NetError.loopShutdown)")
    }
}
