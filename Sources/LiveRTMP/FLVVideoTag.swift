import LiveCodec

/// The body of an RTMP video message: an FLV VIDEODATA tag body (Adobe FLV and F4V
/// File Format Specification v10.1, §E.4.3.1), with the AVCVIDEOPACKET of H.264.
///
/// Layout: one byte frame type (high nibble) and codec id (low nibble); for AVC then
/// AVCPacketType (0 sequence header = AVCDecoderConfigurationRecord, 1 NAL units in
/// AVCC form, 2 end of sequence) and a signed 24-bit composition time offset (pts − dts
/// in milliseconds); then the data.
public struct FLVVideoTag: Equatable, Sendable {
    /// The frame type nibble.
    public enum FrameType: UInt8, Sendable {
        case keyframe = 1, interframe = 2, disposableInterframe = 3, generatedKeyframe = 4, videoInfo = 5
    }

    /// Codec ids of the low nibble (§E.4.3.1).
    public enum CodecID {
        public static let sorensonH263: UInt8 = 2
        public static let screenVideo: UInt8 = 3
        public static let vp6: UInt8 = 4
        public static let avc: UInt8 = 7
    }

    /// AVCPacketType (§E.4.3.1 AVCVIDEOPACKET).
    public enum AVCPacketType: UInt8, Sendable {
        case sequenceHeader = 0, nalUnits = 1, endOfSequence = 2

        /// The type for people: "sequence header", "NAL units", "end of sequence".
        public var words: String {
            switch self {
            case .sequenceHeader: "sequence header"
            case .nalUnits: "NAL units"
            case .endOfSequence: "end of sequence"
            }
        }
    }

    /// Why a video tag body cannot be read.
    public enum Error: Swift.Error, CustomStringConvertible, Equatable, Sendable {
        case empty
        case truncatedAVCHeader(length: Int)
        case invalidFrameType(UInt8)
        case invalidAVCPacketType(UInt8)
        case notAVC(codecID: UInt8)
        case wrongPacketType(expected: AVCPacketType, actual: AVCPacketType?)

        public var description: String {
            switch self {
            case .empty: "FLV video tag: empty video payload"
            case .truncatedAVCHeader(let length): "FLV video tag: AVC video payload of \(length) bytes lacks its 5-byte header"
            case .invalidFrameType(let v): "FLV video tag: frame type \(v) is not 1–5"
            case .invalidAVCPacketType(let v): "FLV video tag: AVC packet type \(v) is not 0, 1 or 2"
            case .notAVC(let id): "FLV video tag: codec id \(id) is not AVC (7)"
            case .wrongPacketType(let expected, let actual):
                "FLV video tag: expected an AVC \(expected.words) packet, got \(actual?.words ?? "none")"
            }
        }
    }

    public var frameType: FrameType
    public var codecID: UInt8
    /// For AVC: the packet type; nil for other codecs.
    public var avcPacketType: AVCPacketType?
    /// For AVC: presentation minus decode time in milliseconds (signed 24-bit).
    public var compositionTime: Int32
    /// What follows the header: the configuration record, AVCC NAL units, or another
    /// codec's frame.
    public var data: [UInt8]

    public init(frameType: FrameType, codecID: UInt8 = CodecID.avc, avcPacketType: AVCPacketType?,
                compositionTime: Int32 = 0, data: [UInt8])
    {
        self.frameType = frameType
        self.codecID = codecID
        self.avcPacketType = avcPacketType
        self.compositionTime = compositionTime
        self.data = data
    }

    public var isKeyframe: Bool { frameType == .keyframe || frameType == .generatedKeyframe }

    /// True for an AVC sequence header (the relay caches it for new players).
    public var isSequenceHeader: Bool { codecID == CodecID.avc && avcPacketType == .sequenceHeader }

    /// Reads a video message payload.
    public init(parsing payload: [UInt8]) throws {
        guard let first = payload.first else { throw Error.empty }
        guard let frameType = FrameType(rawValue: first >> 4) else { throw Error.invalidFrameType(first >> 4) }
        self.frameType = frameType
        codecID = first & 0x0F
        guard codecID == CodecID.avc else {
            avcPacketType = nil
            compositionTime = 0
            data = Array(payload.dropFirst())
            return
        }
        guard payload.count >= 5 else { throw Error.truncatedAVCHeader(length: payload.count) }
        guard let type = AVCPacketType(rawValue: payload[1]) else { throw Error.invalidAVCPacketType(payload[1]) }
        avcPacketType = type
        // Sign-extend the 24-bit value.
        let raw = Int32(payload[2]) << 16 | Int32(payload[3]) << 8 | Int32(payload[4])
        compositionTime = (raw << 8) >> 8
        data = Array(payload[5...])
    }

    /// The video message payload.
    public var payload: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(5 + data.count)
        appendHeader(to: &out)
        out += data
        return out
    }

    private func appendHeader(to out: inout [UInt8]) {
        out.append(frameType.rawValue << 4 | (codecID & 0x0F))
        if codecID == CodecID.avc {
            let ct = UInt32(bitPattern: compositionTime)
            out += [avcPacketType?.rawValue ?? 1, UInt8((ct >> 16) & 0xFF), UInt8((ct >> 8) & 0xFF), UInt8(ct & 0xFF)]
        }
    }

    // MARK: - H.264 helpers

    /// The AVC sequence header payload for an encoder's global header (SPS and PPS in
    /// Annex B): a keyframe tag of packet type 0 holding the AVCDecoderConfigurationRecord.
    public static func sequenceHeaderPayload(fromAnnexB extradata: [UInt8]) throws -> [UInt8] {
        let record = try H264Bitstream.avcDecoderConfigurationRecord(fromAnnexB: extradata)
        return FLVVideoTag(frameType: .keyframe, avcPacketType: .sequenceHeader, data: record).payload
    }

    /// The payload for one access unit given as Annex B: NAL units with 4-byte lengths
    /// after the 5-byte header, written once into one buffer. Parameter sets and access
    /// unit delimiters are left out (they travel in the sequence header).
    public static func nalUnitsPayload(fromAnnexB accessUnit: [UInt8], keyframe: Bool, compositionTime: Int32 = 0) -> [UInt8] {
        var out: [UInt8] = []
        appendNALUnitsPayload(fromAnnexB: accessUnit, keyframe: keyframe, compositionTime: compositionTime, to: &out)
        return out
    }

    /// Appends the NAL units payload of an Annex B access unit to `out`.
    public static func appendNALUnitsPayload(fromAnnexB accessUnit: [UInt8], keyframe: Bool, compositionTime: Int32,
                                             to out: inout [UInt8])
    {
        out.reserveCapacity(out.count + accessUnit.count + 32)
        FLVVideoTag(frameType: keyframe ? .keyframe : .interframe, avcPacketType: .nalUnits,
                    compositionTime: compositionTime, data: []).appendHeader(to: &out)
        accessUnit.withUnsafeBufferPointer { buffer in
            H264Bitstream.forEachAnnexBUnit(in: buffer) { range in
                let type = H264Bitstream.nalType(buffer[range.lowerBound])
                if type == H264Bitstream.NALType.sps || type == H264Bitstream.NALType.pps
                    || type == H264Bitstream.NALType.accessUnitDelimiter { return true }
                let n = UInt32(truncatingIfNeeded: range.count)
                out += [UInt8(n >> 24), UInt8((n >> 16) & 0xFF), UInt8((n >> 8) & 0xFF), UInt8(n & 0xFF)]
                out.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[range]))
                return true
            }
        }
    }

    /// The end-of-sequence payload ffmpeg sends when a publisher stops.
    public static let endOfSequencePayload: [UInt8] = [0x17, 0x02, 0, 0, 0]

    /// For a sequence header: the decoder configuration it carries.
    public func decoderConfiguration() throws -> H264Bitstream.AVCDecoderConfiguration {
        guard codecID == CodecID.avc else { throw Error.notAVC(codecID: codecID) }
        guard avcPacketType == .sequenceHeader else { throw Error.wrongPacketType(expected: .sequenceHeader, actual: avcPacketType) }
        return try H264Bitstream.parseAVCDecoderConfigurationRecord(data)
    }

    /// For a NAL units packet: its units as Annex B (4-byte start codes), read with the
    /// length size from the stream's configuration record.
    public func annexB(lengthSize: Int) throws -> [UInt8] {
        guard codecID == CodecID.avc else { throw Error.notAVC(codecID: codecID) }
        guard avcPacketType == .nalUnits else { throw Error.wrongPacketType(expected: .nalUnits, actual: avcPacketType) }
        return try H264Bitstream.annexB(fromAVCC: data, lengthSize: lengthSize)
    }
}
