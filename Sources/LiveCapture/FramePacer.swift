import LiveCore

/// Paces frame `index` (or, by offset, an audio block) on the monotonic clock so a source delivers `fps`
/// frames per second from the moment it started, without drifting.
struct FramePacer {
    let fps: Int
    private var startMicros: UInt64 = 0

    init(fps: Int) { self.fps = fps }

    mutating func start() { startMicros = Clock.monotonicMicros() }

    /// Sleeps until `micros` after the start.
    func wait(untilOffset micros: Int64) {
        guard micros > 0 else { return }
        let deadline = startMicros + UInt64(micros)
        // Clock.sleep sleeps at most a second per call; a late frame (after a pause) is not waited for.
        while Clock.monotonicMicros() < deadline { Clock.sleep(untilMonotonic: deadline) }
    }

    /// Sleeps until frame `index` is due.
    func wait(forFrame index: Int64) {
        wait(untilOffset: MediaTime(frame: index, fps: fps).micros)
    }
}
