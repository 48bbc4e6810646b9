import Foundation

/// Levels as the seed's ARLogLevel: none=0, info=1, warning=2, error=3.
public enum LogLevel: Int, Comparable, Sendable {
    case none = 0, info = 1, warning = 2, error = 3
    public static func < (a: LogLevel, b: LogLevel) -> Bool { a.rawValue < b.rawValue }
}

/// Diagnostics to stderr (stdout belongs to data: JSON stats, y4m frames).
public enum Log {
    nonisolated(unsafe) public static var threshold: LogLevel = .warning
    private static let lock = NSLock()

    public static func info(_ message: @autoclosure () -> String) { write(.info, message()) }
    public static func warning(_ message: @autoclosure () -> String) { write(.warning, message()) }
    public static func error(_ message: @autoclosure () -> String) { write(.error, message()) }

    private static func write(_ level: LogLevel, _ message: String) {
        guard threshold != .none, level >= threshold else { return }
        let tag = level == .error ? "error" : level == .warning ? "warning" : "info"
        lock.lock()
        FileHandle.standardError.write(Data("liveline \(tag): \(message)\n".utf8))
        lock.unlock()
    }
}
