/// The guest's latency control: which buffered packets to skip so that what is shown
/// stays near the buffer target instead of drifting behind after a stall or a burst.
/// Pure: it looks at the buffered packets' timestamps and keyframe flags only.
///
/// The guest shows each frame as soon as it is decoded; the target is the most
/// received-but-not-shown media it tolerates. When the buffer spans more than
/// `targetMilliseconds + toleranceMilliseconds`:
/// 1. packets before the latest keyframe are dropped undecoded (a keyframe starts a
///    clean picture, so nothing broken is ever shown), then
/// 2. packets from there on that are still more than the target behind the newest are
///    decoded but not shown (the decoder needs them for the frames after), so the first
///    frame shown is within the target of live.
public struct GuestLatencyControl: Sendable, Equatable {
    /// One buffered packet, as the control sees it.
    public struct Packet: Sendable, Equatable {
        public var dtsMilliseconds: Int64
        public var isKeyframe: Bool

        public init(dtsMilliseconds: Int64, isKeyframe: Bool) {
            self.dtsMilliseconds = dtsMilliseconds
            self.isKeyframe = isKeyframe
        }
    }

    /// What to do with the front of the buffer.
    public struct Plan: Sendable, Equatable {
        /// Packets to drop without decoding, from the front.
        public var drop: Int
        /// Packets after those to decode without showing.
        public var decodeSilently: Int

        public init(drop: Int, decodeSilently: Int) {
            self.drop = drop
            self.decodeSilently = decodeSilently
        }

        public static let none = Plan(drop: 0, decodeSilently: 0)
    }

    /// The buffer target (default 150 ms).
    public var targetMilliseconds: Int
    /// How far past the target the buffer may grow before the control acts, so ordinary
    /// network jitter never costs a frame.
    public var toleranceMilliseconds: Int

    public init(targetMilliseconds: Int = 150, toleranceMilliseconds: Int = 100) {
        self.targetMilliseconds = targetMilliseconds
        self.toleranceMilliseconds = toleranceMilliseconds
    }

    /// The buffered media time: newest dts − oldest dts, in ms.
    public static func span(_ buffer: [Packet]) -> Int64 {
        guard let first = buffer.first, let last = buffer.last else { return 0 }
        return max(0, last.dtsMilliseconds - first.dtsMilliseconds)
    }

    /// The plan for `buffer` (oldest first).
    public func plan(_ buffer: [Packet]) -> Plan {
        guard let newest = buffer.last?.dtsMilliseconds,
              Self.span(buffer) > Int64(targetMilliseconds + toleranceMilliseconds) else { return .none }
        let drop = buffer.lastIndex(where: \.isKeyframe) ?? 0
        var silent = 0
        // The newest packet is always shown: there is nothing later to show instead.
        while drop + silent < buffer.count - 1,
              newest - buffer[drop + silent].dtsMilliseconds > Int64(targetMilliseconds) {
            silent += 1
        }
        return Plan(drop: drop, decodeSilently: silent)
    }

    /// How many of the buffered audio frames (their pts in ms, oldest first) to drop from
    /// the front. With the video skipped (`videoCutMilliseconds`: the time of the first
    /// video packet that will be shown), audio skips to the same point, so it never lags
    /// the picture. Without video in the buffer (an audio-only stream), audio is cut on
    /// its own, as video is: past target + tolerance, to `targetMilliseconds` behind the
    /// newest frame.
    public func audioDrop(_ ptsMilliseconds: [Int64], videoCutMilliseconds: Int64?) -> Int {
        if let cut = videoCutMilliseconds { return ptsMilliseconds.prefix { $0 < cut }.count }
        guard let first = ptsMilliseconds.first, let newest = ptsMilliseconds.last,
              newest - first > Int64(targetMilliseconds + toleranceMilliseconds) else { return 0 }
        return ptsMilliseconds.prefix { newest - $0 > Int64(targetMilliseconds) }.count
    }

    /// The refill after a stall: each held picture's share of the target, 0–100, in
    /// arrival order (their dts in ms, oldest first): how far the buffer had filled when
    /// it came. A burst after the stall so reports each level it filled through.
    public func refillPercents(_ dtsMilliseconds: [Int64]) -> [Int] {
        guard let first = dtsMilliseconds.first, targetMilliseconds > 0 else { return dtsMilliseconds.map { _ in 100 } }
        return dtsMilliseconds.map { Int(min(100, max(0, $0 - first) * 100 / Int64(targetMilliseconds))) }
    }
}
