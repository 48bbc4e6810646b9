/// The loop's pending timers as a binary min-heap on (deadline, sequence): the sequence
/// keeps timers with the same deadline in the order they were scheduled. Cancelled
/// timers stay in the heap until they come due (cheap: their closures are already gone)
/// and are swept out when the heap has grown to twice its size after the last sweep.
/// Confined to the loop thread.
struct TimerQueue {
    struct Entry {
        let deadline: UInt64
        let sequence: UInt64
        let handle: TimerHandle

        func precedes(_ other: Entry) -> Bool {
            deadline != other.deadline ? deadline < other.deadline : sequence < other.sequence
        }
    }

    private var heap: [Entry] = []
    private var nextSequence: UInt64 = 0
    private var sweepAt = 1024

    var isEmpty: Bool { heap.isEmpty }
    var count: Int { heap.count }
    var earliestDeadline: UInt64? { heap.first?.deadline }

    mutating func insert(deadline: UInt64, handle: TimerHandle) {
        if heap.count >= sweepAt { sweepCancelled() }
        heap.append(Entry(deadline: deadline, sequence: nextSequence, handle: handle))
        nextSequence &+= 1
        siftUp(heap.count - 1)
    }

    /// Removes and returns the earliest timer if it is due at `now`.
    mutating func popDue(now: UInt64) -> TimerHandle? {
        guard let first = heap.first, first.deadline <= now else { return nil }
        let last = heap.removeLast()
        if !heap.isEmpty {
            heap[0] = last
            siftDown(0)
        }
        return first.handle
    }

    mutating func removeAll() -> [TimerHandle] {
        defer { heap.removeAll() }
        return heap.map(\.handle)
    }

    private mutating func sweepCancelled() {
        heap.removeAll { $0.handle.isCancelled }
        // Re-heapify bottom-up after the filter broke the order.
        for index in stride(from: heap.count / 2 - 1, through: 0, by: -1) { siftDown(index) }
        sweepAt = max(1024, heap.count * 2)
    }

    private mutating func siftUp(_ start: Int) {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].precedes(heap[parent]) else { return }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        while true {
            let left = parent * 2 + 1
            guard left < heap.count else { return }
            var smallest = left
            if left + 1 < heap.count, heap[left + 1].precedes(heap[left]) { smallest = left + 1 }
            guard heap[smallest].precedes(heap[parent]) else { return }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
