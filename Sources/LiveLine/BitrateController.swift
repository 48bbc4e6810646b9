/// Adaptive bitrate for the hoster (the anyRTC SDK adapts its quality to onRtmpStreamStatus's
/// net band): a pure state machine fed once per interval with what the publisher saw,
/// answering the encoder bitrate to use next. No clock, no I/O.
///
/// - Down: when the send queue holds more than `highQueueMilliseconds` of media, or
///   frames were dropped in the interval, the target falls to `downFactor` × the current
///   one, and to `rateHeadroom` × the measured send rate when that is lower (the link
///   told us what it carries), never below `minKbps`.
/// - Up: after `stableIntervalsBeforeUp` intervals in a row with the queue under
///   `lowQueueMilliseconds` and no drop, the target rises by `upFactor`, up to `maxKbps`;
///   the count starts over after each step so the climb is slow and a step that
///   congests again is taken back at once.
public struct BitrateController: Sendable, Equatable {
    public struct Settings: Sendable, Equatable {
        public var minKbps: Int
        public var maxKbps: Int
        public var highQueueMilliseconds = 400
        public var lowQueueMilliseconds = 100
        public var downFactor = 0.7
        public var upFactor = 1.1
        public var rateHeadroom = 0.85
        public var stableIntervalsBeforeUp = 5

        public init(minKbps: Int, maxKbps: Int) {
            self.minKbps = max(1, min(minKbps, maxKbps))
            self.maxKbps = max(minKbps, maxKbps)
        }
    }

    /// What the publisher saw over one interval.
    public struct Sample: Sendable, Equatable {
        /// Unsent media in the publisher's queue, in ms.
        public var queuedMilliseconds: Int
        /// Frames dropped during the interval.
        public var droppedFrames: Int
        /// Bytes per second the connection carried.
        public var sendBytesPerSecond: Double

        public init(queuedMilliseconds: Int, droppedFrames: Int, sendBytesPerSecond: Double) {
            self.queuedMilliseconds = queuedMilliseconds
            self.droppedFrames = droppedFrames
            self.sendBytesPerSecond = sendBytesPerSecond
        }
    }

    public let settings: Settings
    /// The bitrate the encoder should use, in kbit/s.
    public private(set) var targetKbps: Int
    private var stableIntervals = 0

    public init(settings: Settings, startKbps: Int) {
        self.settings = settings
        targetKbps = min(max(startKbps, settings.minKbps), settings.maxKbps)
    }

    /// Takes one interval's figures; returns the new target when it changed.
    @discardableResult
    public mutating func update(_ sample: Sample) -> Int? {
        let before = targetKbps
        if sample.queuedMilliseconds > settings.highQueueMilliseconds || sample.droppedFrames > 0 {
            stableIntervals = 0
            var next = Double(targetKbps) * settings.downFactor
            let carried = sample.sendBytesPerSecond * 8 / 1000 * settings.rateHeadroom
            if carried > 0 { next = min(next, carried) }
            targetKbps = max(settings.minKbps, Int(next))
        } else if sample.queuedMilliseconds < settings.lowQueueMilliseconds {
            stableIntervals += 1
            if stableIntervals >= settings.stableIntervalsBeforeUp {
                stableIntervals = 0
                targetKbps = min(settings.maxKbps, max(targetKbps + 1, Int(Double(targetKbps) * settings.upFactor)))
            }
        } else {
            stableIntervals = 0
        }
        return targetKbps == before ? nil : targetKbps
    }
}
