/// The newest segments of one HLS stream, what its playlist lists and its segment URLs
/// serve: at most `maxSegments` of them and at most `maxBytes` together (the oldest go
/// first; the newest always stays). A segment that left the window answers 404.
///
/// With a `budget` (the server-wide one of all streams' windows), what the window holds
/// is charged to it; when the budget is spent, this window gives up its own oldest
/// segments for the new one, and refuses the new one when even that is not enough (the
/// next one kept is then marked a discontinuity). The window that charged must
/// `release()` when it is thrown away; copies of it (handed to readers) must not.
///
/// Pure value; the stream's `HLSStreamPlayer` keeps it under its lock.
struct HLSWindow {
    let maxSegments: Int
    let maxBytes: Int
    let budget: ByteBudget?
    private(set) var segments: [HLSSegmenter.Segment] = []
    private(set) var byteCount = 0
    /// Discontinuities that left the window (`#EXT-X-DISCONTINUITY-SEQUENCE`).
    private(set) var discontinuitiesGone = 0
    /// The number the next segment kept gets.
    private(set) var nextSequence: UInt64 = 0
    /// Segments refused because the budget was spent.
    private(set) var refusedCount = 0
    private var refusedSinceLast = false

    /// The first segment kept is numbered `firstSequence`.
    init(maxSegments: Int, maxBytes: Int, budget: ByteBudget? = nil, firstSequence: UInt64 = 0) {
        self.maxSegments = max(1, maxSegments)
        self.maxBytes = maxBytes
        self.budget = budget
        nextSequence = firstSequence
    }

    /// Keeps `segment` as the newest, numbered; false when the budget refused it.
    @discardableResult
    mutating func append(_ segment: HLSSegmenter.Segment) -> Bool {
        if let budget {
            while !budget.charge(segment.bytes.count) {
                guard !segments.isEmpty else {
                    refusedCount += 1
                    refusedSinceLast = true
                    return false
                }
                dropOldest()
            }
        }
        var kept = segment
        kept.sequence = nextSequence
        if refusedSinceLast && !kept.discontinuity { kept = kept.markedDiscontinuous }
        refusedSinceLast = false
        nextSequence += 1
        segments.append(kept)
        byteCount += kept.bytes.count
        while segments.count > maxSegments || (byteCount > maxBytes && segments.count > 1) { dropOldest() }
        return true
    }

    /// Gives back to the budget what this window holds, and empties it.
    mutating func release() {
        while !segments.isEmpty { dropOldest() }
    }

    private mutating func dropOldest() {
        let gone = segments.removeFirst()
        byteCount -= gone.bytes.count
        budget?.refund(gone.bytes.count)
        if gone.discontinuity { discontinuitiesGone += 1 }
    }

    /// The segment numbered `sequence`, if still in the window.
    func segment(_ sequence: UInt64) -> HLSSegmenter.Segment? {
        guard let first = segments.first, sequence >= first.sequence else { return nil }
        let index = sequence - first.sequence
        return index < UInt64(segments.count) ? segments[Int(index)] : nil
    }

    /// The live media playlist (RFC 8216 §4.3): version 3, a target duration covering
    /// every listed segment (and the configured target), no end tag. Segment URIs are
    /// `uriPrefix` + "N.ts" + `uriQuery` (relative to the playlist's URL).
    func playlist(targetMilliseconds: UInt32, uriPrefix: String, uriQuery: String) -> String {
        let longest = segments.map(\.durationMilliseconds).max() ?? 0
        // RFC 8216 §4.3.3.1: every EXTINF rounded to the nearest second is at most this.
        let target = max(1, (max(longest, targetMilliseconds) + 500) / 1000)
        var text = "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:\(target)\n"
        text += "#EXT-X-MEDIA-SEQUENCE:\(segments.first?.sequence ?? 0)\n"
        if discontinuitiesGone > 0 { text += "#EXT-X-DISCONTINUITY-SEQUENCE:\(discontinuitiesGone)\n" }
        for segment in segments {
            if segment.discontinuity { text += "#EXT-X-DISCONTINUITY\n" }
            let ms = segment.durationMilliseconds
            text += "#EXTINF:\(ms / 1000).\(String(ms % 1000 + 1000).dropFirst()),\n\(uriPrefix)\(segment.sequence).ts\(uriQuery)\n"
        }
        return text
    }
}
