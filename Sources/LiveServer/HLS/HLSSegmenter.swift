import LiveRTMP

/// Cuts a relayed stream into MPEG-TS segments for HLS: each segment starts at an H.264
/// keyframe (with SPS and PPS before it, so it decodes alone) and is closed by the first
/// keyframe at least (nearly) the target duration after its start, so its length is the
/// target rounded up to the publisher's keyframe interval. A stream without video is cut
/// at the first audio frame past the target.
///
/// Input is the relay's messages as they are (FLV VIDEODATA / AUDIODATA bodies with the
/// stream's millisecond timestamps): AVCC is rewritten to Annex B with an access unit
/// delimiter, AAC gets ADTS headers from the AudioSpecificConfig. Anything unreadable is
/// skipped (a broken video frame makes the segmenter wait for the next keyframe); a
/// segment growing past `maxSegmentBytes` is dropped, never kept.
///
/// Pure value: no clock, no thread; the relay's `HLSStreamPlayer` owns one.
struct HLSSegmenter {
    struct Limits: Sendable {
        /// The shortest segment: the segment is closed by the first keyframe this far after its start.
        var targetMilliseconds: UInt32
        /// A segment that grows past this (a very long GOP at a high bitrate) is dropped
        /// and the next starts at the next keyframe.
        var maxSegmentBytes: Int
    }

    /// One finished segment.
    struct Segment: Sendable {
        /// Its number in the stream (`#EXT-X-MEDIA-SEQUENCE` counts these), given by the
        /// window that keeps it (a segment it refuses takes no number).
        var sequence: UInt64 = 0
        let durationMilliseconds: UInt32
        /// The MPEG-TS bytes.
        let bytes: [UInt8]
        /// Something was lost or reset before it: players must not expect continuity.
        let discontinuity: Bool

        /// The same segment, marked a discontinuity.
        var markedDiscontinuous: Segment {
            Segment(sequence: sequence, durationMilliseconds: durationMilliseconds, bytes: bytes, discontinuity: true)
        }
    }

    /// Keyframes a little early still close a segment (a GOP of exactly the target
    /// arrives a frame's jitter short of it).
    static let earlyCutPercent: UInt32 = 10
    /// Added to every timestamp so the PCR, which leads the decode time, stays positive.
    static let timelineOffsetMilliseconds: UInt64 = 1000

    let limits: Limits
    private var lengthSize = 4
    /// SPS and PPS in Annex B, put before every keyframe; nil before a usable AVC sequence header.
    private var parameterSets: [UInt8]?
    private var adts: ADTSHeader?
    /// The sequence headers as they came, to tell a new publisher's (a restart) from a repeat.
    private var videoHeader: [UInt8]?
    private var audioHeader: [UInt8]?
    private var muxer: MPEGTSMuxer?
    private var current: [UInt8] = []
    /// The start of the segment being built (ms on `timeline`), nil while waiting for a start point.
    private var currentStart: UInt64?
    private var discontinuityPending = false
    private var timeline = Timeline()

    init(limits: Limits) {
        self.limits = limits
    }

    /// The bytes of the segment being built (they count against the stream's memory too).
    var pendingBytes: Int { current.count }

    /// Takes one relayed message; returns the segment it closed, if any.
    mutating func add(kind: RelayMessage.Kind, timestamp: UInt32, payload: [UInt8]) -> Segment? {
        let time = timeline.extend(timestamp)
        switch kind {
        case .metadata:
            return nil
        case .videoHeader:
            if Self.replaces(videoHeader, payload) { lost() }
            videoHeader = payload
            guard let configuration = try? FLVVideoTag(parsing: payload).decoderConfiguration(),
                  !configuration.sps.isEmpty, !configuration.pps.isEmpty else { return nil }
            lengthSize = configuration.lengthSize
            parameterSets = configuration.annexB
            return nil
        case .audioHeader:
            if Self.replaces(audioHeader, payload) { lost() }
            audioHeader = payload
            adts = payload.count >= 2 ? try? ADTSHeader(audioSpecificConfig: payload.dropFirst(2)) : nil
            return nil
        case .keyframe, .interframe:
            return addVideo(payload, time: time, keyframe: kind == .keyframe)
        case .audio:
            return addAudio(payload, time: time)
        }
    }

    /// A sequence header that differs from the one before (a new publisher, an encoder
    /// restart): what was cut with the old one is dropped (`lost()`) and the next segment,
    /// starting at a keyframe with the new one, is a discontinuity.
    private static func replaces(_ stored: [UInt8]?, _ payload: [UInt8]) -> Bool {
        stored.map { $0 != payload } ?? false
    }

    /// Messages never reached the segmenter: what it was building is dropped and the next
    /// segment starts at a keyframe, marked as a discontinuity.
    mutating func lost() {
        current.removeAll()
        currentStart = nil
        discontinuityPending = true
    }

    private mutating func addVideo(_ payload: [UInt8], time: UInt64, keyframe: Bool) -> Segment? {
        guard let parameterSets, let tag = try? FLVVideoTag(parsing: payload), tag.avcPacketType == .nalUnits else { return nil }
        guard let units = try? tag.annexB(lengthSize: lengthSize) else {
            // A frame the decoder never gets breaks every frame after it until a keyframe.
            if currentStart != nil { lost() }
            return nil
        }
        var finished: Segment?
        if keyframe { finished = startSegmentIfDue(at: time) }
        guard currentStart != nil else { return finished }
        var accessUnit: [UInt8] = [0, 0, 0, 1, 0x09, 0xF0]  // access unit delimiter: any slice type
        accessUnit.reserveCapacity(accessUnit.count + (keyframe ? parameterSets.count : 0) + units.count)
        if keyframe { accessUnit += parameterSets }
        accessUnit += units
        let dts = Self.ticks(time)
        let pts = Self.ticks(UInt64(max(0, Int64(time) + Int64(tag.compositionTime))))
        muxer?.appendVideo(accessUnit, pts: pts, dts: dts, keyframe: keyframe, to: &current)
        checkSize()
        return finished
    }

    private mutating func addAudio(_ payload: [UInt8], time: UInt64) -> Segment? {
        guard let adts, payload.count > 2, payload[0] >> 4 == FLVAudioTag.SoundFormat.aac,
              let header = adts.bytes(payloadCount: payload.count - 2) else { return nil }
        var finished: Segment?
        if parameterSets == nil { finished = startSegmentIfDue(at: time) }
        guard currentStart != nil else { return finished }
        muxer?.appendAudio(header + payload[2...], pts: Self.ticks(time), to: &current)
        checkSize()
        return finished
    }

    /// At a point a segment may start: closes the current one when it is long enough and
    /// starts the next (or the first); returns the closed one.
    private mutating func startSegmentIfDue(at time: UInt64) -> Segment? {
        // Without video every audio frame may start a segment: no need to cut early.
        let early = parameterSets == nil ? 0 : limits.targetMilliseconds * Self.earlyCutPercent / 100
        let minimum = UInt64(limits.targetMilliseconds - early)
        var finished: Segment?
        if let start = currentStart {
            guard time >= start, time - start >= minimum else { return nil }
            finished = Segment(durationMilliseconds: UInt32(clamping: time - start), bytes: current,
                               discontinuity: discontinuityPending)
            discontinuityPending = false
        }
        let hasVideo = parameterSets != nil, hasAudio = adts != nil
        if muxer?.hasVideo != hasVideo || muxer?.hasAudio != hasAudio {
            // Other tracks: the next segment's PMT differs from the last one's.
            if muxer != nil { discontinuityPending = true }
            muxer = MPEGTSMuxer(hasVideo: hasVideo, hasAudio: hasAudio)
        }
        current = []
        current.reserveCapacity(finished.map { $0.bytes.count + $0.bytes.count / 4 } ?? 0)
        muxer?.appendTables(to: &current)
        currentStart = time
        return finished
    }

    private mutating func checkSize() {
        if current.count > limits.maxSegmentBytes { lost() }
    }

    /// Milliseconds on the timeline as 90 kHz ticks, offset (see `timelineOffsetMilliseconds`).
    static func ticks(_ milliseconds: UInt64) -> UInt64 {
        (milliseconds + timelineOffsetMilliseconds) * 90
    }

    /// The relay's 32-bit millisecond timestamps on a 64-bit line that does not wrap:
    /// each is placed at the signed distance from the previous one (audio and video may
    /// interleave a little out of order).
    struct Timeline {
        private var last: UInt32?
        private var extended: Int64 = 0

        mutating func extend(_ timestamp: UInt32) -> UInt64 {
            if let last {
                extended += Int64(Int32(bitPattern: timestamp &- last))
            } else {
                extended = Int64(timestamp)
            }
            last = timestamp
            return UInt64(max(0, extended))
        }
    }
}
