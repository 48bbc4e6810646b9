import LiveNet

/// Runs a closure on an event loop every `interval` until cancelled: the RTMP clients'
/// refresh of their figures while connected.
///
/// Confined to `loop`'s thread: `start` and `cancel` are called there. The pending round
/// holds the timer weakly, so releasing the timer's owner stops it too.
final class RepeatingTimer: @unchecked Sendable {
    // @unchecked: `handle` is touched only on `loop`'s thread.
    let loop: EventLoop
    let interval: Duration
    private var handle: TimerHandle?

    init(loop: EventLoop, every interval: Duration) {
        self.loop = loop
        self.interval = interval
    }

    deinit {
        handle?.cancel()
    }

    /// Calls `tick` every `interval` from now on, until `cancel()`.
    func start(_ tick: @escaping @Sendable () -> Void) {
        handle?.cancel()
        handle = loop.schedule(after: interval) { [weak self] in
            guard let self else { return }
            tick()
            // `tick` may have cancelled the timer.
            if handle != nil { start(tick) }
        }
    }

    /// Stops the timer; a round not yet run never runs.
    func cancel() {
        handle?.cancel()
        handle = nil
    }
}
