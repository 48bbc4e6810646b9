/// H.264 byte-stream plumbing (ITU-T H.264 Annex B and ISO/IEC 14496-15 §5.3): NAL unit
/// iteration, emulation prevention, Annex B ↔ AVCC and the AVCDecoderConfigurationRecord
/// that RTMP and MP4 carry as their sequence header.
///
/// Pure: bytes in, values out. Malformed input yields an empty result, nil or a thrown
/// `H264Bitstream.Error`, never a crash.
public enum H264Bitstream {
    /// Why a buffer could not be read as H.264.
    public enum Error: Swift.Error, CustomStringConvertible, Equatable, Sendable {
        /// A length prefix points past the end of the buffer.
        case truncatedLengthPrefixed(offset: Int)
        /// AVCC length fields are 1, 2 or 4 bytes.
        case unsupportedLengthSize(Int)
        /// The Annex B input holds no SPS or no PPS.
        case missingParameterSets
        /// An SPS too short or inconsistent to read its profile fields.
        case malformedSPS
        /// An AVCDecoderConfigurationRecord that is truncated or not version 1.
        case malformedConfigurationRecord(String)
        /// A NAL unit longer than the length field can express.
        case nalUnitTooLong(Int, lengthSize: Int)

        public var description: String {
            switch self {
            case .truncatedLengthPrefixed(let offset): "AVCC NAL unit at byte \(offset) runs past the end of the buffer"
            case .unsupportedLengthSize(let size): "AVCC length size \(size) is not 1, 2 or 4"
            case .missingParameterSets: "no SPS/PPS in the Annex B parameter sets"
            case .malformedSPS: "malformed SPS"
            case .malformedConfigurationRecord(let why): "malformed AVCDecoderConfigurationRecord: \(why)"
            case .nalUnitTooLong(let count, let size): "NAL unit of \(count) bytes does not fit a \(size)-byte length"
            }
        }
    }

    /// NAL unit types LiveLine looks at (H.264 Table 7-1).
    public enum NALType {
        public static let nonIDRSlice: UInt8 = 1
        public static let idrSlice: UInt8 = 5
        public static let sei: UInt8 = 6
        public static let sps: UInt8 = 7
        public static let pps: UInt8 = 8
        public static let accessUnitDelimiter: UInt8 = 9
        public static let filler: UInt8 = 12
    }

    /// The type of a NAL unit from its first (header) byte.
    @inline(__always)
    public static func nalType(_ header: UInt8) -> UInt8 { header & 0x1F }

    /// True for the coded-slice types 1–5 (the picture itself).
    @inline(__always)
    public static func isVCL(_ type: UInt8) -> Bool { type >= 1 && type <= 5 }

    // MARK: - Annex B

    /// Calls `body` with the range of each NAL unit (start codes and trailing zero bytes
    /// excluded) in an Annex B buffer, in order, until `body` returns false.
    /// Bytes before the first start code are ignored; empty units are skipped.
    public static func forEachAnnexBUnit(
        in bytes: UnsafeBufferPointer<UInt8>, _ body: (Range<Int>) -> Bool
    ) {
        let count = bytes.count
        guard count >= 3, let base = bytes.baseAddress else { return }
        var start = -1
        var i = 0
        // Wrapping adds: i + 3 ≤ count inside the loop, so they cannot overflow, and the
        // checked build's scan stays as tight as the unchecked one.
        while i &+ 2 < count {
            // A start code is 00 00 01; skip ahead fast while the byte two ahead can't end one.
            let b2 = base[i &+ 2]
            if b2 > 1 { i &+= 3; continue }
            if b2 == 1 && base[i] == 0 && base[i &+ 1] == 0 {
                if start >= 0 {
                    var end = i
                    while end > start && base[end - 1] == 0 { end -= 1 }
                    if end > start && !body(start..<end) { return }
                }
                start = i &+ 3
                i &+= 3
            } else {
                i &+= 1
            }
        }
        if start >= 0 {
            var end = count
            while end > start && base[end - 1] == 0 { end -= 1 }
            if end > start { _ = body(start..<end) }
        }
    }

    /// The NAL units of an Annex B buffer (slices of `bytes`, indices as in `bytes`).
    public static func annexBUnits(_ bytes: [UInt8]) -> [ArraySlice<UInt8>] {
        var ranges: [Range<Int>] = []
        bytes.withUnsafeBufferPointer { buffer in
            forEachAnnexBUnit(in: buffer) { ranges.append($0); return true }
        }
        return ranges.map { bytes[$0] }
    }

    /// The offset of the start code (including a 4-byte start code's leading zero) of the
    /// first NAL unit matching `predicate` (given its type), or nil when none does.
    static func startCodeOffset(
        in bytes: UnsafeBufferPointer<UInt8>, ofFirst predicate: (UInt8) -> Bool
    ) -> Int? {
        var found: Int?
        forEachAnnexBUnit(in: bytes) { range in
            if predicate(nalType(bytes[range.lowerBound])) {
                var offset = range.lowerBound - 3
                if offset > 0 && bytes[offset - 1] == 0 { offset -= 1 }
                found = offset
                return false
            }
            return true
        }
        return found
    }

    // MARK: - AVCC (length-prefixed)

    /// Calls `body` with the range of each NAL unit of a length-prefixed buffer until it
    /// returns false. Throws when a length runs past the end (after the units before it).
    public static func forEachAVCCUnit(
        in bytes: UnsafeBufferPointer<UInt8>, lengthSize: Int, _ body: (Range<Int>) -> Bool
    ) throws {
        guard lengthSize == 1 || lengthSize == 2 || lengthSize == 4 else {
            throw Error.unsupportedLengthSize(lengthSize)
        }
        var offset = 0
        let count = bytes.count
        while offset < count {
            guard count - offset >= lengthSize else { throw Error.truncatedLengthPrefixed(offset: offset) }
            var length = 0
            for k in 0..<lengthSize { length = length << 8 | Int(bytes[offset + k]) }
            let start = offset + lengthSize
            guard length <= count - start else { throw Error.truncatedLengthPrefixed(offset: offset) }
            offset = start + length
            if length > 0 && !body(start..<offset) { return }
        }
    }

    /// The NAL units of a length-prefixed (AVCC) buffer.
    public static func avccUnits(_ bytes: [UInt8], lengthSize: Int = 4) throws -> [ArraySlice<UInt8>] {
        var ranges: [Range<Int>] = []
        try bytes.withUnsafeBufferPointer { buffer in
            try forEachAVCCUnit(in: buffer, lengthSize: lengthSize) { ranges.append($0); return true }
        }
        return ranges.map { bytes[$0] }
    }

    /// Converts Annex B to length-prefixed NAL units (what FLV/RTMP and MP4 carry).
    public static func avcc(fromAnnexB bytes: [UInt8], lengthSize: Int = 4) throws -> [UInt8] {
        guard lengthSize == 1 || lengthSize == 2 || lengthSize == 4 else {
            throw Error.unsupportedLengthSize(lengthSize)
        }
        let maxLength = lengthSize == 4 ? Int(UInt32.max) : (1 << (8 * lengthSize)) - 1
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + 16)
        var tooLong: Int?
        bytes.withUnsafeBufferPointer { buffer in
            forEachAnnexBUnit(in: buffer) { range in
                guard range.count <= maxLength else { tooLong = range.count; return false }
                for k in stride(from: lengthSize - 1, through: 0, by: -1) {
                    out.append(UInt8(truncatingIfNeeded: range.count >> (8 * k)))
                }
                out.append(contentsOf: buffer[range])
                return true
            }
        }
        if let tooLong { throw Error.nalUnitTooLong(tooLong, lengthSize: lengthSize) }
        return out
    }

    /// The Annex B size of a length-prefixed buffer (each unit gets a 4-byte start code).
    static func annexBSize(ofAVCC bytes: UnsafeBufferPointer<UInt8>, lengthSize: Int) throws -> Int {
        var total = 0
        try forEachAVCCUnit(in: bytes, lengthSize: lengthSize) { total += 4 + $0.count; return true }
        return total
    }

    /// Writes the Annex B form of a length-prefixed buffer to `destination`, which must hold
    /// `annexBSize(ofAVCC:lengthSize:)` bytes; returns the bytes written.
    static func writeAnnexB(
        fromAVCC bytes: UnsafeBufferPointer<UInt8>, lengthSize: Int, to destination: UnsafeMutablePointer<UInt8>
    ) throws -> Int {
        var written = 0
        try forEachAVCCUnit(in: bytes, lengthSize: lengthSize) { range in
            let out = destination + written
            out[0] = 0; out[1] = 0; out[2] = 0; out[3] = 1
            (out + 4).update(from: bytes.baseAddress! + range.lowerBound, count: range.count)
            written += 4 + range.count
            return true
        }
        return written
    }

    /// Converts length-prefixed NAL units to Annex B with 4-byte start codes.
    public static func annexB(fromAVCC bytes: [UInt8], lengthSize: Int = 4) throws -> [UInt8] {
        try bytes.withUnsafeBufferPointer { buffer in
            let size = try annexBSize(ofAVCC: buffer, lengthSize: lengthSize)
            return try [UInt8](unsafeUninitializedCapacity: size) { out, initialized in
                initialized = size == 0 ? 0 : try writeAnnexB(fromAVCC: buffer, lengthSize: lengthSize, to: out.baseAddress!)
            }
        }
    }

    // MARK: - Emulation prevention (H.264 §7.4.1)

    /// Inserts emulation-prevention bytes (00 00 0x → 00 00 03 0x for x ≤ 3) so that a
    /// raw byte sequence payload can sit inside a NAL unit.
    public static func addingEmulationPrevention(_ rbsp: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(rbsp.count + rbsp.count / 64 + 2)
        var zeros = 0
        for byte in rbsp {
            if zeros >= 2 && byte <= 3 {
                out.append(3)
                zeros = 0
            }
            out.append(byte)
            zeros = byte == 0 ? zeros &+ 1 : 0  // at most the byte count: no overflow
        }
        // A NAL unit may not end in 00 (it would read as part of the next start code).
        if zeros > 0 { out.append(3) }
        return out
    }

    /// Removes emulation-prevention bytes: every 03 that follows 00 00.
    public static func removingEmulationPrevention(_ bytes: some Collection<UInt8>) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var zeros = 0
        for byte in bytes {
            if zeros >= 2 && byte == 3 {
                zeros = 0
                continue
            }
            out.append(byte)
            zeros = byte == 0 ? zeros &+ 1 : 0  // at most the byte count: no overflow
        }
        return out
    }

    // MARK: - AVCDecoderConfigurationRecord (ISO/IEC 14496-15 §5.3.3.1)

    /// The parameter sets and NAL length size an AVCDecoderConfigurationRecord holds.
    public struct AVCDecoderConfiguration: Equatable, Sendable {
        public var profile: UInt8
        public var profileCompatibility: UInt8
        public var level: UInt8
        /// Bytes in each NAL unit's length prefix (1, 2 or 4).
        public var lengthSize: Int
        /// SPS NAL units, without start codes.
        public var sps: [[UInt8]]
        /// PPS NAL units, without start codes.
        public var pps: [[UInt8]]

        public init(profile: UInt8, profileCompatibility: UInt8, level: UInt8, lengthSize: Int,
                    sps: [[UInt8]], pps: [[UInt8]]) {
            self.profile = profile
            self.profileCompatibility = profileCompatibility
            self.level = level
            self.lengthSize = lengthSize
            self.sps = sps
            self.pps = pps
        }

        /// SPS then PPS as Annex B (4-byte start codes): decoder extradata.
        public var annexB: [UInt8] {
            var out: [UInt8] = []
            for unit in sps + pps { out += [0, 0, 0, 1] + unit }
            return out
        }
    }

    /// Builds an AVCDecoderConfigurationRecord ("avcC", the FLV/RTMP AVC sequence header
    /// body) from Annex B bytes holding at least one SPS and one PPS (an encoder's global
    /// header). Other NAL units are ignored.
    public static func avcDecoderConfigurationRecord(fromAnnexB bytes: [UInt8], lengthSize: Int = 4) throws -> [UInt8] {
        guard lengthSize == 1 || lengthSize == 2 || lengthSize == 4 else {
            throw Error.unsupportedLengthSize(lengthSize)
        }
        var sps: [ArraySlice<UInt8>] = []
        var pps: [ArraySlice<UInt8>] = []
        for unit in annexBUnits(bytes) {
            switch nalType(unit.first!) {
            case NALType.sps: sps.append(unit)
            case NALType.pps: pps.append(unit)
            default: break
            }
        }
        guard let first = sps.first, !pps.isEmpty, sps.count <= 31, pps.count <= 255 else {
            throw Error.missingParameterSets
        }
        guard first.count >= 4 else { throw Error.malformedSPS }
        let profile = first[first.startIndex + 1]
        var out: [UInt8] = [1, profile, first[first.startIndex + 2], first[first.startIndex + 3],
                            0xFC | UInt8(lengthSize - 1), 0xE0 | UInt8(sps.count)]
        for unit in sps {
            guard unit.count <= 0xFFFF else { throw Error.nalUnitTooLong(unit.count, lengthSize: 2) }
            out += [UInt8(unit.count >> 8), UInt8(unit.count & 0xFF)]
            out += unit
        }
        out.append(UInt8(pps.count))
        for unit in pps {
            guard unit.count <= 0xFFFF else { throw Error.nalUnitTooLong(unit.count, lengthSize: 2) }
            out += [UInt8(unit.count >> 8), UInt8(unit.count & 0xFF)]
            out += unit
        }
        // High profiles carry chroma format and bit depths (14496-15 §5.3.3.1.2).
        if [100, 110, 122, 144].contains(profile) {
            let format = try spsFormat(Array(first))
            out += [0xFC | format.chromaFormat, 0xF8 | format.bitDepthLumaMinus8,
                    0xF8 | format.bitDepthChromaMinus8, 0]
        }
        return out
    }

    /// Reads an AVCDecoderConfigurationRecord (the optional high-profile extension is skipped).
    public static func parseAVCDecoderConfigurationRecord(_ bytes: [UInt8]) throws -> AVCDecoderConfiguration {
        guard bytes.count >= 7 else { throw Error.malformedConfigurationRecord("\(bytes.count) bytes is too short") }
        guard bytes[0] == 1 else { throw Error.malformedConfigurationRecord("version \(bytes[0]), expected 1") }
        let lengthSize = Int(bytes[4] & 0x03) + 1
        guard lengthSize != 3 else { throw Error.unsupportedLengthSize(3) }
        var offset = 6
        func sets(count: Int) throws -> [[UInt8]] {
            var result: [[UInt8]] = []
            for _ in 0..<count {
                guard bytes.count - offset >= 2 else { throw Error.malformedConfigurationRecord("truncated length") }
                let length = Int(bytes[offset]) << 8 | Int(bytes[offset + 1])
                offset += 2
                guard length > 0, bytes.count - offset >= length else {
                    throw Error.malformedConfigurationRecord("truncated parameter set")
                }
                result.append(Array(bytes[offset..<offset + length]))
                offset += length
            }
            return result
        }
        let sps = try sets(count: Int(bytes[5] & 0x1F))
        guard bytes.count > offset else { throw Error.malformedConfigurationRecord("no PPS count") }
        let ppsCount = Int(bytes[offset])
        offset += 1
        let pps = try sets(count: ppsCount)
        return AVCDecoderConfiguration(profile: bytes[1], profileCompatibility: bytes[2], level: bytes[3],
                                       lengthSize: lengthSize, sps: sps, pps: pps)
    }

    struct SPSFormat {
        var chromaFormat: UInt8 = 1
        var bitDepthLumaMinus8: UInt8 = 0
        var bitDepthChromaMinus8: UInt8 = 0
    }

    /// Chroma format and bit depths from an SPS NAL unit (H.264 §7.3.2.1.1).
    static func spsFormat(_ nal: [UInt8]) throws -> SPSFormat {
        let rbsp = removingEmulationPrevention(nal.dropFirst())
        guard rbsp.count >= 4 else { throw Error.malformedSPS }
        var reader = ExpGolombReader(rbsp, byteOffset: 3)
        var format = SPSFormat()
        _ = try reader.unsigned()  // seq_parameter_set_id
        if [100, 110, 122, 244, 44, 83, 86, 118, 128, 138, 139, 134, 135].contains(rbsp[0]) {
            let chroma = try reader.unsigned()
            guard chroma <= 3 else { throw Error.malformedSPS }
            if chroma == 3 { _ = try reader.bit() }
            let luma = try reader.unsigned(), chromaDepth = try reader.unsigned()
            guard luma <= 6, chromaDepth <= 6 else { throw Error.malformedSPS }
            format = SPSFormat(chromaFormat: UInt8(chroma), bitDepthLumaMinus8: UInt8(luma),
                               bitDepthChromaMinus8: UInt8(chromaDepth))
        }
        return format
    }

    /// Reads bits and Exp-Golomb codes (H.264 §9.1) from an RBSP.
    struct ExpGolombReader {
        let bytes: [UInt8]
        var bitOffset: Int

        init(_ bytes: [UInt8], byteOffset: Int) {
            self.bytes = bytes
            bitOffset = byteOffset * 8
        }

        mutating func bit() throws -> UInt32 {
            guard bitOffset < bytes.count * 8 else { throw Error.malformedSPS }
            let value = UInt32(bytes[bitOffset >> 3] >> (7 - UInt8(bitOffset & 7))) & 1
            bitOffset += 1
            return value
        }

        mutating func unsigned() throws -> UInt32 {
            var zeros = 0
            while try bit() == 0 {
                zeros += 1
                guard zeros < 32 else { throw Error.malformedSPS }
            }
            var value: UInt32 = 0
            for _ in 0..<zeros { value = value << 1 | (try bit()) }
            return (UInt32(1) << zeros) - 1 + value
        }
    }
}
