import Glibc

/// A connection's pending output: ranges of shared buffers, oldest first, plus the byte
/// total the watermarks are checked against. Confined to the connection's loop thread.
struct WriteQueue {
    private struct Entry {
        let bytes: SharedBytes
        var start: Int
        let end: Int
    }

    private var entries: [Entry] = []
    private var head = 0
    private(set) var byteCount = 0

    var isEmpty: Bool { head == entries.count }
    var bufferCount: Int { entries.count - head }

    mutating func append(_ bytes: SharedBytes, range: Range<Int>) {
        entries.append(Entry(bytes: bytes, start: range.lowerBound, end: range.upperBound))
        byteCount += range.count
    }

    /// Points up to `capacity` iovecs at the oldest queued bytes; returns how many
    /// vectors were filled and how many bytes they cover.
    func fill(_ vectors: UnsafeMutablePointer<iovec>, capacity: Int) -> (count: Int, bytes: Int) {
        var count = 0
        var bytes = 0
        var index = head
        while index < entries.count, count < capacity {
            let entry = entries[index]
            vectors[count] = iovec(iov_base: entry.bytes.base + entry.start, iov_len: entry.end - entry.start)
            bytes += entry.end - entry.start
            count += 1
            index += 1
        }
        return (count, bytes)
    }

    /// Drops `written` bytes from the front (after a full or partial writev).
    mutating func consume(_ written: Int) {
        var remaining = written
        byteCount -= written
        while remaining > 0 {
            let length = entries[head].end - entries[head].start
            if remaining >= length {
                remaining -= length
                head += 1
            } else {
                entries[head].start += remaining
                remaining = 0
            }
        }
        if head == entries.count {
            entries.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 64, head * 2 >= entries.count {
            entries.removeFirst(head)
            head = 0
        }
    }

    mutating func removeAll() {
        entries.removeAll()
        head = 0
        byteCount = 0
    }
}
