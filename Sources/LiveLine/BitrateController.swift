/// Adaptive bitrate for the hoster (the anyRTC SDK adapts its quality to onRtmpStreamStatus's
/// net band): a pure state machine fed a few times a second with what the push saw (the
/// time, the send queue's delay in ms, the throughput the network achieved, the frames
/// congestion dropped), answering the encoder bitrate to use next. No clock, no I/O: the
/// time is in the sample.
///
/// - The queue counts from its floor: the lowest of the last 10–20 s (at most
///   `maxBaseQueueMilliseconds`) is media in flight over the round trip, not a backlog.
/// - Cut, fast: when the queue has stayed above `highQueueMilliseconds` for
///   `confirmMilliseconds` (a keyframe's burst drains sooner), or passes twice that
///   level, or frames were dropped for congestion, the target falls to `rateHeadroom` ×
///   the throughput the link achieved over a quarter second where the samples have it,
///   the least of the second up to the last sample with a backlog in the last 2 s (less
///   `reservedKbps` for the sound; the link idles after a drop, and one quarter second can
///   read high), and at least to
///   `burstFactor` × itself. A throughput under `stallShare` of the target is a stall, not
///   a measure of the link: the target then falls to `downFactor` × itself.
/// - After a cut the backlog drains at the margin the cut left: no second cut for
///   `cutHoldMilliseconds`, and after that only while the queue still grows, frames were
///   dropped again, or the target is so close to what the link carries now that the
///   backlog would never drain; a draining queue is never read as fresh congestion. A
///   backlog that a second after the cut (and each second after) is not a quarter shorter
///   was cut too little: the target goes under the last second's throughput by the
///   backlog's share of a second.
///   A queue above `lowQueueMilliseconds` that has grown at every sample for
///   `growthMilliseconds` is congestion as well (a rate just above the link's).
/// - Probe, carefully: once the queue has stayed under `lowQueueMilliseconds` for
///   `probeIntervalMilliseconds` without creeping up (by `probeToleranceMilliseconds`),
///   the rate is known good (`lastGoodKbps`) and, once the link carries
///   `probeUseFactor` of the target (the encoder has caught up with the last step), the
///   target rises by one additive step,
///   up to `maxKbps`; the next step waits for another calm interval at the new rate. A
///   queue between the two levels holds the rate. A step after which the queue grows
///   (by `probeToleranceMilliseconds`, at two samples in a row, or its lowest over
///   `standingMilliseconds` stands that much higher) is taken back at once, before it
///   builds a backlog, and the next waits `probeBackoffMilliseconds`.
/// - Remember the link: a cut notes the rate the link carried (`linkRateKbps`). Steps stop at
///   `approachFactor` of it, where the link still has room; past it the rate goes only
///   by a small probe (`pastProbeFactor` above the link's rate)
///   `pastProbeIntervalMilliseconds` after the cut, taken back like any step if the queue
///   grows before the link has carried it (however long the encoder takes to reach it),
///   so a link that stays narrow costs a small backlog now and then, not a keyframe's
///   worth; each probe that fails (taken back, or cut) halves the next one's share, down
///   to `minPastProbeFactor`. When the link carries more than its noted rate (the
///   capacity came back, or the cut read it low), calm for `carriedWatchMilliseconds`
///   after the probe, the note rises to the probe's rate and the next probe follows at
///   once, `pastProbeGrowth` times further past it than the last and at least
///   `pastProbeFactor`: a wrong guess costs one small step, a returned capacity is reached
///   in a few.
/// - A lost connection is not congestion: samples while disconnected mean nothing
///   (`connectionLost`), and the stall that often comes before a loss is taken back —
///   the target returns to the last good rate. After a reconnect (or a takeover of the
///   stream name) the push resumes at that rate and the samples of the first
///   `reconnectGraceMilliseconds` (headers and an IDR in a burst, a rate meter starting
///   from nothing) are ignored.
public struct BitrateController: Sendable, Equatable {
    public struct Settings: Sendable, Equatable {
        public var minKbps: Int
        public var maxKbps: Int
        /// A queue longer than this, for `confirmMilliseconds`, is congestion.
        public var highQueueMilliseconds = 250
        /// A queue shorter than this is calm: the rate may rise.
        public var lowQueueMilliseconds = 100
        /// How long the queue must stay above the high level before a cut (twice the
        /// level cuts at once).
        public var confirmMilliseconds = 200
        /// A queue above the low level that has grown at every sample for this long is
        /// congestion too: the rate is above the link's, however slightly.
        public var growthMilliseconds = 750
        /// A probe steps up only if the queue grew less than this over its calm interval.
        public var probeToleranceMilliseconds = 30
        /// A queue whose lowest over this long after a step stands above the queue at the
        /// step (by `probeToleranceMilliseconds`) takes the step back, however unevenly it grew.
        public var standingMilliseconds = 750
        /// After a probe was taken back, the next one waits this long.
        public var probeBackoffMilliseconds = 2000
        /// How long after a step a growing queue takes it back (the encoder needs most of
        /// a second to reach a new rate, the queue some more to show it).
        public var probeWatchMilliseconds = 2000
        /// A step up waits until the link carries at least this share of the target: an
        /// encoder still ramping up to the last step has not tried it yet (and one that
        /// makes far less, a still picture, is not limited by the target at all).
        public var probeUseFactor = 0.8
        /// The share of the achieved throughput a cut goes to.
        public var rateHeadroom = 0.85
        /// A cut is at least this factor (the queue grew though the link carries more
        /// than the target: a burst).
        public var burstFactor = 0.9
        /// The cut when the throughput says nothing of the link (a stall).
        public var downFactor = 0.7
        /// A throughput under this share of the target at a cut is a stall (a quarter
        /// second's can honestly be a quarter of the target: a link that fell from 4 Mbit/s
        /// to 600 kbit/s under a 2500 kbit/s stream).
        public var stallShare = 0.125
        /// The additive step of a probe, in kbit/s.
        public var stepKbps: Int
        /// Calm time before each step up.
        public var probeIntervalMilliseconds = 1000
        /// Steps stop at this share of the link's rate noted at the last cut (where the
        /// cut itself goes).
        public var approachFactor = 0.85
        /// A probe past the noted rate goes this share above it.
        public var pastProbeFactor = 0.15
        /// How long after a cut, a step that reaches the approach, or a probe taken back
        /// the next probe past the noted rate waits.
        public var pastProbeIntervalMilliseconds = 3000
        /// After a probe past the link's note failed (taken back, or a cut), the next goes half
        /// as far past it, down to this share.
        public var minPastProbeFactor = 0.05
        /// After a probe the link carried, the next goes this many times further past it
        /// (and at least `pastProbeFactor`).
        public var pastProbeGrowth = 2.0
        /// A probe past the noted rate is carried when, this long after it, the queue is
        /// calm and the link carries more than the note (a link can only carry what it has).
        public var carriedWatchMilliseconds = 1000
        /// Calm with a throughput this many times the noted rate: the link carried more
        /// (an encoder makes a few % less than its target, so the margin is small).
        public var carriedMoreFactor = 1.03
        /// No second cut this soon after one.
        public var cutHoldMilliseconds = 1000
        /// Samples ignored after a reconnect.
        public var reconnectGraceMilliseconds = 2000
        /// Bit rate of the rest of the stream (the sound), taken off the throughput.
        public var reservedKbps = 0
        /// The queue's floor (the lowest over the last 10 to 20 s, at most this) is the
        /// path's round trip, not a backlog: it is taken off before the levels apply.
        public var maxBaseQueueMilliseconds = 200
        /// How long a floor is remembered.
        public var baseWindowMilliseconds = 10_000

        /// The step is 10 % of `maxKbps` (at least 25 kbit/s): from a cut to 0.85 × 1 Mbit/s
        /// back to 2500 in about 7 calm seconds.
        public init(minKbps: Int, maxKbps: Int) {
            self.minKbps = max(1, min(minKbps, maxKbps))
            self.maxKbps = max(minKbps, maxKbps)
            stepKbps = max(25, self.maxKbps / 10)
        }
    }

    /// What the push saw, at one instant.
    public struct Sample: Sendable, Equatable {
        /// Monotonic time of the sample, in ms.
        public var timeMilliseconds: Int64
        /// The push's queue in ms: how long its backlog (unacknowledged) takes to leave,
        /// at least the media it spans (`RTMPPublisher.Stats.queueDelayMilliseconds`).
        public var queuedMilliseconds: Int
        /// Frames congestion dropped since the previous sample (not those lost while
        /// disconnected or waiting for a keyframe after a reconnect).
        public var droppedFrames: Int
        /// Bytes per second the network carried over about the last second.
        public var sendBytesPerSecond: Double
        /// The same over about the last quarter second (nil: not measured): with a backlog,
        /// what the link carries now, where the last second's figure still holds the faster
        /// time before a drop.
        public var recentBytesPerSecond: Double?

        public init(timeMilliseconds: Int64, queuedMilliseconds: Int, droppedFrames: Int = 0, sendBytesPerSecond: Double,
                    recentBytesPerSecond: Double? = nil) {
            self.timeMilliseconds = timeMilliseconds
            self.queuedMilliseconds = queuedMilliseconds
            self.droppedFrames = droppedFrames
            self.sendBytesPerSecond = sendBytesPerSecond
            self.recentBytesPerSecond = recentBytesPerSecond
        }
    }

    /// What the controller is doing (the `abr` field of `--stats json`).
    public enum Phase: String, Sendable, Equatable {
        /// The queue is calm: stepping up, or at the maximum.
        case probing
        /// The queue is between the levels: the rate holds.
        case holding
        /// Cut: the backlog drains.
        case draining
        /// Disconnected: samples are ignored.
        case offline
        /// Just reconnected: samples are ignored for the grace time.
        case settling
    }

    public let settings: Settings
    /// The bitrate the encoder should use, in kbit/s.
    public private(set) var targetKbps: Int
    /// The highest rate the queue was last calm at for a whole probe interval: where a
    /// reconnect resumes.
    public private(set) var lastGoodKbps: Int
    public private(set) var phase = Phase.probing
    private var highSince: Int64?
    private var calmSince: Int64?
    /// The last step up (its time and the queue then) while its rate is not yet known
    /// good, and when the next one may come.
    private var probeTime: Int64?
    private var probeQueue = 0
    private var nextProbe: Int64 = .min
    /// When the last cut was made (nil once the queue is calm again).
    private var lastCut: Int64?
    /// While draining: the queue a second ago (at the cut, then each second), which the
    /// backlog should have shrunk from.
    private var drainCheck: TimedQueue?
    /// The previous sample's queue (from its floor) and time.
    private var previousQueue = 0
    private var previousTime: Int64?
    /// Since when the queue has grown at every sample.
    private var growingSince: Int64?
    /// The queues (from the floor) of the last `standingMilliseconds`, with their times.
    private var recentQueues: [TimedQueue] = []
    private struct TimedQueue: Sendable, Equatable {
        let time: Int64
        let queue: Int
    }
    /// The queue when the calm interval began.
    private var calmStartQueue = 0
    /// The throughputs of the samples with a backlog (the link's rate, not the
    /// encoder's) in the last 2 s, and their times (the last is used).
    private var linkKbps: [Double] = []
    private var linkTimes: [Int64] = []
    private var settleUntil: Int64?
    /// The rate the link carried at the last cut (kbit/s of video), raised when a probe
    /// past it is carried; nil: not known (never cut).
    public private(set) var linkRateKbps: Double?
    /// When the next probe past `linkRateKbps` may come.
    private var nextPastProbe: Int64 = .min
    /// How far past `linkRateKbps` the next probe goes (a share of it).
    private var pastProbeShare: Double
    /// The lowest queue of the current and the previous base window.
    private var baseWindow = BaseWindow()

    /// The queue's floor: media in flight over the path's round trip, which no rate
    /// shortens. Two windows, so that the floor follows a path that changed.
    private struct BaseWindow: Sendable, Equatable {
        var start: Int64?
        var current = Int.max
        var previous = Int.max

        mutating func add(_ queue: Int, at time: Int64, window: Int) -> Int {
            if let start, time - start < Int64(window) {
                current = min(current, queue)
            } else {
                previous = start == nil ? queue : current
                current = queue
                start = time
            }
            return min(current, previous)
        }
    }

    public init(settings: Settings, startKbps: Int) {
        self.settings = settings
        targetKbps = min(max(startKbps, settings.minKbps), settings.maxKbps)
        lastGoodKbps = targetKbps
        pastProbeShare = settings.pastProbeFactor
    }

    /// Takes one sample; returns the new target when it changed.
    @discardableResult
    public mutating func update(_ sample: Sample) -> Int? {
        let now = sample.timeMilliseconds
        switch phase {
        case .offline:
            return nil
        case .settling:
            if let settleUntil, now < settleUntil { return nil }
            settleUntil = nil
            phase = .holding
        case .probing, .holding, .draining:
            break
        }
        let before = targetKbps
        let base = min(settings.maxBaseQueueMilliseconds,
                       baseWindow.add(sample.queuedMilliseconds, at: now, window: settings.baseWindowMilliseconds))
        let queue = max(0, sample.queuedMilliseconds - base)
        recentQueues.append(TimedQueue(time: now, queue: queue))
        while let first = recentQueues.first, now - first.time > Int64(settings.standingMilliseconds) { recentQueues.removeFirst() }
        if queue > previousQueue {
            growingSince = growingSince ?? previousTime ?? now
        } else {
            growingSince = nil
        }
        defer {
            previousQueue = queue
            previousTime = now
        }
        if queue > settings.highQueueMilliseconds {
            if highSince == nil { highSince = now }
        } else {
            highSince = nil
        }
        if queue > settings.lowQueueMilliseconds {
            linkKbps.append(carriedKbps(sample, recent: true))
            linkTimes.append(now)
        }
        while let first = linkTimes.first, now - first > 2000 {
            linkTimes.removeFirst()
            linkKbps.removeFirst()
        }
        let confirmed = highSince.map { now - $0 >= Int64(settings.confirmMilliseconds) } ?? false
        let growing = queue > settings.lowQueueMilliseconds
            && growingSince.map { now - $0 >= Int64(settings.growthMilliseconds) } ?? false
        let congested = confirmed || growing || queue > 2 * settings.highQueueMilliseconds || sample.droppedFrames > 0
        // A probe past the link's noted rate is watched until the link carries it (the
        // encoder may take longer than the watch to reach it), any other for the watch.
        let pastLink = linkRateKbps.map { Double(targetKbps) > $0 } ?? false
        let grewTwice = growingSince.map { now - $0 >= 2 * (now - (previousTime ?? now)) } ?? false
        if let probeTime, now - probeTime <= Int64(settings.probeWatchMilliseconds) || congested || pastLink,
           queue > probeQueue + settings.probeToleranceMilliseconds,
           grewTwice || standingQueue(since: probeTime, now: now) > probeQueue + settings.probeToleranceMilliseconds {
            // The queue grows since the last step, at two samples in a row, or its lowest
            // over a while after it stands above where it was (a backlog that keyframes and
            // sound make uneven, not a burst that drains): that step went past the link.
            // Take it back before it builds a backlog, and wait before the next.
            self.probeTime = nil
            if let link = linkRateKbps, Double(targetKbps) > link * settings.approachFactor {
                nextPastProbe = now + Int64(settings.pastProbeIntervalMilliseconds)
                pastProbeShare = pastLink ? narrowed(pastProbeShare) : settings.pastProbeFactor
            }
            targetKbps = lastGoodKbps
            calmSince = nil
            nextProbe = now + Int64(settings.probeBackoffMilliseconds)
            phase = .holding
            return targetKbps == before ? nil : targetKbps
        }
        if lastCut != nil, let check = drainCheck, now - check.time >= Int64(settings.cutHoldMilliseconds) {
            if queue > settings.lowQueueMilliseconds, queue * 4 > check.queue * 3 {
                // A second after the cut the backlog has not shrunk by a quarter: the cut
                // read the link high (a quarter second's throughput can). The last second's,
                // all of it with a backlog, is the link's: go under it by enough to drain.
                drain(sample, queue: queue)
                return targetKbps == before ? nil : targetKbps
            }
            drainCheck = TimedQueue(time: now, queue: queue)
        }
        if congested {
            let failedProbe = probeTime != nil && pastLink
            probeTime = nil
            calmSince = nil
            if let lastCut {
                // The backlog of before the cut drains: only a longer queue, new drops or a
                // target the link now carries all but none of (it would never drain: the cut
                // came from a throughput that still held faster seconds), after the hold, say
                // the cut was not enough.
                let held = now - lastCut < Int64(settings.cutHoldMilliseconds)
                let carried = carriedKbps(sample)
                let aboveLink = carried >= Double(targetKbps) / 4
                    && carried * settings.rateHeadroom < Double(targetKbps) * settings.burstFactor
                let worse = queue > previousQueue || sample.droppedFrames > 0 || aboveLink
                if held || !worse { return nil }
            }
            cut(sample, queue: queue, afterPastProbe: failedProbe)
        } else if queue < settings.lowQueueMilliseconds {
            lastCut = nil
            drainCheck = nil
            phase = .probing
            guard let since = calmSince else {
                calmSince = now
                calmStartQueue = queue
                return nil
            }
            if now - since >= Int64(settings.probeIntervalMilliseconds) {
                // Calm, but a queue that crept up says the rate is at the link's already.
                if queue <= calmStartQueue + settings.probeToleranceMilliseconds {
                    let carried = carriedKbps(sample)
                    // Carried, calm, a while after the probe: the link carried more than it did
                    // at the cut, which it can only do when it has the room.
                    let watched = probeTime.map { now - $0 >= Int64(settings.carriedWatchMilliseconds) } ?? true
                    if let link = linkRateKbps, watched, carried >= link * settings.carriedMoreFactor {
                        // The link carries more than its noted rate: the probe is good (the
                        // encoder makes a little less than its target), note it and probe
                        // further, soon.
                        linkRateKbps = max(carried, Double(targetKbps))
                        pastProbeShare = min(1, max(settings.pastProbeFactor, pastProbeShare * settings.pastProbeGrowth))
                        nextPastProbe = now
                    }
                    // A probe past the link is good once the link has carried it.
                    if linkRateKbps.map({ Double(targetKbps) <= $0 }) ?? true { lastGoodKbps = targetKbps }
                    let used = carried >= Double(targetKbps) * settings.probeUseFactor
                    if used, now >= nextProbe, targetKbps < settings.maxKbps, let next = nextStep(now: now) {
                        targetKbps = min(settings.maxKbps, next)
                        probeTime = now
                        probeQueue = queue
                    } else if let probeTime, now - probeTime > Int64(settings.probeWatchMilliseconds), !pastLink {
                        self.probeTime = nil
                    }
                }
                calmSince = now
                calmStartQueue = queue
            }
        } else {
            // Between the levels: hold, and the calm time starts over.
            calmSince = nil
            if lastCut == nil { phase = .holding }
        }
        return targetKbps == before ? nil : targetKbps
    }

    /// The next rate up, or nil when none may be tried now: an additive step below the
    /// approach to the link's noted rate, stopping at it; at the approach, once its calm
    /// interval is over, a probe past the noted rate.
    private mutating func nextStep(now: Int64) -> Int? {
        guard let link = linkRateKbps else { return targetKbps + settings.stepKbps }
        let approach = Int(link * settings.approachFactor)
        if targetKbps < approach {
            let next = min(approach, targetKbps + settings.stepKbps)
            if next == approach { nextPastProbe = max(nextPastProbe, now + Int64(settings.pastProbeIntervalMilliseconds)) }
            return next
        }
        // One probe past the link at a time, each after its interval.
        guard Double(targetKbps) <= link, now >= nextPastProbe else { return nil }
        nextPastProbe = now + Int64(settings.pastProbeIntervalMilliseconds)
        return max(targetKbps + 1, Int(link * (1 + pastProbeShare)))
    }

    /// The least of `linkKbps` in the second up to its last entry; nil when it is empty.
    private func leastLinkKbps() -> Double? {
        guard let last = linkTimes.last else { return nil }
        return zip(linkTimes, linkKbps).filter { last - $0.0 <= 1000 }.map(\.1).min()
    }

    /// The video rate the link carried (the throughput less the sound's share), in kbit/s:
    /// over the last second, or the last quarter second when `recent` and measured.
    private func carriedKbps(_ sample: Sample, recent: Bool = false) -> Double {
        let bytes = recent ? sample.recentBytesPerSecond ?? sample.sendBytesPerSecond : sample.sendBytesPerSecond
        return bytes * 8 / 1000 - Double(settings.reservedKbps)
    }

    /// The lowest queue of the last `standingMilliseconds`, all of them after `since`
    /// (0 before a whole such span has passed since it).
    private func standingQueue(since: Int64, now: Int64) -> Int {
        guard now - since >= Int64(settings.standingMilliseconds),
              let first = recentQueues.first, first.time > since else { return 0 }
        return recentQueues.map(\.queue).min() ?? 0
    }

    /// The share of the next probe past the link after one that failed: the link is near its
    /// note, so half as far, down to `minPastProbeFactor`.
    private func narrowed(_ share: Double) -> Double {
        max(settings.minPastProbeFactor, share / 2)
    }

    /// A cut did not drain the backlog of `queue` ms: the target goes under the last second's
    /// throughput by the backlog's share of a second (at least by `rateHeadroom`'s margin,
    /// at most by half), which drains it in about a second, and the link's note follows.
    private mutating func drain(_ sample: Sample, queue: Int) {
        let target = Double(targetKbps)
        let carried = carriedKbps(sample)
        let next: Double
        if carried >= target * settings.stallShare {
            let share = max(0.5, min(settings.rateHeadroom, 1 - Double(queue) / 1000))
            next = min(target * settings.burstFactor, carried * share)
            linkRateKbps = carried
        } else {
            next = target * settings.downFactor
        }
        targetKbps = max(settings.minKbps, min(targetKbps, Int(next)))
        nextPastProbe = sample.timeMilliseconds + Int64(settings.pastProbeIntervalMilliseconds)
        lastCut = sample.timeMilliseconds
        drainCheck = TimedQueue(time: sample.timeMilliseconds, queue: queue)
        phase = .draining
    }

    /// Cuts to what the link carries; `afterPastProbe`: the congestion came with a probe past
    /// the link's note, which failed.
    private mutating func cut(_ sample: Sample, queue: Int, afterPastProbe: Bool = false) {
        let target = Double(targetKbps)
        // What the link carried with a backlog, over a quarter second, at the least in the
        // second up to the last such sample in the last 2 s (now, with a backlog now):
        // without a backlog now (a drop emptied the queue and the link idled) the throughput
        // is the encoder's, not the link's; the last second's still holds the faster time
        // before a capacity drop; and one quarter second can read high (the bucket's burst
        // as a link narrows, the acknowledgements of a recovered loss at once).
        let carried = leastLinkKbps() ?? carriedKbps(sample)
        let measured = carried >= target * settings.stallShare
        let next = measured
            ? min(target * settings.burstFactor, carried * settings.rateHeadroom)
            : target * settings.downFactor
        if measured { linkRateKbps = carried }
        pastProbeShare = afterPastProbe ? narrowed(pastProbeShare) : settings.pastProbeFactor
        nextPastProbe = sample.timeMilliseconds + Int64(settings.pastProbeIntervalMilliseconds)
        targetKbps = max(settings.minKbps, min(targetKbps, Int(next)))
        lastCut = sample.timeMilliseconds
        drainCheck = TimedQueue(time: sample.timeMilliseconds, queue: queue)
        phase = .draining
    }

    /// The connection was lost: nothing it shows until the next reconnect is congestion,
    /// and the target returns to the last good rate (a cut during the stall before the loss
    /// is taken back). Returns the new target when it changed.
    @discardableResult
    public mutating func connectionLost() -> Int? {
        let before = targetKbps
        targetKbps = lastGoodKbps
        phase = .offline
        highSince = nil
        calmSince = nil
        lastCut = nil
        drainCheck = nil
        previousQueue = 0
        previousTime = nil
        growingSince = nil
        recentQueues = []
        linkKbps = []
        linkTimes = []
        probeTime = nil
        return targetKbps == before ? nil : targetKbps
    }

    /// Publishing again at `timeMilliseconds` (a reconnect, or a takeover of the stream
    /// name): the push resumes at the last good rate and the samples of the grace time are
    /// ignored. Returns the new target when it changed.
    @discardableResult
    public mutating func reconnected(atMilliseconds timeMilliseconds: Int64) -> Int? {
        let before = targetKbps
        targetKbps = lastGoodKbps
        phase = .settling
        settleUntil = timeMilliseconds + Int64(settings.reconnectGraceMilliseconds)
        highSince = nil
        calmSince = nil
        lastCut = nil
        drainCheck = nil
        previousQueue = 0
        previousTime = nil
        growingSince = nil
        recentQueues = []
        linkKbps = []
        linkTimes = []
        probeTime = nil
        return targetKbps == before ? nil : targetKbps
    }
}
