import Foundation
import Glibc
import Synchronization

/// Levels as the anyRTC SDK's ARLogLevel: none=0, info=1, warning=2, error=3.
public enum LogLevel: Int, Comparable, Sendable {
    case none = 0, info = 1, warning = 2, error = 3
    public static func < (a: LogLevel, b: LogLevel) -> Bool { a.rawValue < b.rawValue }
}

/// Diagnostics to stderr (stdout belongs to data: JSON stats, y4m frames).
///
/// Logging never blocks the caller on stderr (an event loop must not stall because
/// nobody reads its pipe): lines go to a bounded queue that one writer thread drains;
/// when `queueCapacity` lines are waiting, new ones are dropped and counted, and the
/// writer reports the count with the next lines it writes. Lines still queued are
/// written on `exit` (the first log line registers a `flush` with atexit); call
/// `flush()` before anything that ends the process otherwise.
public enum Log {
    /// Lines below this level are not written (`.none`: nothing is). Any thread.
    public static var threshold: LogLevel {
        get { LogLevel(rawValue: thresholdValue.load(ordering: .relaxed)) ?? .warning }
        set { thresholdValue.store(newValue.rawValue, ordering: .relaxed) }
    }
    /// Start every line with the UTC time to the millisecond, as a server's log needs
    /// (`liveline serve` sets it). Set once at start, before anything logs.
    public static var timestamps: Bool {
        get { timestampsValue.load(ordering: .relaxed) }
        set { timestampsValue.store(newValue, ordering: .relaxed) }
    }
    private static let thresholdValue = Atomic<Int>(LogLevel.warning.rawValue)
    private static let timestampsValue = Atomic<Bool>(false)
    /// Lines waiting for the writer beyond this are dropped (and counted).
    public static let queueCapacity = 4096

    static let writer = LogWriter(fd: 2, capacity: queueCapacity, registersExitFlush: true)

    public static func info(_ message: @autoclosure () -> String) { write(.info, message()) }
    public static func warning(_ message: @autoclosure () -> String) { write(.warning, message()) }
    public static func error(_ message: @autoclosure () -> String) { write(.error, message()) }

    /// Waits until every line logged so far is on stderr, or `timeout` passed (a stderr
    /// nobody reads must not hang the exit either). Any thread.
    public static func flush(timeout: Duration = .seconds(2)) {
        writer.flush(timeout: timeout)
    }

    /// Lines dropped since the process started because the queue was full.
    public static var droppedLineCount: Int { writer.droppedCount }

    private static func write(_ level: LogLevel, _ message: String) {
        guard threshold != .none, level >= threshold else { return }
        writer.enqueue(line(level, message, wallMicros: timestamps ? Clock.wallMicros() : nil))
    }

    /// One log line, newline included: `[TIME ]liveline LEVEL: message`.
    static func line(_ level: LogLevel, _ message: String, wallMicros: UInt64?) -> String {
        let tag = level == .error ? "error" : level == .warning ? "warning" : "info"
        let time = wallMicros.map { timestamp($0) + " " } ?? ""
        return "\(time)liveline \(tag): \(message)\n"
    }

    /// `2026-12-01T21:58:24.123Z`: UTC, ISO 8601, milliseconds.
    public static func timestamp(_ wallMicros: UInt64) -> String {
        var seconds = time_t(wallMicros / 1_000_000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        return String(format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", parts.tm_year + 1900, parts.tm_mon + 1, parts.tm_mday,
                      parts.tm_hour, parts.tm_min, parts.tm_sec, Int32(wallMicros / 1000 % 1000))
    }
}

/// A bounded queue of text and the one thread that writes it to `fd`. Any thread may
/// enqueue; enqueueing only takes a lock and never waits for the descriptor.
final class LogWriter: Sendable {
    private let fd: Int32
    private let capacity: Int
    private let registersExitFlush: Bool

    private struct Queue {
        var lines: [String] = []
        /// Dropped since the writer last reported.
        var unreported = 0
        var dropped = 0
        var writing = false
        var started = false
    }

    private let queue = ConditionLock(Queue())

    init(fd: Int32, capacity: Int, registersExitFlush: Bool = false) {
        precondition(capacity > 0, "a log queue needs room for a line")
        self.fd = fd
        self.capacity = capacity
        self.registersExitFlush = registersExitFlush
    }

    var droppedCount: Int { queue.withLock { $0.dropped } }

    /// Queues `line` (newline included), or drops and counts it when the queue is full.
    func enqueue(_ line: String) {
        let capacity = capacity
        let starts = queue.withLock { queue in
            defer { queue.started = true }
            if queue.lines.count < capacity {
                queue.lines.append(line)
            } else {
                queue.dropped += 1
                queue.unreported += 1
            }
            return !queue.started
        }
        if starts { start() }
    }

    /// Waits until the queue is empty and written, at most `timeout`.
    func flush(timeout: Duration) {
        queue.withLock(waitingUntil: { !$0.started || ($0.lines.isEmpty && $0.unreported == 0 && !$0.writing) },
                       timeout: timeout) { _, _ in }
    }

    private func start() {
        let thread = Thread { [self] in run() }
        thread.name = "liveline-log"
        thread.start()
        if registersExitFlush {
            atexit { Log.flush() }
        }
    }

    private func run() {
        while true {
            let text = queue.withLock(waitingUntil: { !$0.lines.isEmpty || $0.unreported > 0 }) { queue, _ in
                var text = queue.lines.joined()
                queue.lines.removeAll(keepingCapacity: true)
                if queue.unreported > 0 {
                    // The dropped lines came after the ones just taken.
                    text += "liveline warning: \(queue.unreported) log line(s) dropped (the log queue was full)\n"
                    queue.unreported = 0
                }
                queue.writing = true
                return text
            }
            writeAll(text)
            queue.withLock { $0.writing = false }
        }
    }

    private func writeAll(_ text: String) {
        // Closed or broken: nothing more can be said there; this thread may wait out a
        // non-blocking stderr, nobody else does.
        _ = Array(text.utf8).withUnsafeBytes { Descriptor.writeAll(fd, $0) }
    }
}
