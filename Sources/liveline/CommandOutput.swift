import Glibc
import LiveCore
import Synchronization

/// Standard output or standard error as the commands write them: each text goes out
/// whole with write(2) under a lock (lines from several threads never interleave, none
/// waits in a buffer), and a reader that went away is no crash.
///
/// `liveline guest URL --stats json | head -2` stops reading after two lines, and
/// Ctrl-C in a pipeline ends the reader too. The next write then fails with EPIPE
/// (main.swift ignores SIGPIPE, which would kill the process instead): the stream is
/// marked gone, later writes to it are dropped, and what was given to `whenReaderGone`
/// runs once, so the command ends its run and reports on stderr, as ffmpeg does.
final class CommandOutput: Sendable {
    static let standardOutput = CommandOutput(fd: STDOUT_FILENO)
    static let standardError = CommandOutput(fd: STDERR_FILENO)

    private struct State {
        var gone = false
        var handlers: [@Sendable () -> Void] = []
    }

    private let fd: Int32
    private let state = Mutex(State())

    private init(fd: Int32) { self.fd = fd }

    /// Writes `text` whole; false when it could not go out because the reader is gone
    /// (now or before) or the descriptor is broken.
    @discardableResult
    func write(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        let (written, handlers) = state.withLock { (state: inout State) -> (Bool, [@Sendable () -> Void]) in
            guard !state.gone else { return (false, []) }
            if bytes.withUnsafeBytes({ Descriptor.writeAll(fd, $0) }) == 0 { return (true, []) }
            state.gone = true
            defer { state.handlers = [] }
            return (false, state.handlers)
        }
        for handler in handlers { handler() }
        return written
    }

    /// True once a write found the reader gone.
    var isReaderGone: Bool { state.withLock { $0.gone } }

    /// Runs `handler` once when a write finds the reader gone, on the thread that wrote
    /// (at once when it already has).
    func whenReaderGone(_ handler: @escaping @Sendable () -> Void) {
        let already = state.withLock { (state: inout State) -> Bool in
            if !state.gone { state.handlers.append(handler) }
            return state.gone
        }
        if already { handler() }
    }
}
