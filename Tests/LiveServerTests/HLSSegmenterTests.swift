import Testing
@testable import LiveRTMP
@testable import LiveServer

/// Messages of a relayed H.264 + AAC stream, made by hand (the segmenter reads only their headers).
enum HLSFixture {
    static let sps: [UInt8] = [0x67, 0x64, 0x00, 0x1F, 0xAC, 0xD9]
    static let pps: [UInt8] = [0x68, 0xEE, 0x3C, 0x80]
    static var videoHeader: [UInt8] {
        [0x17, 0, 0, 0, 0, 1, 0x64, 0x00, 0x1F, 0xFF, 0xE1, 0, UInt8(sps.count)] + sps + [1, 0, UInt8(pps.count)] + pps
    }
    /// AAC LC, 44.1 kHz (index 4), stereo.
    static let audioHeader: [UInt8] = [0xAF, 0, 0x12, 0x10]

    static func frame(keyframe: Bool, size: Int = 40, compositionTime: UInt8 = 0) -> [UInt8] {
        let nal: [UInt8] = [keyframe ? 0x65 : 0x41] + Array(repeating: 0xAB, count: size)
        let n = UInt32(nal.count)
        return [keyframe ? 0x17 : 0x27, 1, 0, 0, compositionTime,
                UInt8(n >> 24), UInt8((n >> 16) & 0xFF), UInt8((n >> 8) & 0xFF), UInt8(n & 0xFF)] + nal
    }

    static let audioFrame: [UInt8] = [0xAF, 1] + Array(repeating: 0x21, count: 30)

    /// Feeds `seconds` of 30 fps video (a keyframe every `gop` frames) with audio every
    /// 23 ms; returns the segments closed.
    static func feed(_ segmenter: inout HLSSegmenter, from start: UInt32 = 0, seconds: Double, gop: Int,
                     audio: Bool = true, frameSize: Int = 40) -> [HLSSegmenter.Segment] {
        var closed: [HLSSegmenter.Segment] = []
        let frames = Int(seconds * 30)
        var nextAudio = start
        for index in 0..<frames {
            let time = start + UInt32(index * 1000 / 30)
            while audio, nextAudio <= time {
                closed += segmenter.add(kind: .audio, timestamp: nextAudio, payload: audioFrame).map { [$0] } ?? []
                nextAudio += 23
            }
            let key = index % gop == 0
            closed += segmenter.add(kind: key ? .keyframe : .interframe, timestamp: time,
                                    payload: frame(keyframe: key, size: frameSize)).map { [$0] } ?? []
        }
        return closed
    }

    static func segmenter(targetMilliseconds: UInt32 = 1000, maxSegmentBytes: Int = 1 << 20, audio: Bool = true) -> HLSSegmenter {
        var segmenter = HLSSegmenter(limits: .init(targetMilliseconds: targetMilliseconds, maxSegmentBytes: maxSegmentBytes))
        _ = segmenter.add(kind: .metadata, timestamp: 0, payload: [2, 0, 10])
        _ = segmenter.add(kind: .videoHeader, timestamp: 0, payload: videoHeader)
        if audio { _ = segmenter.add(kind: .audioHeader, timestamp: 0, payload: audioHeader) }
        return segmenter
    }
}

/// A transport stream read back: each PID's PES packets (header and payload) and the
/// checks a demuxer makes (sync bytes, continuity counters, table CRCs).
struct TSReadBack {
    struct PES {
        var streamID: UInt8
        var pts: UInt64
        var dts: UInt64?
        var payload: [UInt8]
        var randomAccess: Bool
        var pcr: UInt64?
    }

    var pes: [UInt16: [PES]] = [:]
    var tables: [UInt16: [UInt8]] = [:]
    var problems: [String] = []

    init(_ bytes: [UInt8], continuityFrom previous: [UInt16: UInt8] = [:]) {
        var continuity = previous
        var open: [UInt16: (bytes: [UInt8], randomAccess: Bool, pcr: UInt64?)] = [:]
        if bytes.count % 188 != 0 { problems.append("\(bytes.count) bytes is not whole packets") }
        for start in stride(from: 0, to: bytes.count - bytes.count % 188, by: 188) {
            let packet = Array(bytes[start..<start + 188])
            guard packet[0] == 0x47 else {
                problems.append("no sync byte at \(start)")
                continue
            }
            let pid = UInt16(packet[1] & 0x1F) << 8 | UInt16(packet[2])
            let unitStart = packet[1] & 0x40 != 0
            let control = (packet[3] >> 4) & 3
            let counter = packet[3] & 0x0F
            if let last = continuity[pid], (last + 1) & 0x0F != counter { problems.append("continuity of PID \(pid) at \(start)") }
            continuity[pid] = counter
            var offset = 4
            var randomAccess = false
            var pcr: UInt64?
            if control & 2 != 0 {
                let length = Int(packet[4])
                if length > 0 {
                    randomAccess = packet[5] & 0x40 != 0
                    if packet[5] & 0x10 != 0 {
                        pcr = UInt64(packet[6]) << 25 | UInt64(packet[7]) << 17 | UInt64(packet[8]) << 9 | UInt64(packet[9]) << 1
                            | UInt64(packet[10] >> 7)
                    }
                }
                offset = 5 + length
            }
            let payload = Array(packet[offset...])
            if pid == MPEGTSMuxer.patPID || pid == MPEGTSMuxer.pmtPID {
                let section = Array(payload.dropFirst(1))
                let length = Int(section[1] & 0x0F) << 8 | Int(section[2])
                let whole = Array(section[0..<3 + length])
                if MPEGTSMuxer.crc32(whole) != 0 { problems.append("table CRC of PID \(pid)") }
                tables[pid] = whole
                continue
            }
            if unitStart {
                if let done = open[pid] { finish(pid, done) }
                open[pid] = (payload, randomAccess, pcr)
            } else {
                open[pid]?.bytes += payload
            }
        }
        for (pid, done) in open { finish(pid, done) }
    }

    private mutating func finish(_ pid: UInt16, _ unit: (bytes: [UInt8], randomAccess: Bool, pcr: UInt64?)) {
        let b = unit.bytes
        guard b.count > 9, b[0] == 0, b[1] == 0, b[2] == 1 else {
            problems.append("PES of PID \(pid) without a start code")
            return
        }
        func time(_ at: Int) -> UInt64 {
            UInt64(b[at] >> 1 & 0x07) << 30 | UInt64(b[at + 1]) << 22 | UInt64(b[at + 2] >> 1) << 15
                | UInt64(b[at + 3]) << 7 | UInt64(b[at + 4] >> 1)
        }
        let flags = b[7]
        let headerLength = Int(b[8])
        let declared = Int(b[4]) << 8 | Int(b[5])
        let payload = Array(b[(9 + headerLength)...])
        if declared != 0, declared != b.count - 6 { problems.append("PES length \(declared) of PID \(pid), has \(b.count - 6)") }
        pes[pid, default: []].append(PES(streamID: b[3], pts: time(9), dts: flags & 0x40 != 0 ? time(14) : nil,
                                         payload: payload, randomAccess: unit.randomAccess, pcr: unit.pcr))
    }
}

@Suite("HLS: the MPEG-TS muxer, ADTS headers, the segmenter and the window, without a relay")
struct HLSSegmenterTests {
    @Test("CRC-32/MPEG-2 of \"123456789\" is 0x0376E6E7 (the catalogue's check value)")
    func crc() {
        #expect(MPEGTSMuxer.crc32(Array("123456789".utf8)) == 0x0376_E6E7)
    }

    @Test("PAT and PMT name one program with H.264 and ADTS AAC; PES of any size split into 188-byte packets with counters in order")
    func muxer() throws {
        var muxer = MPEGTSMuxer(hasVideo: true, hasAudio: true)
        var out: [UInt8] = []
        muxer.appendTables(to: &out)
        // Sizes around one packet's payload, so every stuffing case (0, 1, 2, many bytes) occurs.
        let sizes = [1, 150, 165, 166, 167, 168, 169, 170, 183, 184, 185, 350, 366, 367, 368, 70_000]
        for (index, size) in sizes.enumerated() {
            let unit = (0..<size).map { UInt8(truncatingIfNeeded: $0 * 7 + index) }
            muxer.appendVideo(unit, pts: UInt64(index) * 3000 + 9000, dts: UInt64(index) * 3000, keyframe: index == 0, to: &out)
            muxer.appendAudio(Array(unit.prefix(300)), pts: UInt64(index) * 1920, to: &out)
        }
        let read = TSReadBack(out)
        #expect(read.problems.isEmpty, "\(read.problems)")
        let pmt = try #require(read.tables[MPEGTSMuxer.pmtPID])
        // PCR PID video; streams 0x1B on 0x100, 0x0F on 0x101.
        #expect(Array(pmt[8...9]) == [0xE1, 0x00])
        #expect(Array(pmt[12...13]) == [0x1B, 0xE1] && Array(pmt[17...18]) == [0x0F, 0xE1])
        let video = try #require(read.pes[MPEGTSMuxer.videoPID])
        #expect(video.count == sizes.count)
        for (index, size) in sizes.enumerated() {
            #expect(video[index].payload == (0..<size).map { UInt8(truncatingIfNeeded: $0 * 7 + index) })
            #expect(video[index].pts == UInt64(index) * 3000 + 9000)
            #expect(video[index].dts == UInt64(index) * 3000)
            #expect(video[index].pcr == MPEGTSMuxer.pcr(decodeTime: UInt64(index) * 3000))
        }
        #expect(video[0].randomAccess && !video[1].randomAccess)
        let audio = try #require(read.pes[MPEGTSMuxer.audioPID])
        #expect(audio.count == sizes.count && audio.allSatisfy { $0.streamID == 0xC0 && $0.dts == nil && $0.pcr == nil })
        #expect(audio[5].payload.count == 168 && audio[5].pts == 5 * 1920)
    }

    @Test("ADTS headers from AudioSpecificConfigs: AAC LC 44.1 kHz stereo, 48 kHz mono; HE-AAC's type 5 and explicit rates refused")
    func adts() throws {
        let header = try ADTSHeader(audioSpecificConfig: [0x12, 0x10])
        #expect(header.bytes(payloadCount: 100) == [0xFF, 0xF1, 0x50, 0x80, 0x0D, 0x7F, 0xFC])
        let mono = try ADTSHeader(audioSpecificConfig: [0x11, 0x88])
        #expect(mono.frequencyIndex == 3 && mono.channelConfiguration == 1 && mono.objectType == 2)
        #expect(header.bytes(payloadCount: 8185) == nil && header.bytes(payloadCount: 8184) != nil)
        #expect(throws: ADTSHeader.Error.unsupportedObjectType(5)) { try ADTSHeader(audioSpecificConfig: [0x2B, 0x92]) }
        #expect(throws: ADTSHeader.Error.explicitFrequency) { try ADTSHeader(audioSpecificConfig: [0x17, 0x80, 0, 0, 0]) }
        #expect(throws: ADTSHeader.Error.truncated) { try ADTSHeader(audioSpecificConfig: [0x12]) }
    }

    @Test("keyframes every 0.5 s, target 1 s: 1 s segments, each opening with PAT, PMT and a keyframe with AUD, SPS and PPS")
    func cutsOnKeyframes() throws {
        var segmenter = HLSFixture.segmenter()
        let segments = HLSFixture.feed(&segmenter, seconds: 3.5, gop: 15)
        #expect(segments.map(\.durationMilliseconds) == [1000, 1000, 1000])
        #expect(segments.allSatisfy { !$0.discontinuity })
        var continuity: [UInt16: UInt8] = [:]
        for segment in segments {
            let read = TSReadBack(segment.bytes, continuityFrom: continuity)
            #expect(read.problems.isEmpty, "\(read.problems)")
            #expect(Array(segment.bytes[1...2]) == [0x40, 0x00], "PAT first")
            let video = try #require(read.pes[MPEGTSMuxer.videoPID])
            #expect(video.count == 30)
            let first = try #require(video.first)
            #expect(first.randomAccess)
            #expect(Array(first.payload.prefix(6)) == [0, 0, 0, 1, 0x09, 0xF0])
            #expect(Array(first.payload[6...]) == [0, 0, 0, 1] + HLSFixture.sps + [0, 0, 0, 1] + HLSFixture.pps + [0, 0, 0, 1, 0x65]
                + Array(repeating: 0xAB, count: 40))
            // The keyframe half-way (keyframes every 0.5 s) has its parameter sets too.
            #expect(video.filter(\.randomAccess).count == 2)
            #expect(video.filter { !$0.randomAccess }.allSatisfy { Array($0.payload.prefix(11)) == [0, 0, 0, 1, 0x09, 0xF0, 0, 0, 0, 1, 0x41] })
            let audio = try #require(read.pes[MPEGTSMuxer.audioPID])
            #expect(audio.allSatisfy { Array($0.payload.prefix(2)) == [0xFF, 0xF1] && $0.payload.count == 7 + 30 })
            // The segment's counters continue the previous one's (a player reads them as one stream).
            for start in stride(from: 0, to: segment.bytes.count, by: 188) {
                continuity[UInt16(segment.bytes[start + 1] & 0x1F) << 8 | UInt16(segment.bytes[start + 2])] = segment.bytes[start + 3] & 0x0F
            }
        }
        #expect(TSReadBack(segments[1].bytes).pes[MPEGTSMuxer.videoPID]?.first?.pts == HLSSegmenter.ticks(1000))
    }

    @Test("a GOP longer than the target: segments last one GOP; audio before the first keyframe is not kept")
    func longGOP() throws {
        var segmenter = HLSFixture.segmenter()
        _ = segmenter.add(kind: .audio, timestamp: 0, payload: HLSFixture.audioFrame)
        let segments = HLSFixture.feed(&segmenter, from: 5, seconds: 6.5, gop: 60)
        #expect(segments.map(\.durationMilliseconds) == [2000, 2000, 2000])
        #expect(segmenter.pendingBytes > 0)
    }

    @Test("lost messages drop the segment being cut; the next starts at a keyframe, marked a discontinuity")
    func lostMessages() {
        var segmenter = HLSFixture.segmenter()
        var segments = HLSFixture.feed(&segmenter, seconds: 1.5, gop: 15)
        segmenter.lost()
        #expect(segmenter.pendingBytes == 0)
        segments += HLSFixture.feed(&segmenter, from: 1500, seconds: 3, gop: 15)
        #expect(segments.map(\.discontinuity) == [false, true, false])
    }

    @Test("a repeated sequence header changes nothing; a different one (a new publisher) drops the segment being cut and marks the next a discontinuity")
    func newHeaders() {
        var segmenter = HLSFixture.segmenter()
        var segments = HLSFixture.feed(&segmenter, seconds: 1.5, gop: 15)
        _ = segmenter.add(kind: .videoHeader, timestamp: 1500, payload: HLSFixture.videoHeader)
        _ = segmenter.add(kind: .audioHeader, timestamp: 1500, payload: HLSFixture.audioHeader)
        #expect(segmenter.pendingBytes > 0)
        _ = segmenter.add(kind: .videoHeader, timestamp: 1510, payload: HLSFixture.videoHeader.dropLast() + [0x81])
        #expect(segmenter.pendingBytes == 0)
        segments += HLSFixture.feed(&segmenter, from: 1520, seconds: 2.1, gop: 30)
        #expect(segments.map(\.discontinuity) == [false, true, false])
    }

    @Test("a segment past maxSegmentBytes is dropped, never kept: the stream goes on at the next keyframe")
    func oversizedSegment() {
        var segmenter = HLSFixture.segmenter(maxSegmentBytes: 40_000)
        let small = HLSFixture.feed(&segmenter, seconds: 2.1, gop: 30)
        #expect(small.count == 2)
        let big = HLSFixture.feed(&segmenter, from: 2100, seconds: 3, gop: 30, frameSize: 3000)
        #expect(big.isEmpty)
        #expect(segmenter.pendingBytes <= 40_000)
        let again = HLSFixture.feed(&segmenter, from: 5100, seconds: 2.1, gop: 30)
        #expect(again.first?.discontinuity == true)
    }

    @Test("audio only: segments cut at the first audio frame past the target, PCR on the audio PID")
    func audioOnly() throws {
        var segmenter = HLSSegmenter(limits: .init(targetMilliseconds: 1000, maxSegmentBytes: 1 << 20))
        _ = segmenter.add(kind: .audioHeader, timestamp: 0, payload: HLSFixture.audioHeader)
        var segments: [HLSSegmenter.Segment] = []
        for index in 0..<200 {
            if let segment = segmenter.add(kind: .audio, timestamp: UInt32(index * 23), payload: HLSFixture.audioFrame) {
                segments.append(segment)
            }
        }
        #expect(segments.count == 4)
        #expect(segments.allSatisfy { $0.durationMilliseconds == 1012 }, "44 frames of 23 ms: the first at least the target")
        let read = TSReadBack(segments[0].bytes)
        #expect(read.problems.isEmpty)
        #expect(read.pes[MPEGTSMuxer.videoPID] == nil)
        #expect(read.pes[MPEGTSMuxer.audioPID]?.first?.pcr != nil)
    }

    @Test("hostile input: 20000 messages of mutated and random payloads and timestamps never crash it; segments stay whole packets within the cap")
    func hostileMessages() {
        var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next() -> UInt64 {
            // SplitMix64, so a failure repeats.
            seed &+= 0x9E37_79B9_7F4A_7C15
            var z = seed
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        let kinds: [RelayMessage.Kind] = [.metadata, .videoHeader, .audioHeader, .keyframe, .interframe, .audio]
        // Mostly frames of their own kind; now and then a header, an empty payload, any kind.
        let valid: [(RelayMessage.Kind, [UInt8])] = [
            (.keyframe, HLSFixture.frame(keyframe: true)), (.audio, HLSFixture.audioFrame),
            (.interframe, HLSFixture.frame(keyframe: false)), (.interframe, HLSFixture.frame(keyframe: false)),
            (.audio, HLSFixture.audioFrame), (.interframe, HLSFixture.frame(keyframe: false)),
            (.interframe, [0x17, 2, 0, 0, 0]), (.metadata, []),
        ]
        var segmenter = HLSFixture.segmenter(maxSegmentBytes: 64 << 10)
        var time: UInt32 = 0
        var segments = 0
        for _ in 0..<20_000 {
            var (kind, payload) = valid[Int(next() % UInt64(valid.count))]
            if next() % 100 == 0 { (kind, payload) = next() % 2 == 0 ? (.videoHeader, HLSFixture.videoHeader) : (.audioHeader, HLSFixture.audioHeader) }
            if next() % 20 == 0 { kind = kinds[Int(next() % 6)] }
            switch next() % 8 {
            case 0: payload = (0..<Int(next() % 64)).map { _ in UInt8(truncatingIfNeeded: next()) }
            case 1 where !payload.isEmpty: payload[Int(next() % UInt64(payload.count))] = UInt8(truncatingIfNeeded: next())
            case 2 where !payload.isEmpty: payload = Array(payload.prefix(Int(next() % UInt64(payload.count))))
            default: break
            }
            time = next() % 500 == 0 ? UInt32(truncatingIfNeeded: next()) : time &+ UInt32(next() % 40)
            if let segment = segmenter.add(kind: kind, timestamp: time, payload: payload) {
                segments += 1
                #expect(segment.bytes.count % 188 == 0 && segment.bytes.count <= 64 << 10)
                #expect(stride(from: 0, to: segment.bytes.count, by: 188).allSatisfy { segment.bytes[$0] == 0x47 })
            }
            #expect(segmenter.pendingBytes <= 64 << 10)
        }
        print("\(segments) segments cut from the hostile messages")
        #expect(segments > 10)
    }

    @Test("timestamps that wrap past 2^32 ms keep increasing")
    func timelineWraps() {
        var timeline = HLSSegmenter.Timeline()
        #expect(timeline.extend(UInt32.max - 10) == UInt64(UInt32.max - 10))
        #expect(timeline.extend(5) == UInt64(UInt32.max) + 6)
        #expect(timeline.extend(3) == UInt64(UInt32.max) + 4)
    }

    @Test("the window keeps the newest segments within its count and bytes; the playlist lists them; older ones are gone")
    func window() {
        func segment(_ sequence: UInt64, bytes: Int = 1000, discontinuity: Bool = false) -> HLSSegmenter.Segment {
            HLSSegmenter.Segment(durationMilliseconds: 1001, bytes: Array(repeating: 0, count: bytes), discontinuity: discontinuity)
        }
        var window = HLSWindow(maxSegments: 3, maxBytes: 3500)
        for sequence in 0..<5 { window.append(segment(UInt64(sequence), discontinuity: sequence == 1 || sequence == 4)) }
        #expect(window.segments.map(\.sequence) == [2, 3, 4])
        #expect(window.segment(1) == nil && window.segment(2) != nil && window.segment(5) == nil)
        #expect(window.playlist(targetMilliseconds: 1000, uriPrefix: "cam/", uriQuery: "?token=t") == """
            #EXTM3U
            #EXT-X-VERSION:3
            #EXT-X-TARGETDURATION:1
            #EXT-X-MEDIA-SEQUENCE:2
            #EXT-X-DISCONTINUITY-SEQUENCE:1
            #EXTINF:1.001,
            cam/2.ts?token=t
            #EXTINF:1.001,
            cam/3.ts?token=t
            #EXT-X-DISCONTINUITY
            #EXTINF:1.001,
            cam/4.ts?token=t

            """)
        window.append(segment(5, bytes: 2000))
        #expect(window.segments.map(\.sequence) == [4, 5] && window.byteCount == 3000)
        window.append(segment(6, bytes: 9000))
        #expect(window.segments.map(\.sequence) == [6], "the newest stays even past the bytes")
    }

    @Test("with a shared budget: a window gives up its own oldest segments for a new one, refuses one that never fits (no number taken, the next marked a discontinuity), and release gives everything back")
    func windowBudget() {
        func segment(_ bytes: Int) -> HLSSegmenter.Segment {
            HLSSegmenter.Segment(durationMilliseconds: 1000, bytes: Array(repeating: 0, count: bytes), discontinuity: false)
        }
        let budget = ByteBudget(limit: 5000)
        var other = HLSWindow(maxSegments: 6, maxBytes: 1 << 20, budget: budget)
        let otherKept = other.append(segment(2000))
        var window = HLSWindow(maxSegments: 6, maxBytes: 1 << 20, budget: budget)
        let kept = [window.append(segment(1000)), window.append(segment(1000))]
        #expect(otherKept && kept == [true, true] && budget.usedBytes == 4000)
        let third = window.append(segment(2000))
        #expect(third && window.segments.map(\.sequence) == [1, 2] && budget.usedBytes == 5000)
        let tooBig = window.append(segment(4000))
        #expect(!tooBig, "more than the budget without the other window's share")
        #expect(window.segments.isEmpty && window.refusedCount == 1 && budget.usedBytes == 2000)
        let next = window.append(segment(500))
        #expect(next && window.segments.map(\.sequence) == [3] && window.segments[0].discontinuity)
        window.release()
        other.release()
        #expect(budget.usedBytes == 0)
    }
}
