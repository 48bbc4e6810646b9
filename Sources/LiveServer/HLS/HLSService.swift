import LiveCore
import LiveNet
import Synchronization

/// HLS of the relay's live streams (`GET /{app}/{stream}.m3u8` and its segments, see
/// `HLSHTTPRoutes`): one `HLSStreamPlayer` per stream somebody watches over HLS.
///
/// Segmenting starts at a stream's first playlist request, not at its publish: cutting
/// MPEG-TS copies every byte of the stream, which the many streams nobody watches in a
/// browser (co-host and call streams, RTMP-only audiences) should not pay; and the GOP
/// cache's replay hands the new segmenter the current GOP at once, so the first playlist
/// is ready one keyframe interval later. It stops when the publisher unpublishes, when
/// the stream has had no publisher for `publisherGrace` (a dropped connection; checked
/// every `sweepInterval`), or when nobody asked for its playlist or segments for
/// `idleTimeout`; its playlist and segments then answer 404.
///
/// Thread-safe: the table is in a Mutex (taken before a stream player's own lock, never after).
public final class HLSService: Sendable {
    /// The segments' length, the window's bounds and the service's timeouts.
    public struct Limits: Sendable {
        /// A segment closes at the first keyframe this long after its start (at least).
        public var segmentTargetMilliseconds: UInt32
        /// Segments a stream's playlist lists (older ones answer 404).
        public var windowSegments: Int
        /// The most bytes a stream's window holds (the oldest segments go first).
        public var maxWindowBytes: Int
        /// A segment growing past this is dropped (the next starts at a keyframe).
        public var maxSegmentBytes: Int
        /// A stream's segmenting stops after this long without a playlist or segment request.
        public var idleTimeout: Duration
        /// How long a first playlist request waits for the first segment (then 404).
        public var firstSegmentTimeout: Duration
        /// A stream whose publisher's connection dropped (without unpublishing) keeps its
        /// HLS this long for the publisher to come back (a kit reconnects within seconds).
        public var publisherGrace: Duration
        /// Streams segmented at once; a request for one more answers 503.
        public var maxStreams: Int
        /// The windows of all streams together (segments being cut are not counted: each
        /// is bounded by `maxSegmentBytes`); past it, a stream whose window grows gives
        /// up its own oldest segments, or the new one.
        public var maxWindowBytesTotal: Int

        public init(segmentTargetMilliseconds: UInt32 = 1000, windowSegments: Int = 6, maxWindowBytes: Int = 24 << 20,
                    maxSegmentBytes: Int = 8 << 20, idleTimeout: Duration = .seconds(30),
                    firstSegmentTimeout: Duration = .seconds(10), publisherGrace: Duration = .seconds(5), maxStreams: Int = 256,
                    maxWindowBytesTotal: Int = 512 << 20) {
            self.segmentTargetMilliseconds = segmentTargetMilliseconds
            self.windowSegments = windowSegments
            self.maxWindowBytes = maxWindowBytes
            self.maxSegmentBytes = maxSegmentBytes
            self.idleTimeout = idleTimeout
            self.firstSegmentTimeout = firstSegmentTimeout
            self.publisherGrace = publisherGrace
            self.maxStreams = maxStreams
            self.maxWindowBytesTotal = maxWindowBytesTotal
        }

        /// The most bytes one stream's HLS holds: its window and the segment being cut.
        public var maxBytesPerStream: Int { maxWindowBytes + maxSegmentBytes }
    }

    /// What a playlist request gets.
    enum PlaylistLookup {
        case ready(HLSWindow)
        /// The first segment is not cut yet: the waiter given is answered later.
        case waiting
        case notFound(String)
        /// `maxStreams` streams are segmented already.
        case busy
    }

    public let limits: Limits
    /// What all streams' windows hold (`Limits.maxWindowBytesTotal`).
    public let budget: ByteBudget
    /// How often streams are checked for their end, idleness and waiters past their deadline.
    static let sweepInterval: Duration = .milliseconds(500)
    let server: RTMPServer
    private let group: EventLoopGroup
    private let players = Mutex<[StreamKey: HLSStreamPlayer]>([:])
    private let sweepTimer = Mutex<(timer: TimerHandle?, stopped: Bool)>((nil, false))

    /// Serves `server`'s streams; the sweep runs on one of `group`'s loops.
    public init(limits: Limits = Limits(), server: RTMPServer, group: EventLoopGroup) {
        self.limits = limits
        budget = ByteBudget(limit: limits.maxWindowBytesTotal)
        self.server = server
        self.group = group
        scheduleSweep()
    }

    /// Stops every stream's segmenting and the sweep. Any thread.
    public func stop() {
        sweepTimer.withLock { timer in
            timer.stopped = true
            timer.timer?.cancel()
            timer.timer = nil
        }
        let all = players.withLock { players in
            defer { players = [:] }
            return Array(players.values)
        }
        for player in all { player.leave(server.registry) }
    }

    /// Streams being segmented now.
    public var streamCount: Int { players.withLock { $0.count } }

    /// Bytes all streams' HLS holds now (windows and segments being cut).
    public var heldBytes: Int {
        players.withLock { Array($0.values) }.reduce(0) { $0 + $1.heldBytes }
    }

    /// What `/metrics` shows of HLS: streams segmented, bytes held, the shared budget's refusals.
    var metricSamples: [(name: String, type: String, help: String, value: String)] {
        [("liveline_hls_streams", "gauge", "Streams being cut into HLS segments.", String(streamCount)),
         ("liveline_hls_bytes", "gauge", "Bytes the HLS windows and the segments being cut hold.", String(heldBytes)),
         ("liveline_hls_budget_refusals_total", "counter",
          "Segments the shared budget of all HLS windows refused (the stream then gave up its oldest segments, or the new one).",
          String(budget.refusedCount))]
    }

    /// The playlist window of `key`, starting its segmenting when it is live and not yet
    /// segmented; when no segment is cut yet, `answer` gets the window once one is (nil:
    /// none came within `firstSegmentTimeout`, or the stream ended).
    func playlist(_ key: StreamKey, answer: @escaping @Sendable (HLSWindow?) -> Void) -> PlaylistLookup {
        let now = Clock.monotonicMicros()
        let waiter = HLSStreamPlayer.Waiter(deadlineMicros: now + EventLoopMicros.of(limits.firstSegmentTimeout), answer: answer)
        let existing = players.withLock { $0[key] }
        if let existing, let found = existing.window(nowMicros: now, waiter: waiter) {
            return found.waiting ? .waiting : .ready(found.window)
        }
        guard server.registry.stream(key)?.hasPublisher == true else { return .notFound("nobody publishes \(key)") }
        let started: HLSStreamPlayer? = players.withLock { players in
            if let racing = players[key] { return racing }
            guard players.count < limits.maxStreams else { return nil }
            // Segment numbers start at the wall clock's milliseconds: a stream segmented again
            // (published anew, or after a server restart) never reuses a segment URL that a
            // cache may still hold (segments may be cached for a minute).
            let player = HLSStreamPlayer(key: key, loop: group.next(), limits: limits, budget: budget, nowMicros: now,
                                         firstSequence: Clock.wallMicros() / 1000) { [weak self] player in
                self?.end(player)
            }
            players[key] = player
            let registry = server.registry
            if !player.loop.execute({ player.join(registry) }) {
                players[key] = nil
                return nil
            }
            return player
        }
        guard let started else { return .busy }
        guard let found = started.window(nowMicros: now, waiter: waiter) else { return .notFound("\(key) ended") }
        return found.waiting ? .waiting : .ready(found.window)
    }

    /// Segment `sequence` of `key`, nil when it is not (or no longer) in the window.
    func segment(_ key: StreamKey, sequence: UInt64) -> [UInt8]? {
        guard let player = players.withLock({ $0[key] }) else { return nil }
        return player.window(nowMicros: Clock.monotonicMicros())?.window.segment(sequence)?.bytes
    }

    /// Forgets `player`'s stream and leaves the relayed stream. Any thread.
    func end(_ player: HLSStreamPlayer) {
        players.withLock { players in
            if players[player.key] === player { players[player.key] = nil }
        }
        player.leave(server.registry)
    }

    private func scheduleSweep() {
        sweepTimer.withLock { timer in
            guard !timer.stopped else { return }
            timer.timer = group.loops[0].schedule(after: Self.sweepInterval) { [weak self] in
                self?.sweep()
                self?.scheduleSweep()
            }
        }
    }

    /// Ends streams that lost their publisher or their audience; answers overdue waiters.
    func sweep() {
        let now = Clock.monotonicMicros()
        let idle = EventLoopMicros.of(limits.idleTimeout)
        let grace = EventLoopMicros.of(limits.publisherGrace)
        for player in players.withLock({ Array($0.values) }) {
            player.expireWaiters(nowMicros: now)
            let gone = player.publisherGoneMicros(nowMicros: now) > grace
            if gone || player.idleMicros(nowMicros: now) > idle {
                Log.info("hls: \(player.key) \(gone ? "lost its publisher" : "was not requested for \(limits.idleTimeout)"); its segments are gone")
                end(player)
            }
        }
    }
}
