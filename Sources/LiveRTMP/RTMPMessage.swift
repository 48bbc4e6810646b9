/// The body of an RTMP message, typed by its type id (RTMP 1.0 §5.4, §6.2, §7.1). The
/// header fields (timestamp, message stream id, chunk stream id) stay in
/// `RTMPRawMessage`; `init(decoding:)` reads one and `raw(...)` writes one back.
public enum RTMPMessage: Equatable, Sendable {
    /// 1: the sender's chunk size from now on (§5.4.1).
    case setChunkSize(UInt32)
    /// 2: discard the partial message on a chunk stream (§5.4.2).
    case abort(chunkStreamID: UInt32)
    /// 3: bytes received so far, modulo 2³² (§5.4.3).
    case acknowledgement(sequenceNumber: UInt32)
    /// 4: a user control event (§6.2).
    case userControl(RTMPUserControlEvent)
    /// 5: acknowledge every this many bytes (§5.4.4).
    case windowAcknowledgementSize(UInt32)
    /// 6: limit the peer's output window (§5.4.5).
    case setPeerBandwidth(size: UInt32, limit: BandwidthLimit)
    /// 8: an FLV audio tag body (`FLVAudioTag`).
    case audio([UInt8])
    /// 9: an FLV video tag body (`FLVVideoTag`).
    case video([UInt8])
    /// 18 (AMF0) or 15 (AMF3 container with AMF0 values): @setDataFrame, onMetaData…
    case data(RTMPData)
    /// 20 (AMF0) or 17 (AMF3 container with AMF0 values): a command.
    case command(RTMPCommand)
    /// 22: an aggregate, split into its sub-messages (decode only, §7.1.6).
    case aggregate([RTMPRawMessage])
    /// Any other type (shared objects, AMF3 bodies): the raw payload.
    case other(typeID: UInt8, payload: [UInt8])

    /// The message type ids.
    public enum TypeID {
        public static let setChunkSize: UInt8 = 1
        public static let abort: UInt8 = 2
        public static let acknowledgement: UInt8 = 3
        public static let userControl: UInt8 = 4
        public static let windowAcknowledgementSize: UInt8 = 5
        public static let setPeerBandwidth: UInt8 = 6
        public static let audio: UInt8 = 8
        public static let video: UInt8 = 9
        public static let dataAMF3: UInt8 = 15
        public static let commandAMF3: UInt8 = 17
        public static let dataAMF0: UInt8 = 18
        public static let commandAMF0: UInt8 = 20
        public static let aggregate: UInt8 = 22
    }

    /// The limit type of Set Peer Bandwidth (§5.4.5).
    public enum BandwidthLimit: UInt8, Sendable {
        case hard = 0, soft = 1, dynamic = 2
    }

    /// Why a message body cannot be read.
    public enum Error: Swift.Error, CustomStringConvertible, Equatable, Sendable {
        case truncated(typeID: UInt8, length: Int)
        case invalidBandwidthLimit(UInt8)
        case malformedAggregate(offset: Int)
        /// An aggregate of more sub-messages than `maxAggregateMessages`.
        case aggregateTooLarge(limit: Int)
        case notEncodable(String)

        public var description: String {
            switch self {
            case .truncated(let type, let length): "RTMP message: type \(type) with a \(length)-byte payload is too short"
            case .invalidBandwidthLimit(let v): "RTMP message: set peer bandwidth limit type \(v) is not 0, 1 or 2"
            case .malformedAggregate(let offset): "RTMP message: aggregate sub-message at byte \(offset) is malformed"
            case .aggregateTooLarge(let limit): "RTMP message: aggregate of more than \(limit) sub-messages"
            case .notEncodable(let why): "RTMP message: \(why)"
            }
        }
    }

    /// Decodes the body of `raw`.
    public init(decoding raw: RTMPRawMessage) throws {
        let p = raw.payload
        func word() throws -> UInt32 {
            guard p.count >= 4 else { throw Error.truncated(typeID: raw.typeID, length: p.count) }
            return UInt32(p[0]) << 24 | UInt32(p[1]) << 16 | UInt32(p[2]) << 8 | UInt32(p[3])
        }
        switch raw.typeID {
        case TypeID.setChunkSize: self = .setChunkSize(try word() & 0x7FFF_FFFF)
        case TypeID.abort: self = .abort(chunkStreamID: try word())
        case TypeID.acknowledgement: self = .acknowledgement(sequenceNumber: try word())
        case TypeID.userControl: self = .userControl(try RTMPUserControlEvent(decoding: p))
        case TypeID.windowAcknowledgementSize: self = .windowAcknowledgementSize(try word())
        case TypeID.setPeerBandwidth:
            let size = try word()
            guard p.count >= 5 else { throw Error.truncated(typeID: raw.typeID, length: p.count) }
            // ffmpeg reads only the size; tolerate a missing or odd limit type as dynamic.
            self = .setPeerBandwidth(size: size, limit: BandwidthLimit(rawValue: p[4]) ?? .dynamic)
        case TypeID.audio: self = .audio(p)
        case TypeID.video: self = .video(p)
        case TypeID.dataAMF0: self = .data(try RTMPData(decoding: try AMF0Decoder.decodeAll(p)))
        case TypeID.dataAMF3 where p.first == 0:
            self = .data(try RTMPData(decoding: try AMF0Decoder.decodeAll(Array(p.dropFirst()))))
        case TypeID.commandAMF0: self = .command(try RTMPCommand(decoding: try AMF0Decoder.decodeAll(p)))
        case TypeID.commandAMF3 where p.first == 0:
            self = .command(try RTMPCommand(decoding: try AMF0Decoder.decodeAll(Array(p.dropFirst()))))
        case TypeID.aggregate: self = .aggregate(try Self.split(aggregate: raw))
        default: self = .other(typeID: raw.typeID, payload: p)
        }
    }

    public var typeID: UInt8 {
        switch self {
        case .setChunkSize: TypeID.setChunkSize
        case .abort: TypeID.abort
        case .acknowledgement: TypeID.acknowledgement
        case .userControl: TypeID.userControl
        case .windowAcknowledgementSize: TypeID.windowAcknowledgementSize
        case .setPeerBandwidth: TypeID.setPeerBandwidth
        case .audio: TypeID.audio
        case .video: TypeID.video
        case .data: TypeID.dataAMF0
        case .command: TypeID.commandAMF0
        case .aggregate: TypeID.aggregate
        case .other(let type, _): type
        }
    }

    /// The chunk stream LiveLine sends this kind of message on.
    public var defaultChunkStreamID: UInt32 {
        switch self {
        case .setChunkSize, .abort, .acknowledgement, .userControl, .windowAcknowledgementSize, .setPeerBandwidth:
            RTMPChunkStreamID.control
        case .audio: RTMPChunkStreamID.audio
        case .video: RTMPChunkStreamID.video
        case .data: RTMPChunkStreamID.streamCommand
        case .command(let command): command.isStreamCommand ? RTMPChunkStreamID.streamCommand : RTMPChunkStreamID.command
        case .aggregate, .other: RTMPChunkStreamID.streamCommand
        }
    }

    /// The payload bytes of this body.
    public func payload() throws -> [UInt8] {
        func word(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8((v >> 16) & 0xFF), UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)] }
        switch self {
        case .setChunkSize(let size): return word(size & 0x7FFF_FFFF)
        case .abort(let csid): return word(csid)
        case .acknowledgement(let n): return word(n)
        case .userControl(let event): return event.payload
        case .windowAcknowledgementSize(let n): return word(n)
        case .setPeerBandwidth(let size, let limit): return word(size) + [limit.rawValue]
        case .audio(let bytes), .video(let bytes): return bytes
        case .data(let data): return AMF0Encoder.encode(data.values)
        case .command(let command): return AMF0Encoder.encode(command.values)
        case .aggregate: throw Error.notEncodable("aggregate messages are decoded only")
        case .other(_, let bytes): return bytes
        }
    }

    /// A raw message carrying this body. Protocol control messages belong to message
    /// stream 0 and timestamp 0 (§5.4); `messageStreamID` is for the others.
    public func raw(timestamp: UInt32 = 0, messageStreamID: UInt32 = 0, chunkStreamID: UInt32? = nil) throws -> RTMPRawMessage {
        RTMPRawMessage(chunkStreamID: chunkStreamID ?? defaultChunkStreamID, typeID: typeID,
                       messageStreamID: messageStreamID, timestamp: timestamp, payload: try payload())
    }

    /// The most sub-messages of one aggregate (Flash Media Server bundles a few dozen;
    /// 8 MiB of empty 15-byte tags would otherwise make half a million messages).
    public static let maxAggregateMessages = 4096

    /// The sub-messages of an aggregate (type 22): FLV tags (type, 24-bit size, 24+8-bit
    /// timestamp, 24-bit stream id, body, 32-bit back pointer), their timestamps rebased
    /// so the first one lands on the aggregate's own timestamp, as FMS and ffmpeg do.
    static func split(aggregate raw: RTMPRawMessage) throws -> [RTMPRawMessage] {
        let p = raw.payload
        var offset = 0
        var first: UInt32?
        var messages: [RTMPRawMessage] = []
        while offset < p.count {
            guard messages.count < maxAggregateMessages else { throw Error.aggregateTooLarge(limit: maxAggregateMessages) }
            guard p.count - offset >= 11 else { throw Error.malformedAggregate(offset: offset) }
            let type = p[offset] & 0x1F
            let size = Int(p[offset + 1]) << 16 | Int(p[offset + 2]) << 8 | Int(p[offset + 3])
            let ts = UInt32(p[offset + 7]) << 24 | UInt32(p[offset + 4]) << 16 | UInt32(p[offset + 5]) << 8 | UInt32(p[offset + 6])
            let start = offset + 11
            guard size <= p.count - start else { throw Error.malformedAggregate(offset: offset) }
            let base = first ?? ts
            first = base
            messages.append(RTMPRawMessage(chunkStreamID: raw.chunkStreamID, typeID: type, messageStreamID: raw.messageStreamID,
                                           timestamp: raw.timestamp &+ (ts &- base), payload: Array(p[start..<start + size])))
            // The 4-byte back pointer may be missing after the last tag.
            offset = min(p.count, start + size + 4)
        }
        return messages
    }
}
