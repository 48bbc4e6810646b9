import Foundation

/// Reads a YUV4MPEG2 stream from a pipe as it arrives (a `liveline guest --y4m -`),
/// keeping, for each frame, its arrival time and the colours at a fixed set of points.
final class Y4MReader: @unchecked Sendable {
    // @unchecked: `frames` is guarded by `lock`; the reader thread owns the parsing state.
    struct Frame {
        var time: Date
        /// RGB at each point of `points`, in order.
        var colours: [(r: Int, g: Int, b: Int)]
    }

    let points: [(x: Int, y: Int)]
    private let lock = NSLock()
    private var frames: [Frame] = []

    init(handle: FileHandle, points: [(x: Int, y: Int)]) {
        self.points = points
        Thread.detachNewThread { [self] in read(handle) }
    }

    var all: [Frame] {
        lock.lock()
        defer { lock.unlock() }
        return frames
    }

    /// Waits until a frame that arrived after `after` satisfies `predicate`; that frame.
    func waitFor(after: Date = .distantPast, timeout: TimeInterval, _ predicate: (Frame) -> Bool) -> Frame? {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let hit = all.first(where: { $0.time >= after && predicate($0) }) { return hit }
            Thread.sleep(forTimeInterval: 0.02)
        }
        return nil
    }

    private func read(_ handle: FileHandle) {
        var buffer = Data()
        var width = 0, height = 0
        func fill() -> Bool {
            let data = handle.availableData
            buffer.append(data)
            return !data.isEmpty
        }
        // Header line.
        while !buffer.contains(0x0A) { if !fill() { return } }
        let newline = buffer.firstIndex(of: 0x0A)!
        for field in String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self).split(separator: " ") {
            if field.hasPrefix("W") { width = Int(field.dropFirst()) ?? 0 }
            if field.hasPrefix("H") { height = Int(field.dropFirst()) ?? 0 }
        }
        buffer.removeSubrange(buffer.startIndex...newline)
        let chromaWidth = (width + 1) / 2, chromaHeight = (height + 1) / 2
        let size = width * height + 2 * chromaWidth * chromaHeight
        while true {
            while !buffer.contains(0x0A) { if !fill() { return } }
            let mark = buffer.firstIndex(of: 0x0A)!
            let headerLength = mark - buffer.startIndex + 1
            while buffer.count < headerLength + size { if !fill() { return } }
            let frame = buffer.withUnsafeBytes { raw -> Frame in
                let base = raw.baseAddress!.assumingMemoryBound(to: UInt8.self) + headerLength
                let u = base + width * height, v = u + chromaWidth * chromaHeight
                let colours = points.map { point -> (r: Int, g: Int, b: Int) in
                    let y = Double(base[point.y * width + point.x]) - 16
                    let cb = Double(u[(point.y / 2) * chromaWidth + point.x / 2]) - 128
                    let cr = Double(v[(point.y / 2) * chromaWidth + point.x / 2]) - 128
                    func clamp(_ value: Double) -> Int { Int(max(0, min(255, value.rounded()))) }
                    return (clamp(1.164 * y + 1.596 * cr), clamp(1.164 * y - 0.392 * cb - 0.813 * cr), clamp(1.164 * y + 2.017 * cb))
                }
                return Frame(time: Date(), colours: colours)
            }
            buffer.removeSubrange(buffer.startIndex..<(buffer.startIndex + headerLength + size))
            lock.lock()
            frames.append(frame)
            lock.unlock()
        }
    }
}
