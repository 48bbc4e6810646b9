import Dispatch

/// The end of a pipeline's run, for the threads that wait on it: signalled once by the
/// run's last thread, after which every wait returns at once (each waiter passes the
/// signal on).
struct RunEnd: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)

    /// The run has ended. Call once.
    func signal() { semaphore.signal() }

    /// Blocks until the run has ended.
    func wait() {
        semaphore.wait()
        semaphore.signal()
    }

    /// Blocks up to `seconds`; true when the run has ended.
    func wait(seconds: Double) -> Bool {
        guard semaphore.wait(timeout: .now() + seconds) == .success else { return false }
        semaphore.signal()
        return true
    }
}
