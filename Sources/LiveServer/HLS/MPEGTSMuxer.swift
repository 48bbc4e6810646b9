/// An MPEG transport stream writer (ISO/IEC 13818-1) for one program with an H.264 and an
/// AAC (ADTS) elementary stream, as HLS segments carry them: PAT and PMT, PES packets with
/// PTS/DTS, the PCR on the first packet of each video PES (of each audio PES without
/// video), the random access indicator on keyframes, continuity counters per PID.
///
/// Output only and pure: bytes in, 188-byte packets appended to a buffer.
struct MPEGTSMuxer {
    static let packetSize = 188
    static let patPID: UInt16 = 0x0000
    static let pmtPID: UInt16 = 0x1000
    static let videoPID: UInt16 = 0x0100
    static let audioPID: UInt16 = 0x0101
    /// ISO/IEC 13818-1 Table 2-34 stream_type values.
    static let h264StreamType: UInt8 = 0x1B
    static let adtsAACStreamType: UInt8 = 0x0F
    /// 33-bit PTS/DTS/PCR base.
    static let timestampMask: UInt64 = (1 << 33) - 1

    let hasVideo: Bool
    let hasAudio: Bool
    private var continuity: [UInt16: UInt8] = [:]

    init(hasVideo: Bool, hasAudio: Bool) {
        self.hasVideo = hasVideo
        self.hasAudio = hasAudio
    }

    /// The PID whose packets carry the PCR.
    var pcrPID: UInt16 { hasVideo ? Self.videoPID : Self.audioPID }

    /// PAT then PMT: every segment starts with them so it can be decoded alone.
    mutating func appendTables(to out: inout [UInt8]) {
        // PAT (§2.4.4.3): program 1 → the PMT's PID.
        var pat: [UInt8] = [0x00, 0x01, 0xC1, 0x00, 0x00]  // transport_stream_id 1, version 0, current; section 0 of 0
        pat += [0x00, 0x01, UInt8(0xE0 | Self.pmtPID >> 8), UInt8(Self.pmtPID & 0xFF)]
        appendSection(tableID: 0x00, body: pat, pid: Self.patPID, to: &out)
        // PMT (§2.4.4.8).
        var pmt: [UInt8] = [0x00, 0x01, 0xC1, 0x00, 0x00]  // program_number 1, version 0, current; section 0 of 0
        pmt += [UInt8(0xE0 | pcrPID >> 8), UInt8(pcrPID & 0xFF), 0xF0, 0x00]  // PCR_PID, no program descriptors
        if hasVideo { pmt += [Self.h264StreamType, UInt8(0xE0 | Self.videoPID >> 8), UInt8(Self.videoPID & 0xFF), 0xF0, 0x00] }
        if hasAudio { pmt += [Self.adtsAACStreamType, UInt8(0xE0 | Self.audioPID >> 8), UInt8(Self.audioPID & 0xFF), 0xF0, 0x00] }
        appendSection(tableID: 0x02, body: pmt, pid: Self.pmtPID, to: &out)
    }

    /// One H.264 access unit (Annex B) as a PES on the video PID; times in 90 kHz units.
    mutating func appendVideo(_ annexB: [UInt8], pts: UInt64, dts: UInt64, keyframe: Bool, to out: inout [UInt8]) {
        var pes = Self.pesHeader(streamID: 0xE0, payloadCount: annexB.count, pts: pts, dts: dts == pts ? nil : dts)
        pes += annexB
        appendPES(pes, pid: Self.videoPID, pcr: Self.pcr(decodeTime: dts), randomAccess: keyframe, to: &out)
    }

    /// One ADTS frame as a PES on the audio PID; time in 90 kHz units.
    mutating func appendAudio(_ adts: [UInt8], pts: UInt64, to out: inout [UInt8]) {
        var pes = Self.pesHeader(streamID: 0xC0, payloadCount: adts.count, pts: pts, dts: nil)
        pes += adts
        appendPES(pes, pid: Self.audioPID, pcr: hasVideo ? nil : Self.pcr(decodeTime: pts), randomAccess: !hasVideo, to: &out)
    }

    /// The PCR sent with a PES decoded at `decodeTime`: that far ahead of the decode time
    /// (ffmpeg's muxer's default 0.7 s), so a decoder following the PCR buffers the frame
    /// before it is due.
    static let pcrLead: UInt64 = 63_000

    static func pcr(decodeTime: UInt64) -> UInt64 { decodeTime >= pcrLead ? decodeTime - pcrLead : 0 }

    /// A PES header (§2.4.3.7) with PTS (and DTS when it differs). Video PES longer than
    /// 65535 bytes say length 0 (unbounded), which §2.4.3.7 allows for video only.
    static func pesHeader(streamID: UInt8, payloadCount: Int, pts: UInt64, dts: UInt64?) -> [UInt8] {
        let headerDataLength = dts == nil ? 5 : 10
        let length = 3 + headerDataLength + payloadCount
        let field = length > 0xFFFF ? 0 : length
        var out: [UInt8] = [0x00, 0x00, 0x01, streamID, UInt8(field >> 8), UInt8(field & 0xFF)]
        out += [0x80, dts == nil ? 0x80 : 0xC0, UInt8(headerDataLength)]
        appendTimestamp(pts, prefix: dts == nil ? 0x2 : 0x3, to: &out)
        if let dts { appendTimestamp(dts, prefix: 0x1, to: &out) }
        return out
    }

    /// A 33-bit time in the PES header's 5-byte layout with its marker bits.
    static func appendTimestamp(_ value: UInt64, prefix: UInt8, to out: inout [UInt8]) {
        let t = value & timestampMask
        out.append(prefix << 4 | UInt8((t >> 29) & 0x0E) | 1)
        out.append(UInt8((t >> 22) & 0xFF))
        out.append(UInt8((t >> 14) & 0xFE) | 1)
        out.append(UInt8((t >> 7) & 0xFF))
        out.append(UInt8((t << 1) & 0xFE) | 1)
    }

    /// A PSI section with its CRC, alone in one packet (both tables are far under 184 bytes).
    private mutating func appendSection(tableID: UInt8, body: [UInt8], pid: UInt16, to out: inout [UInt8]) {
        let sectionLength = body.count + 4  // + CRC
        var section: [UInt8] = [tableID, UInt8(0xB0 | (sectionLength >> 8) & 0x0F), UInt8(sectionLength & 0xFF)] + body
        let crc = Self.crc32(section)
        section += [UInt8(crc >> 24), UInt8((crc >> 16) & 0xFF), UInt8((crc >> 8) & 0xFF), UInt8(crc & 0xFF)]
        let start = out.count
        out += [0x47, UInt8(0x40 | pid >> 8), UInt8(pid & 0xFF), 0x10 | nextContinuity(pid), 0x00]  // pointer_field 0
        out += section
        out += repeatElement(0xFF, count: start + Self.packetSize - out.count)
    }

    /// Splits a PES into packets: the first with the start indicator (and the PCR and
    /// random access indicator when asked), the last padded by an adaptation field.
    private mutating func appendPES(_ pes: [UInt8], pid: UInt16, pcr: UInt64?, randomAccess: Bool, to out: inout [UInt8]) {
        var offset = 0
        var first = true
        while offset < pes.count {
            // The adaptation field's bytes after its length byte; nil: no adaptation field.
            var field: [UInt8]?
            if first, pcr != nil || randomAccess {
                var flags: UInt8 = randomAccess ? 0x40 : 0
                var bytes: [UInt8] = []
                if let pcr {
                    flags |= 0x10
                    let base = pcr & Self.timestampMask
                    bytes = [UInt8((base >> 25) & 0xFF), UInt8((base >> 17) & 0xFF), UInt8((base >> 9) & 0xFF),
                             UInt8((base >> 1) & 0xFF), UInt8((base & 1) << 7) | 0x7E, 0x00]
                }
                field = [flags] + bytes
            }
            let remaining = pes.count - offset
            var space = 184 - (field.map { 1 + $0.count } ?? 0)
            if remaining < space {
                let stuffing = space - remaining
                if var existing = field {
                    existing += repeatElement(0xFF, count: stuffing)
                    field = existing
                } else {
                    // One byte of stuffing is an adaptation field of length 0.
                    field = stuffing == 1 ? [] : [0x00] + repeatElement(0xFF, count: stuffing - 2)
                }
                space = remaining
            }
            let control: UInt8 = field == nil ? 0x10 : 0x30
            out += [0x47, UInt8((first ? 0x40 : 0) | pid >> 8), UInt8(pid & 0xFF), control | nextContinuity(pid)]
            if let field {
                out.append(UInt8(field.count))
                out += field
            }
            out += pes[offset..<(offset + space)]
            offset += space
            first = false
        }
    }

    private mutating func nextContinuity(_ pid: UInt16) -> UInt8 {
        let value = continuity[pid, default: 0]
        continuity[pid] = (value + 1) & 0x0F
        return value
    }

    /// CRC-32/MPEG-2 (polynomial 0x04C11DB7, initial all ones, no reflection, no final xor).
    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte) << 24
            for _ in 0..<8 { crc = crc & 0x8000_0000 != 0 ? crc << 1 ^ 0x04C1_1DB7 : crc << 1 }
        }
        return crc
    }
}
