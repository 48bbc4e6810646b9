/// The capture-time SEI every LiveLine frame carries (DESIGN.md §2): an H.264 SEI NAL unit
/// (type 6) holding one "user data unregistered" message (payloadType 5, H.264 §D.1.6)
/// whose 16-byte UUID is LiveLine's and whose payload is the frame's wall-clock capture
/// time as 8 bytes big-endian microseconds since the Unix epoch.
///
/// A guest on the same clock subtracts it from "now" to get glass-to-glass latency.
/// Pure: no clock is read here.
public enum CaptureTimeSEI {
    /// LiveLine's user-data UUID (a random constant; decoders skip messages they don't know).
    public static let uuid: [UInt8] = [
        0xF1, 0x73, 0xCD, 0x41, 0x1E, 0x02, 0x42, 0xEF, 0xBC, 0x30, 0x4F, 0x52, 0x6D, 0xE4, 0x12, 0xAF,
    ]

    static let userDataUnregistered = 5
    /// UUID + 8-byte time.
    static let payloadSize = 24

    /// The SEI NAL unit (header byte included, no start code) for a capture time.
    public static func nalUnit(captureTimeMicros: UInt64) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(36)
        append(captureTimeMicros: captureTimeMicros, to: &out)
        return out
    }

    /// Appends the NAL unit to `out`, applying emulation prevention as it goes.
    static func append(captureTimeMicros: UInt64, to out: inout [UInt8]) {
        out.append(0x06)  // forbidden_zero_bit 0, nal_ref_idc 0, type 6
        var zeros = 0
        func put(_ byte: UInt8) {
            if zeros >= 2 && byte <= 3 {
                out.append(3)
                zeros = 0
            }
            out.append(byte)
            zeros = byte == 0 ? zeros + 1 : 0
        }
        put(UInt8(userDataUnregistered))
        put(UInt8(payloadSize))
        for byte in uuid { put(byte) }
        for shift in stride(from: 56, through: 0, by: -8) { put(UInt8(truncatingIfNeeded: captureTimeMicros >> UInt64(shift))) }
        put(0x80)  // rbsp_trailing_bits: stop bit, then byte alignment
    }

    /// The capture time in an SEI NAL unit (header byte included), or nil when it is not
    /// an SEI or holds no LiveLine message. Walks every SEI message in the unit; payload
    /// types and sizes of 255 and more (0xFF continuation bytes) are read correctly.
    public static func parse(nalUnit: [UInt8]) -> UInt64? {
        nalUnit.withUnsafeBufferPointer { parse(nalUnit: $0) }
    }

    static func parse(nalUnit: UnsafeBufferPointer<UInt8>) -> UInt64? {
        guard nalUnit.count > 1, H264Bitstream.nalType(nalUnit[0]) == H264Bitstream.NALType.sei else { return nil }
        var reader = RBSPReader(bytes: nalUnit, index: 1)
        while reader.hasMoreData {
            guard let type = reader.sizeOrType(), let size = reader.sizeOrType() else { return nil }
            if type == userDataUnregistered && size >= payloadSize {
                var matches = true
                for expected in uuid {
                    guard let byte = reader.next() else { return nil }
                    if byte != expected { matches = false }
                }
                if matches {
                    var time: UInt64 = 0
                    for _ in 0..<8 {
                        guard let byte = reader.next() else { return nil }
                        time = time << 8 | UInt64(byte)
                    }
                    return time
                }
                guard reader.skip(size - uuid.count) else { return nil }
            } else {
                guard reader.skip(size) else { return nil }
            }
        }
        return nil
    }

    /// The capture time of an Annex B access unit: the first LiveLine SEI before its first slice.
    public static func find(annexB accessUnit: [UInt8]) -> UInt64? {
        accessUnit.withUnsafeBufferPointer { find(annexB: $0) }
    }

    static func find(annexB buffer: UnsafeBufferPointer<UInt8>) -> UInt64? {
        var found: UInt64?
        H264Bitstream.forEachAnnexBUnit(in: buffer) { range in
            let type = H264Bitstream.nalType(buffer[range.lowerBound])
            if type == H264Bitstream.NALType.sei {
                found = parse(nalUnit: UnsafeBufferPointer(rebasing: buffer[range]))
            }
            // SEI precedes the first slice of an access unit (H.264 §7.4.1.2.3).
            return found == nil && !H264Bitstream.isVCL(type)
        }
        return found
    }

    /// The capture time of a length-prefixed (AVCC) access unit, nil when absent or malformed.
    public static func find(avcc accessUnit: [UInt8], lengthSize: Int = 4) -> UInt64? {
        accessUnit.withUnsafeBufferPointer { find(avcc: $0, lengthSize: lengthSize) }
    }

    static func find(avcc buffer: UnsafeBufferPointer<UInt8>, lengthSize: Int) -> UInt64? {
        var found: UInt64?
        try? H264Bitstream.forEachAVCCUnit(in: buffer, lengthSize: lengthSize) { range in
            let type = H264Bitstream.nalType(buffer[range.lowerBound])
            if type == H264Bitstream.NALType.sei {
                found = parse(nalUnit: UnsafeBufferPointer(rebasing: buffer[range]))
            }
            return found == nil && !H264Bitstream.isVCL(type)
        }
        return found
    }

    /// The access unit with a capture-time SEI (4-byte start code) inserted just before
    /// its first slice NAL unit (types 1–5), where H.264 wants SEI. An access unit with no
    /// slice is returned unchanged.
    public static func inserting(captureTimeMicros: UInt64, intoAnnexB accessUnit: [UInt8]) -> [UInt8] {
        accessUnit.withUnsafeBufferPointer { annexB($0, inserting: captureTimeMicros) }
    }

    /// Copies `accessUnit` into a new array with the SEI inserted (one allocation).
    static func annexB(_ accessUnit: UnsafeBufferPointer<UInt8>, inserting captureTimeMicros: UInt64) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(accessUnit.count + 48)
        guard let offset = H264Bitstream.startCodeOffset(in: accessUnit, ofFirst: H264Bitstream.isVCL) else {
            out.append(contentsOf: accessUnit)
            return out
        }
        out.append(contentsOf: UnsafeBufferPointer(rebasing: accessUnit[0..<offset]))
        out.append(contentsOf: [0, 0, 0, 1] as [UInt8])
        append(captureTimeMicros: captureTimeMicros, to: &out)
        out.append(contentsOf: UnsafeBufferPointer(rebasing: accessUnit[offset...]))
        return out
    }

    /// Reads an RBSP out of a NAL unit, dropping emulation-prevention bytes on the fly.
    struct RBSPReader {
        let bytes: UnsafeBufferPointer<UInt8>
        var index: Int
        var zeros = 0

        init(bytes: UnsafeBufferPointer<UInt8>, index: Int) {
            self.bytes = bytes
            self.index = index
        }

        mutating func next() -> UInt8? {
            guard index < bytes.count else { return nil }
            var byte = bytes[index]
            if zeros >= 2 && byte == 3 {
                index += 1
                zeros = 0
                guard index < bytes.count else { return nil }
                byte = bytes[index]
            }
            index += 1
            zeros = byte == 0 ? zeros + 1 : 0
            return byte
        }

        mutating func skip(_ count: Int) -> Bool {
            var left = count
            while left > 0 {
                guard next() != nil else { return false }
                left -= 1
            }
            return true
        }

        /// An SEI payload type or size: 0xFF bytes each add 255, the last byte ends it.
        mutating func sizeOrType() -> Int? {
            var value = 0
            while let byte = next() {
                value += Int(byte)
                if byte != 0xFF { return value }
            }
            return nil
        }

        /// False at the rbsp trailing bits (a last 0x80 and only zero bytes after it) or the end.
        var hasMoreData: Bool {
            var last = bytes.count
            while last > index && bytes[last - 1] == 0 { last -= 1 }
            if last <= index { return false }
            return !(last - index == 1 && bytes[index] == 0x80)
        }
    }
}
