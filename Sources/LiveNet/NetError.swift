import Glibc

/// Why a network operation failed. A failed system call keeps the call's name and its
/// errno, so a log line says exactly what the kernel refused
/// ("connect failed: Connection refused (errno 111)").
public enum NetError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A system call failed with `errno`.
    case syscall(call: String, errno: Int32)
    /// Something did not happen in time (connect, idle, handshake); the text says what.
    case timedOut(String)
    /// A host could not be resolved or an address is malformed.
    case badAddress(String)
    /// The event loop shut down while the connection or listener was open.
    case loopShutdown
    /// The event loop's task queue was full (`EventLoop.maxPendingTasks`), so the work
    /// was refused rather than queued without end.
    case loopBusy
    /// The connection is closed or closing, so the operation was refused.
    case connectionClosed

    /// The errno of a failed system call, nil for the other cases.
    public var errno: Int32? {
        if case .syscall(_, let code) = self { return code }
        return nil
    }

    public var description: String {
        switch self {
        case .syscall(let call, let code):
            "\(call) failed: \(String(cString: strerror(code))) (errno \(code))"
        case .timedOut(let what): "\(what) timed out"
        case .badAddress(let what): "bad address: \(what)"
        case .loopShutdown: "the event loop shut down"
        case .loopBusy: "the event loop's task queue is full"
        case .connectionClosed: "the connection is closed"
        }
    }
}

/// What a non-blocking call did: finished with a value, or would have blocked (EAGAIN).
public enum IOResult<Value> {
    case done(Value)
    case wouldBlock
}

extension IOResult: Equatable where Value: Equatable {}
extension IOResult: Sendable where Value: Sendable {}
