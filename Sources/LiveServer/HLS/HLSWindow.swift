/// The newest segments of one HLS stream, what its playlist lists and its segment URLs
/// serve: at most `maxSegments` of them and at most `maxBytes` together (the oldest go
/// first; the newest always stays). A segment that left the window answers 404.
///
/// Pure value; the stream's `HLSStreamPlayer` keeps it under its lock.
struct HLSWindow {
    let maxSegments: Int
    let maxBytes: Int
    private(set) var segments: [HLSSegmenter.Segment] = []
    private(set) var byteCount = 0
    /// Discontinuities that left the window (`#EXT-X-DISCONTINUITY-SEQUENCE`).
    private(set) var discontinuitiesGone = 0

    init(maxSegments: Int, maxBytes: Int) {
        self.maxSegments = max(1, maxSegments)
        self.maxBytes = maxBytes
    }

    mutating func append(_ segment: HLSSegmenter.Segment) {
        segments.append(segment)
        byteCount += segment.bytes.count
        while segments.count > maxSegments || (byteCount > maxBytes && segments.count > 1) {
            let gone = segments.removeFirst()
            byteCount -= gone.bytes.count
            if gone.discontinuity { discontinuitiesGone += 1 }
        }
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
