import LiveCore

/// A/V sync as a guest presents a stream that carries the test source's markers
/// (`TestPatternSource`: a patch lit on the first frame of each second; `ToneGenerator`:
/// a 50 ms 3 kHz beep starting at that frame's capture instant). Each marked frame (the
/// rising edge of the lit patch) is paired with the beep onset nearest to it, within
/// `pairWindowMicros`; the offset is the beep's pts − the frame's pts (positive: audio
/// late), in the stream's presentation times, which is how the guest's outputs (`--out`,
/// `--record`) hand them to a player.
///
/// Beeps are found with `ToneDetector` on `hopMicros` windows of the decoded audio's
/// first channel: the first window whose energy share at 3 kHz reaches `threshold`
/// after one below it. The share of a window the beep fills a fraction f of is about f²,
/// so the onset is placed f = √share of a window before that window's end (about 1 ms
/// accuracy at 48 kHz). Pure: frames and audio come from the caller.
public struct AVSyncMeter: Sendable {
    /// The marker beep's frequency (`ToneGenerator.markerFrequency`).
    public static let markerFrequency = 3000.0
    /// The analysis window and hop.
    public static let hopMicros: Int64 = 5000
    /// The 3 kHz share that counts as the beep (half a window of beep).
    public static let threshold = 0.25
    /// A marked frame and a beep further apart than this are not a pair (markers come a
    /// second apart).
    public static let pairWindowMicros: Int64 = 500_000

    /// The offsets (µs) paired so far.
    public private(set) var offsets = LatencyStatistics()
    private var markedFrames: [Int64] = []
    private var beeps: [Int64] = []
    private var lastLit = false
    // Beep detection state.
    private var detector: ToneDetector?
    private var window: [Float] = []
    private var windowStart: Int64 = 0
    private var inBeep = false

    public init() {}

    /// A shown frame at `pts` (µs) and whether its marker patch is lit (nil: the frame
    /// cannot hold the patch).
    public mutating func frame(pts: Int64, lit: Bool?) {
        let lit = lit ?? false
        defer { lastLit = lit }
        guard lit, !lastLit else { return }
        markedFrame(at: pts)
    }

    /// Decoded audio: scanned for beep onsets; returns the onsets found in it (pts, µs).
    @discardableResult
    public mutating func audio(_ frame: AudioFrame) -> [Int64] {
        guard Double(frame.sampleRate) > 2 * Self.markerFrequency else { return [] }
        var onsets: [Int64] = []
        if detector?.sampleRate != frame.sampleRate {
            detector = ToneDetector(frequency: Self.markerFrequency, sampleRate: frame.sampleRate)
            window.removeAll()
        }
        let hop = Int(Int64(frame.sampleRate) * Self.hopMicros / 1_000_000)
        let samples = frame.channel(0)
        var index = samples.startIndex
        while index < samples.endIndex {
            if window.isEmpty {
                windowStart = frame.pts.micros + Int64(index - samples.startIndex) * 1_000_000 / Int64(frame.sampleRate)
            }
            let take = min(hop - window.count, samples.endIndex - index)
            window.append(contentsOf: samples[index..<index + take])
            index += take
            guard window.count == hop else { continue }
            let share = detector!.share(in: window)
            if share >= Self.threshold, !inBeep {
                let filled = min(1, share.squareRoot())
                let onset = windowStart + Int64(Double(Self.hopMicros) * (1 - filled))
                beepOnset(at: onset)
                onsets.append(onset)
            }
            inBeep = share >= Self.threshold
            window.removeAll(keepingCapacity: true)
        }
        return onsets
    }

    /// A marked frame at `pts` (µs): paired with the nearest unpaired beep in the window.
    public mutating func markedFrame(at pts: Int64) {
        if let index = Self.nearest(to: pts, in: beeps) {
            offsets.add(micros: beeps.remove(at: index) - pts)
        } else {
            markedFrames.append(pts)
            Self.prune(&markedFrames, newest: pts)
        }
    }

    /// A beep starting at `pts` (µs): paired with the nearest unpaired marked frame in the window.
    public mutating func beepOnset(at pts: Int64) {
        if let index = Self.nearest(to: pts, in: markedFrames) {
            offsets.add(micros: pts - markedFrames.remove(at: index))
        } else {
            beeps.append(pts)
            Self.prune(&beeps, newest: pts)
        }
    }

    /// p50 and p95 of the offsets in ms; nil without pairs.
    public var p50p95Ms: (Double, Double)? { offsets.p50p95Ms }

    private static func nearest(to pts: Int64, in candidates: [Int64]) -> Int? {
        let best = candidates.indices.min { abs(candidates[$0] - pts) < abs(candidates[$1] - pts) }
        guard let best, abs(candidates[best] - pts) <= pairWindowMicros else { return nil }
        return best
    }

    /// Unpaired ones older than two windows before the newest never pair.
    private static func prune(_ list: inout [Int64], newest: Int64) {
        list.removeAll { newest - $0 > 2 * pairWindowMicros || $0 - newest > 2 * pairWindowMicros }
    }
}
