/// The media tracks of an FLV stream.
public enum FLVTrack: Sendable, Hashable {
    case audio, video
}

/// Puts a publisher's audio and video in timestamp order and gives each item its FLV
/// timestamp (FLV spec v10.1 §E.4.1: tags in time order; players such as ffmpeg and
/// nginx-rtmp expect timestamps that never go back).
///
/// The two tracks come from different threads (the audio and the video encoder) and
/// each is late by its own encoder's delay, so an item is held until the other track
/// has reached its timestamp, or until its own track is `windowMicros` past it (the
/// other track has stalled or stopped: a muted camera sends a frame a second). An item
/// that still comes later than what was released gets the last released timestamp.
///
/// Timestamps count in milliseconds from the first item released (the earliest of
/// either kind, both on the shared capture clock), so audio and video timestamps are
/// comparable. Pure: no clock, no thread; the caller confines it to one thread.
public struct FLVInterleaver<Item> {
    public typealias Track = FLVTrack

    /// How far a track may run ahead of the other before its held items go anyway.
    public let windowMicros: Int64
    /// The tracks the stream carries: with one, items pass at once.
    public let tracks: Set<Track>

    private var held: [Track: [(item: Item, dts: Int64)]] = [:]
    private var heads: [Track: Int] = [:]
    /// The newest dts each track has reached (items or `advance`).
    private var newest: [Track: Int64] = [:]
    private var origin: Int64?
    /// The timestamp of the last item released, in ms.
    public private(set) var lastTimestamp: UInt32 = 0

    public init(tracks: Set<Track>, windowMicros: Int64 = 100_000) {
        precondition(!tracks.isEmpty && windowMicros >= 0, "an interleaver needs a track and a window")
        self.tracks = tracks
        self.windowMicros = windowMicros
    }

    /// Items waiting for the other track.
    public var heldCount: Int { tracks.reduce(0) { $0 + (held[$1]?.count ?? 0) - (heads[$1] ?? 0) } }

    /// Adds `item` of `track` at `dts` (µs on the capture clock, never decreasing within
    /// a track) and returns the items now due, in order, with their timestamps (ms).
    public mutating func push(_ item: Item, track: Track, dts: Int64) -> [(item: Item, timestamp: UInt32)] {
        precondition(tracks.contains(track), "item of a track the stream does not carry")
        held[track, default: []].append((item, dts))
        newest[track] = max(newest[track] ?? dts, dts)
        return release(all: false)
    }

    /// Notes that `track` reached `dts` without an item (a frame dropped before it got
    /// here), so the other track need not wait for it.
    public mutating func advance(_ track: Track, to dts: Int64) -> [(item: Item, timestamp: UInt32)] {
        guard tracks.contains(track) else { return [] }
        newest[track] = max(newest[track] ?? dts, dts)
        return release(all: false)
    }

    /// Removes the held items of `track` (a keyframe made them useless) and returns them.
    public mutating func discard(_ track: Track) -> [Item] {
        let index = heads[track] ?? 0
        let removed = (held[track] ?? []).dropFirst(index).map(\.item)
        held[track] = []
        heads[track] = 0
        return removed
    }

    /// Everything held, in order (the stream ends, or a header must follow what came before).
    public mutating func flush() -> [(item: Item, timestamp: UInt32)] { release(all: true) }

    private func head(_ track: Track) -> (item: Item, dts: Int64)? {
        let index = heads[track] ?? 0
        guard let queue = held[track], index < queue.count else { return nil }
        return queue[index]
    }

    private mutating func pop(_ track: Track) -> (item: Item, dts: Int64) {
        let index = heads[track] ?? 0
        let entry = held[track]![index]
        if index + 1 == held[track]!.count {
            held[track]!.removeAll(keepingCapacity: true)
            heads[track] = 0
        } else {
            heads[track] = index + 1
        }
        return entry
    }

    private mutating func release(all: Bool) -> [(item: Item, timestamp: UInt32)] {
        var out: [(item: Item, timestamp: UInt32)] = []
        while let next = nextDue(all: all) {
            let entry = pop(next)
            let origin = self.origin ?? entry.dts
            self.origin = origin
            let millis = UInt32(clamping: max(0, entry.dts - origin) / 1000)
            lastTimestamp = max(lastTimestamp, millis)
            out.append((entry.item, lastTimestamp))
        }
        return out
    }

    /// The track whose head goes next, if one is due.
    private func nextDue(all: Bool) -> Track? {
        // Audio first on a tie: a fixed order, whatever the set's.
        let candidates = [Track.audio, .video].filter(tracks.contains).compactMap { track in head(track).map { (track, $0.dts) } }
        guard let earliest = candidates.min(by: { $0.1 < $1.1 }) else { return nil }
        if all || candidates.count == tracks.count { return earliest.0 }
        // Only one track has items: wait for the other unless it is already past them,
        // or this track has run a window ahead of them.
        let (track, dts) = earliest
        for other in tracks where other != track {
            if let reached = newest[other], reached >= dts { continue }
            if let own = newest[track], own - dts >= windowMicros { continue }
            return nil
        }
        return track
    }
}
