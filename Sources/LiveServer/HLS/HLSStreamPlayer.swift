import LiveCore
import LiveNet
import Synchronization

/// One stream's HLS: a player of the relayed stream without a socket (it joins like an
/// RTMP player and gets the GOP cache's replay, then live messages) that cuts what it
/// gets into segments (`HLSSegmenter`) and keeps the newest in its `HLSWindow`.
/// Playlist requests that come before the first segment wait for it.
///
/// Thread-safe: the relay delivers on `loop`, HTTP requests read on theirs; everything
/// that changes is in one Mutex.
final class HLSStreamPlayer: RelayPlayer {
    /// A playlist request waiting for the first segment.
    struct Waiter {
        let deadlineMicros: UInt64
        let answer: @Sendable (HLSWindow?) -> Void
    }

    private struct State {
        var segmenter: HLSSegmenter
        var window: HLSWindow
        var stream: RelayStream?
        var lastRequestMicros: UInt64
        var waiters: [Waiter] = []
        var ended = false
        /// When the sweep first found the joined stream without a publisher.
        var publisherGoneSinceMicros: UInt64?
    }

    let key: StreamKey
    let loop: EventLoop
    let targetMilliseconds: UInt32
    let counters = PlayerCounters()
    private let state: Mutex<State>
    /// Told (on `loop`) when the publisher unpublished: the service forgets this stream.
    private let onUnpublished: @Sendable (HLSStreamPlayer) -> Void

    /// Its segments are numbered from `firstSequence` on.
    init(key: StreamKey, loop: EventLoop, limits: HLSService.Limits, budget: ByteBudget?, nowMicros: UInt64,
         firstSequence: UInt64, onUnpublished: @escaping @Sendable (HLSStreamPlayer) -> Void) {
        self.key = key
        self.loop = loop
        targetMilliseconds = limits.segmentTargetMilliseconds
        self.onUnpublished = onUnpublished
        let segmenter = HLSSegmenter(limits: .init(targetMilliseconds: limits.segmentTargetMilliseconds,
                                                   maxSegmentBytes: limits.maxSegmentBytes))
        state = Mutex(State(segmenter: segmenter,
                            window: HLSWindow(maxSegments: limits.windowSegments, maxBytes: limits.maxWindowBytes, budget: budget,
                                              firstSequence: firstSequence),
                            lastRequestMicros: nowMicros))
    }

    /// Joins `registry`'s stream: the replay goes through the segmenter before any live
    /// message, as both arrive on `loop`. Called on `loop`.
    func join(_ registry: StreamRegistry) {
        let joined = registry.join(key, player: self, address: "hls", counters: counters)
        let stale = state.withLock { s in
            s.stream = joined.stream
            return s.ended
        }
        // Ended while the join was on its way: leave at once.
        if stale {
            leave(registry)
            return
        }
        deliver(joined.replay[...], from: joined.stream)
    }

    /// Leaves the relayed stream (the registry forgets it when nobody else uses it). Any thread.
    func leave(_ registry: StreamRegistry) {
        let (stream, waiters) = state.withLock { s in
            s.ended = true
            defer {
                s.stream = nil
                s.waiters = []
                s.window.release()
            }
            return (s.stream, s.waiters)
        }
        for waiter in waiters { waiter.answer(nil) }
        guard let stream else { return }
        stream.removePlayer(self)
        registry.removeIfEmpty(stream)
    }

    /// The stream this player joined, while it is joined.
    var stream: RelayStream? { state.withLock { $0.stream } }

    /// The window (a copy: segments share their bytes), noting the request's time for
    /// the idle check; nil once ended. With no segment yet, `waiter` is kept and answered
    /// by the first segment, the end, or `expireWaiters`; then this returns nil too.
    func window(nowMicros: UInt64, waiter: Waiter? = nil) -> (window: HLSWindow, waiting: Bool)? {
        state.withLock { s in
            guard !s.ended else { return nil }
            s.lastRequestMicros = nowMicros
            if s.window.segments.isEmpty, let waiter {
                s.waiters.append(waiter)
                return (s.window, true)
            }
            return (s.window, false)
        }
    }

    /// Bytes this stream's HLS holds: its window and the segment being cut.
    var heldBytes: Int { state.withLock { $0.window.byteCount + $0.segmenter.pendingBytes } }

    /// How long the joined stream has been without a publisher, as the sweep sees it
    /// (0 while it has one, or before the join).
    func publisherGoneMicros(nowMicros: UInt64) -> UInt64 {
        let live = stream?.hasPublisher ?? true
        return state.withLock { s in
            guard !live else {
                s.publisherGoneSinceMicros = nil
                return 0
            }
            let since = s.publisherGoneSinceMicros ?? nowMicros
            s.publisherGoneSinceMicros = since
            return nowMicros &- since
        }
    }

    /// Microseconds since the last playlist or segment request.
    func idleMicros(nowMicros: UInt64) -> UInt64 { state.withLock { nowMicros &- $0.lastRequestMicros } }

    /// Answers (with nothing) the waiters whose deadline passed.
    func expireWaiters(nowMicros: UInt64) {
        let expired: [Waiter] = state.withLock { s in
            let gone = s.waiters.filter { $0.deadlineMicros <= nowMicros }
            s.waiters.removeAll { $0.deadlineMicros <= nowMicros }
            return gone
        }
        for waiter in expired { waiter.answer(nil) }
    }

    // MARK: RelayPlayer

    func deliver(_ messages: ArraySlice<RelayMessage>, from stream: RelayStream) {
        let (window, waiters): (HLSWindow, [Waiter]) = state.withLock { s in
            guard !s.ended else { return (s.window, []) }
            var added = false
            for message in messages {
                guard let segment = s.segmenter.add(kind: message.kind, timestamp: message.raw.timestamp,
                                                    payload: message.raw.payload) else { continue }
                guard s.window.append(segment) else { continue }
                RelayCounters.add(counters.bytesOut, segment.bytes.count)
                added = true
            }
            guard added, !s.waiters.isEmpty else { return (s.window, []) }
            defer { s.waiters = [] }
            return (s.window, s.waiters)
        }
        for waiter in waiters { waiter.answer(window) }
    }

    func lostMessages(of stream: RelayStream) {
        state.withLock { $0.segmenter.lost() }
    }

    func streamUnpublished(_ stream: RelayStream) {
        onUnpublished(self)
    }
}
