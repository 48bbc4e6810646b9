import Foundation
import Glibc

/// An Xvfb X server on a free display number, for the tests that capture a screen
/// (`screen:` sources, the hoster's share). Its root window is painted one solid colour
/// with `xsetroot`; the server runs with `-noreset` (otherwise it resets, and forgets
/// the colour, when xsetroot, its last client, disconnects) and `-nolisten tcp`.
/// `stop()` (or the end of the object) stops it.
public final class VirtualDisplay: @unchecked Sendable {
    // @unchecked: `process` is set once by init; Process is safe to terminate from any thread.
    public static let xvfb = "/usr/bin/Xvfb"
    public static let xsetroot = "/usr/bin/xsetroot"

    /// Whether Xvfb and xsetroot are installed (scripts/setup installs them).
    public static var isAvailable: Bool {
        FileManager.default.isExecutableFile(atPath: xvfb) && FileManager.default.isExecutableFile(atPath: xsetroot)
    }

    /// The display number, and its name (`:N`).
    public let number: Int
    public var name: String { ":\(number)" }
    public let width: Int
    public let height: Int
    private let process: Process

    /// The display numbers tried, from a random one on, so tests running at once rarely
    /// race for the same number (the loser's Xvfb sees the lock file and the next is tried).
    public static let numbers = 90...120

    /// Starts Xvfb with a `width`×`height` 24-bit screen on the first free display of
    /// `numbers` (no lock file `/tmp/.X<n>-lock`, no socket) and waits until it answers.
    public init(width: Int = 320, height: Int = 180) throws {
        self.width = width
        self.height = height
        let span = Self.numbers.count
        let first = Int.random(in: 0..<span)
        for step in 0..<span {
            let n = Self.numbers.lowerBound + (first + step) % span
            guard Self.isFree(n) else { continue }
            let process = Process()
            process.executableURL = URL(fileURLWithPath: Self.xvfb)
            process.arguments = [":\(n)", "-screen", "0", "\(width)x\(height)x24", "-nolisten", "tcp", "-noreset"]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            if Self.waitUntilServing(n, process) {
                number = n
                self.process = process
                return
            }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }
        throw Failure("no free X display in :\(Self.numbers.lowerBound)...:\(Self.numbers.upperBound) for Xvfb")
    }

    /// Paints the root window `color` (`#rrggbb` or an X colour name).
    public func paint(_ color: String) throws {
        let status = try Self.run(Self.xsetroot, ["-display", name, "-solid", color])
        guard status == 0 else { throw Failure("xsetroot -display \(name) -solid \(color) exited with \(status)") }
    }

    /// A display number with no X server: what a test of the "no X server" error opens.
    /// Taken outside `numbers`, where no test starts one meanwhile.
    public static func unusedNumber() -> Int? {
        (150...199).first { isFree($0) }
    }

    /// Stops the server and removes its lock file and socket. SIGTERM may be blocked in
    /// the child (it inherits the signal mask of the test's thread), hence SIGKILL after
    /// a moment, and the files a killed server leaves behind are removed here.
    public func stop() {
        guard process.isRunning else { return }
        process.terminate()
        let deadline = Date().addingTimeInterval(0.5)
        while process.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        try? FileManager.default.removeItem(atPath: "/tmp/.X\(number)-lock")
        try? FileManager.default.removeItem(atPath: "/tmp/.X11-unix/X\(number)")
    }

    deinit { stop() }

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
        public init(_ description: String) { self.description = description }
    }

    private static func isFree(_ n: Int) -> Bool {
        !FileManager.default.fileExists(atPath: "/tmp/.X\(n)-lock") && !FileManager.default.fileExists(atPath: "/tmp/.X11-unix/X\(n)")
    }

    /// True once an X client gets through to display `n` (within 10 s); false when the
    /// server exited (another one took the number first).
    private static func waitUntilServing(_ n: Int, _ process: Process) -> Bool {
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline, process.isRunning {
            if FileManager.default.fileExists(atPath: "/tmp/.X11-unix/X\(n)"),
               (try? run(xsetroot, ["-display", ":\(n)", "-solid", "black"])) == 0 {
                return process.isRunning
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
        return false
    }

    private static func run(_ executable: String, _ arguments: [String]) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }
}
