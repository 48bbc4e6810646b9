import Foundation
import Glibc
import LiveCore
import Synchronization

/// One epoll event loop on one thread: it owns the descriptors registered with it,
/// its timers and the tasks handed to it, and runs all their callbacks on its thread.
/// No thread per connection; the relay runs one loop per core (`EventLoopGroup`).
///
/// Descriptors are registered **level-triggered**: a connection reads a bounded amount
/// per wake-up (a few 64 KiB reads) and is called again while data remains, so one fast
/// peer cannot starve the others, and write interest (EPOLLOUT) is armed only while a
/// write queue has bytes the socket would not take.
///
/// Every iteration: wait in epoll_wait (until the next timer, or not at all when tasks
/// are pending) → handle the ready descriptors → fire due timers → run queued tasks →
/// flush the connections written to during the iteration (one writev each, so messages
/// queued in one iteration leave in one system call).
///
/// Other threads touch the loop only through `execute(_:)`, `schedule(after:_:)` and
/// `shutdown()`; everything else (connections, listeners) is confined to the loop thread.
///
/// The task queue is bounded (`maxPendingTasks`): beyond it `execute` refuses the task,
/// returns false and counts it in `droppedTaskCount` (logged at most once a second), so
/// a thread producing faster than the loop runs cannot grow memory without end.
public final class EventLoop: @unchecked Sendable, CustomStringConvertible {
    // @unchecked: the fields under "loop thread" are read and written only on the loop
    // thread; what other threads share with it is in `shared`, a Mutex, and `isFinished`
    // is touched only while holding `finished` (a condition, which a Mutex cannot be).

    enum State { case idle, running, stopping, stopped }

    /// The thread name ("liveline-loop-0"), also used in log lines.
    public let name: String
    /// Tasks waiting to run beyond this are refused by `execute` (which returns false).
    public let maxPendingTasks: Int

    private let epollFD: Int32
    private let wakeFD: Int32

    /// What other threads share with the loop thread.
    private struct Shared {
        var tasks: [@Sendable () -> Void] = []
        var wakePending = false
        var state = State.idle
        var loopThread: pthread_t?
        var joinableThread: pthread_t?
        var resourcesClosed = false
        var dropped = 0
        var dropLog = LogThrottle()

        var isLoopThread: Bool {
            guard let loopThread else { return false }
            return pthread_equal(loopThread, pthread_self()) != 0
        }

        /// Wakes the loop's wait, once until the loop has picked the tasks up.
        mutating func wake(_ wakeFD: Int32) {
            guard !wakePending else { return }
            wakePending = true
            var one: UInt64 = 1
            _ = try? Syscall.run("write(eventfd)") { Glibc.write(wakeFD, &one, 8) }
        }
    }

    private let shared = Mutex(Shared())

    /// Signalled when the loop has finished (sources closed, thread about to exit).
    private let finished = NSCondition()
    private var isFinished = false

    // Loop thread.
    private var sources: [UInt64: EventLoopSource] = [:]
    private var nextSourceID: UInt64 = 1  // 0 is the wake eventfd
    private var timers = TimerQueue()
    /// Loop thread only; appended to once per connection and iteration and swapped out
    /// whole by `flushPending`, which calls no code while it holds it: no run-time
    /// exclusivity check (see `TCPConnection.queue`).
    @exclusivity(unchecked) private var pendingFlush: [TCPConnection] = []
    private var flushing: [TCPConnection] = []
    /// The monotonic time (µs) of the current iteration, refreshed after each wait.
    private(set) var now: UInt64 = Clock.monotonicMicros()

    /// The one read buffer every connection on this loop reads into: reads happen one at
    /// a time on this thread and handlers see the bytes only during `onRead`.
    let readBuffer: UnsafeMutableRawBufferPointer
    /// Scratch iovecs for writev, shared the same way.
    let ioVectors: UnsafeMutablePointer<iovec>
    static let ioVectorCapacity = 64
    private let events: UnsafeMutableRawPointer
    private static let eventCapacity = 256

    /// The default cap of the task queue: far above what a loop serving thousands of
    /// connections has pending, far below what would exhaust memory.
    public static let defaultMaxPendingTasks = 65536

    /// Creates the epoll set and the wake eventfd. Call `start()` or `run()` next.
    public init(name: String = "liveline-loop", readBufferSize: Int = 64 * 1024,
                maxPendingTasks: Int = EventLoop.defaultMaxPendingTasks) throws(NetError) {
        precondition(maxPendingTasks > 0, "an event loop needs room for at least one task")
        self.name = name
        self.maxPendingTasks = maxPendingTasks
        epollFD = try Syscall.epollCreate()
        do {
            wakeFD = try Syscall.eventFD()
        } catch {
            try? Syscall.close(epollFD)
            throw error
        }
        readBuffer = .allocate(byteCount: readBufferSize, alignment: 16)
        ioVectors = .allocate(capacity: Self.ioVectorCapacity)
        events = .allocate(byteCount: Self.eventCapacity * Epoll.eventStride, alignment: 8)
        do {
            try Syscall.epollControl(epollFD, Epoll.add, wakeFD, events: Epoll.input, id: 0)
        } catch {
            closeResources()
            throw error
        }
    }

    deinit {
        closeResources()
        if let thread = shared.withLock({ $0.joinableThread }) { pthread_detach(thread) }
        readBuffer.deallocate()
        ioVectors.deallocate()
        events.deallocate()
    }

    public var description: String { "EventLoop(\(name))" }

    /// True when called on this loop's thread.
    public var inEventLoop: Bool { shared.withLock { $0.isLoopThread } }

    /// True from `start()`/`run()` until the loop has finished shutting down.
    public var isRunning: Bool { shared.withLock { $0.state == .running || $0.state == .stopping } }

    // MARK: running

    /// Spawns the loop's own thread and returns. `shutdown()` stops and joins it.
    public func start() {
        guard startRunning() else { return }

        let context = Unmanaged.passRetained(self).toOpaque()
        var thread = pthread_t()
        let status = pthread_create(&thread, nil, { context in
            let loop = Unmanaged<EventLoop>.fromOpaque(context!).takeRetainedValue()
            _ = GlibcExtensions.setThreadName(pthread_self(), String(loop.name.prefix(15)))
            loop.runIterations()
            return nil
        }, context)
        guard status == 0 else {
            Unmanaged<EventLoop>.fromOpaque(context).release()
            fatalError("pthread_create failed for \(name): \(String(cString: strerror(status)))")
        }
        shared.withLock { $0.joinableThread = thread }
    }

    /// Runs the loop on the calling thread until `shutdown()`.
    public func run() {
        guard startRunning() else { return }
        runIterations()
    }

    /// Idle → running; false when the loop was started (or shut down) before.
    private func startRunning() -> Bool {
        shared.withLock { shared in
            guard shared.state == .idle else { return false }
            shared.state = .running
            return true
        }
    }

    /// Stops the loop: tasks already queued still run, then every connection and
    /// listener is closed (each connection's `onClose` gets `NetError.loopShutdown`),
    /// timers are dropped and the descriptors released. From another thread it waits
    /// until all that is done and the loop thread has ended; on the loop thread it
    /// returns at once and the loop ends after the current iteration.
    public func shutdown() {
        enum Next { case runHere, returnNow, join(pthread_t?) }
        let wakeFD = wakeFD
        let next: Next = shared.withLock { shared in
            switch shared.state {
            case .idle:
                // Never started: finish right here as a loop that ran zero iterations, so
                // queued tasks (a listener registering itself) still run and what they
                // opened is closed.
                shared.state = .stopping
                return .runHere
            case .running:
                shared.state = .stopping
                shared.wake(wakeFD)
            case .stopping, .stopped:
                break
            }
            if shared.isLoopThread { return .returnNow }
            defer { shared.joinableThread = nil }
            return .join(shared.joinableThread)
        }
        switch next {
        case .runHere:
            runIterations()
        case .returnNow:
            break
        case .join(let thread):
            if let thread { pthread_join(thread, nil) }
            finished.lock()
            while !isFinished { finished.wait() }
            finished.unlock()
        }
    }

    // MARK: tasks and timers

    /// Runs `task` on the loop thread, in the order tasks were submitted; the way other
    /// threads reach connections and other loop state. Returns false and drops the task
    /// when the loop has already shut down or `maxPendingTasks` tasks are waiting (then
    /// counted in `droppedTaskCount`): a caller that must not lose the task handles
    /// false. Called from any thread.
    @discardableResult
    public func execute(_ task: @escaping @Sendable () -> Void) -> Bool {
        submit(bounded: true, task)
    }

    /// Like `execute`, but never refused for a full queue, only when the loop has shut
    /// down. For a caller that keeps at most one such task waiting per object it owns (a
    /// coalesced flush, a takeover notice, a reconnect try) or sends a rare control
    /// message whose loss would cost more than a longer queue (a stream's headers), so
    /// that what it adds is bounded by those objects, not by how often it is called.
    /// Called from any thread.
    @discardableResult
    public func executeCoalesced(_ task: @escaping @Sendable () -> Void) -> Bool {
        submit(bounded: false, task)
    }

    /// Tasks refused by `execute` because the queue was full.
    public var droppedTaskCount: Int { shared.withLock { $0.dropped } }

    /// Why `execute` refuses tasks now: the loop has finished, or its queue is full.
    var refusal: NetError { shared.withLock { $0.state == .stopped ? .loopShutdown : .loopBusy } }

    /// Why `execute` refuses tasks now, in words: "shut down" or "busy (N tasks waiting)".
    public var refusalReason: String {
        shared.withLock { $0.state == .stopped ? "shut down" : "busy (\($0.tasks.count) tasks waiting)" }
    }

    /// Tasks waiting to run.
    public var pendingTaskCount: Int { shared.withLock { $0.tasks.count } }

    /// `bounded: false` is for the loop's own bookkeeping (closing a listener), which
    /// must not be lost to a full queue and is never submitted in bulk.
    func submit(bounded: Bool, _ task: @escaping @Sendable () -> Void) -> Bool {
        let maxPendingTasks = maxPendingTasks, wakeFD = wakeFD
        let (accepted, report): (Bool, String?) = shared.withLock { shared in
            guard shared.state != .stopped else { return (false, nil) }
            if bounded, shared.tasks.count >= maxPendingTasks {
                shared.dropped += 1
                return (false, dropReport(&shared))
            }
            shared.tasks.append(task)
            // The loop thread checks for tasks before it waits, so only other threads need
            // to wake it, and only once until the loop has picked the tasks up.
            if !shared.isLoopThread { shared.wake(wakeFD) }
            return (true, nil)
        }
        if let report { Log.warning(report) }
        return accepted
    }

    /// A warning about dropped tasks, at most one a second (a flood of refusals must not
    /// turn into a flood of log lines).
    private func dropReport(_ shared: inout Shared) -> String? {
        guard let fresh = shared.dropLog.record(nowMicros: Clock.monotonicMicros()) else { return nil }
        return "\(name): task queue full (\(maxPendingTasks) waiting); dropped \(fresh) task(s), \(shared.dropped) in all"
    }

    /// Runs `task` on the loop thread once `delay` has passed. Timers due at the same
    /// time fire in the order they were scheduled. Called from any thread; from another
    /// thread the timer travels through the task queue, and when that is full it is
    /// dropped like any refused task (counted in `droppedTaskCount`) and never fires.
    @discardableResult
    public func schedule(after delay: Duration, _ task: @escaping @Sendable () -> Void) -> TimerHandle {
        schedule(afterMicros: Self.micros(delay), task)
    }

    func schedule(afterMicros delay: UInt64, _ task: @escaping @Sendable () -> Void) -> TimerHandle {
        let handle = TimerHandle(task)
        let deadline = Clock.monotonicMicros() + delay
        if inEventLoop {
            timers.insert(deadline: deadline, handle: handle)
        } else {
            execute { self.timers.insert(deadline: deadline, handle: handle) }
        }
        return handle
    }

    static func micros(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        let total = seconds * 1_000_000 + attoseconds / 1_000_000_000_000
        return UInt64(max(0, total))
    }

    // MARK: registration (loop thread)

    func register(_ fd: Int32, events: UInt32, source: EventLoopSource) throws(NetError) -> UInt64 {
        let id = nextSourceID
        nextSourceID += 1
        try Syscall.epollControl(epollFD, Epoll.add, fd, events: events, id: id)
        sources[id] = source
        return id
    }

    func reregister(_ fd: Int32, id: UInt64, events: UInt32) throws(NetError) {
        try Syscall.epollControl(epollFD, Epoll.modify, fd, events: events, id: id)
    }

    /// Removes the source; its descriptor is about to be closed, which would also drop
    /// it from the epoll set, but only once no duplicate of the descriptor is left.
    func deregister(_ fd: Int32, id: UInt64) {
        try? Syscall.epollControl(epollFD, Epoll.delete, fd, events: 0, id: id)
        sources[id] = nil
    }

    /// Queues a connection to be flushed at the end of this iteration.
    func flushLater(_ connection: TCPConnection) {
        pendingFlush.append(connection)
    }

    // MARK: the loop

    private func runIterations() {
        shared.withLock { $0.loopThread = pthread_self() }

        while true {
            let (stopping, hasTasks) = shared.withLock { ($0.state == .stopping, !$0.tasks.isEmpty) }
            if stopping { break }

            let ready: Int
            do {
                // Flushes requested by the last flush round's callbacks (a writer refilling
                // its queue from onWritabilityChanged) must not wait for an event.
                let busy = hasTasks || !pendingFlush.isEmpty
                ready = try Syscall.epollWait(epollFD, events, capacity: Int32(Self.eventCapacity),
                                              timeoutMillis: busy ? 0 : waitTimeoutMillis())
            } catch {
                Log.error("\(name): \(error); stopping the loop")
                break
            }
            now = Clock.monotonicMicros()
            for index in 0..<ready {
                let (bits, id) = Epoll.load(events, index: index)
                if id == 0 {
                    drainWake()
                } else if let source = sources[id] {
                    source.handleEvents(bits)
                }
            }
            fireDueTimers()
            runTasks()
            flushPending()
        }
        finishRunning()
    }

    private func waitTimeoutMillis() -> Int32 {
        guard let deadline = timers.earliestDeadline else { return -1 }
        let current = Clock.monotonicMicros()
        guard deadline > current else { return 0 }
        // Round up: waking a little late is harmless, waking early spins.
        return Int32(min((deadline - current + 999) / 1000, UInt64(Int32.max)))
    }

    private func fireDueTimers() {
        now = Clock.monotonicMicros()
        // Timers scheduled by these callbacks wait for the next iteration, even with a
        // zero delay, so a timer that re-arms itself cannot starve the descriptors.
        var budget = timers.count
        while budget > 0, let handle = timers.popDue(now: now) {
            budget -= 1
            handle.take()?()
        }
    }

    private func runTasks() {
        let batch = shared.withLock { shared in
            defer {
                shared.tasks.removeAll(keepingCapacity: true)
                shared.wakePending = false
            }
            return shared.tasks
        }
        for task in batch { task() }
    }

    private func flushPending() {
        // A flush can call back into handlers that write again; give those a few rounds
        // here, and leave the rest for the next iteration (which then does not block).
        var rounds = 0
        while !pendingFlush.isEmpty, rounds < 4 {
            // Swapped, not copied: both arrays keep their capacity, so a pass over
            // thousands of connections allocates nothing.
            swap(&pendingFlush, &flushing)
            for connection in flushing { connection.flushFromLoop() }
            flushing.removeAll(keepingCapacity: true)
            rounds += 1
        }
    }

    private func drainWake() {
        var counter: UInt64 = 0
        _ = try? Syscall.run("read(eventfd)") { Glibc.read(wakeFD, &counter, 8) }
    }

    private func finishRunning() {
        // Tasks submitted before shutdown() still run; what they and the closing sources
        // queue in turn gets a few more rounds.
        runTasks()
        flushPending()
        for source in Array(sources.values) { source.closeForShutdown() }
        sources.removeAll()
        for _ in 0..<4 {
            runTasks()
            flushPending()
        }
        for handle in timers.removeAll() { handle.cancel() }

        let dropped = shared.withLock { shared in
            shared.state = .stopped
            defer { shared.tasks.removeAll() }
            return shared.tasks.count
        }
        if dropped > 0 { Log.warning("\(name): dropped \(dropped) tasks submitted during shutdown") }
        closeResources()
        markFinished()
    }

    private func markFinished() {
        finished.lock()
        isFinished = true
        finished.broadcast()
        finished.unlock()
    }

    private func closeResources() {
        let alreadyClosed = shared.withLock { shared in
            defer { shared.resourcesClosed = true }
            return shared.resourcesClosed
        }
        guard !alreadyClosed else { return }
        try? Syscall.close(wakeFD)
        try? Syscall.close(epollFD)
    }
}
