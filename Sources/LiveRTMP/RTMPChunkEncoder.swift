/// Splits RTMP messages into chunks (RTMP 1.0 §5.3) with header compression.
///
/// Each chunk stream remembers the last message sent on it, and the next message uses
/// the smallest header that says what changed: format 1 (same stream), 2 (same length
/// and type) or 3 (same delta too). Format 0 is used for the first message, a new
/// message stream, a timestamp that goes backwards, and for the message right after a
/// format-0 header when format 3 would be the candidate, because peers disagree on the
/// delta a format-3 header inherits from a format-0 one (ffmpeg: the timestamp;
/// nginx-rtmp: zero). Extended timestamps are repeated on format-3 chunks, as ffmpeg and
/// nginx-rtmp expect.
///
/// `appendSelfContained` encodes a message with no state at all (format 0 then format
/// 3), so a relay can encode a media message once and send the same bytes to every
/// player with the same chunk size; call `forget(chunkStreamID:)` on a connection's
/// encoder if it also sends on that chunk stream.
public struct RTMPChunkEncoder {
    /// Why a message cannot be encoded.
    public enum Error: Swift.Error, CustomStringConvertible, Equatable, Sendable {
        case invalidChunkSize(Int)
        case invalidChunkStreamID(UInt32)
        case messageTooLong(Int)

        public var description: String {
            switch self {
            case .invalidChunkSize(let size): "RTMP chunk size \(size) is outside 1…\(RTMPChunkDecoder.maxChunkSize)"
            case .invalidChunkStreamID(let id): "RTMP chunk: chunk stream id \(id) is outside 2…65599"
            case .messageTooLong(let length): "RTMP chunk: \(length)-byte message exceeds the 24-bit length field"
            }
        }
    }

    private struct ChunkStream {
        var timestamp: UInt32
        var delta: UInt32?
        var length: Int
        var typeID: UInt8
        var messageStreamID: UInt32
    }

    /// The size of outgoing chunks' payloads. Send a Set Chunk Size message (encoded at
    /// the old size) before changing it.
    public private(set) var chunkSize = RTMPChunkDecoder.defaultChunkSize
    private var streams: [UInt32: ChunkStream] = [:]

    public init(chunkSize: Int = RTMPChunkDecoder.defaultChunkSize) {
        self.chunkSize = max(1, min(chunkSize, RTMPChunkDecoder.maxChunkSize))
    }

    /// Changes the outgoing chunk size (1…16777215).
    public mutating func setChunkSize(_ size: Int) throws {
        guard size >= 1 && size <= RTMPChunkDecoder.maxChunkSize else { throw Error.invalidChunkSize(size) }
        chunkSize = size
    }

    /// Forgets the last message on `chunkStreamID`, so the next one there has a format-0 header.
    public mutating func forget(chunkStreamID: UInt32) {
        streams[chunkStreamID] = nil
    }

    /// Appends the chunks of `message` to `out`.
    public mutating func append(_ message: RTMPRawMessage, to out: inout [UInt8]) throws {
        try Self.validate(message)
        let csid = message.chunkStreamID
        var format: UInt8 = 0
        var field = message.timestamp
        var delta: UInt32?
        if let previous = streams[csid], previous.messageStreamID == message.messageStreamID,
           message.timestamp >= previous.timestamp
        {
            let d = message.timestamp - previous.timestamp
            delta = d
            field = d
            if previous.length != message.payload.count || previous.typeID != message.typeID {
                format = 1
            } else if previous.delta == d {
                format = 3
            } else {
                format = 2
            }
        }
        streams[csid] = ChunkStream(timestamp: message.timestamp, delta: delta, length: message.payload.count,
                                    typeID: message.typeID, messageStreamID: message.messageStreamID)
        Self.write(message, format: format, timestampField: field, chunkSize: chunkSize, to: &out)
    }

    /// The chunks of `message`.
    public mutating func encode(_ message: RTMPRawMessage) throws -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(message.payload.count + 16 + message.payload.count / max(chunkSize, 1))
        try append(message, to: &out)
        return out
    }

    /// Appends `message` with a format-0 header and format-3 continuations: bytes that
    /// mean the same on any connection using `chunkSize`.
    public static func appendSelfContained(_ message: RTMPRawMessage, chunkSize: Int, to out: inout [UInt8]) throws {
        try validate(message)
        guard chunkSize >= 1 && chunkSize <= RTMPChunkDecoder.maxChunkSize else { throw Error.invalidChunkSize(chunkSize) }
        write(message, format: 0, timestampField: message.timestamp, chunkSize: chunkSize, to: &out)
    }

    private static func validate(_ message: RTMPRawMessage) throws {
        guard message.chunkStreamID >= 2 && message.chunkStreamID <= 65599 else {
            throw Error.invalidChunkStreamID(message.chunkStreamID)
        }
        guard message.payload.count <= RTMPChunkDecoder.maxChunkSize else { throw Error.messageTooLong(message.payload.count) }
    }

    private static func write(_ message: RTMPRawMessage, format: UInt8, timestampField: UInt32, chunkSize: Int,
                              to out: inout [UInt8])
    {
        let length = message.payload.count
        let extended = timestampField >= 0xFF_FFFF
        let field = extended ? 0xFF_FFFF : timestampField
        out.reserveCapacity(out.count + length + 18 + (length / chunkSize) * 7)
        appendBasicHeader(format: format, chunkStreamID: message.chunkStreamID, to: &out)
        if format <= 2 { appendUInt24(field, to: &out) }
        if format <= 1 {
            appendUInt24(UInt32(length), to: &out)
            out.append(message.typeID)
        }
        if format == 0 {
            let id = message.messageStreamID  // little-endian, the one such field in RTMP (§5.3.1.2.1)
            out += [UInt8(id & 0xFF), UInt8((id >> 8) & 0xFF), UInt8((id >> 16) & 0xFF), UInt8(id >> 24)]
        }
        if extended { appendUInt32(timestampField, to: &out) }
        var offset = 0
        message.payload.withUnsafeBufferPointer { payload in
            while true {
                let take = min(chunkSize, length - offset)
                out.append(contentsOf: UnsafeBufferPointer(rebasing: payload[offset..<offset + take]))
                offset += take
                guard offset < length else { break }
                appendBasicHeader(format: 3, chunkStreamID: message.chunkStreamID, to: &out)
                if extended { appendUInt32(timestampField, to: &out) }
            }
        }
    }

    private static func appendBasicHeader(format: UInt8, chunkStreamID csid: UInt32, to out: inout [UInt8]) {
        let high = format << 6
        if csid < 64 {
            out.append(high | UInt8(csid))
        } else if csid < 320 {
            out += [high, UInt8(csid - 64)]
        } else {
            out += [high | 1, UInt8((csid - 64) & 0xFF), UInt8((csid - 64) >> 8)]
        }
    }

    private static func appendUInt24(_ v: UInt32, to out: inout [UInt8]) {
        out += [UInt8((v >> 16) & 0xFF), UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)]
    }

    private static func appendUInt32(_ v: UInt32, to out: inout [UInt8]) {
        out += [UInt8(v >> 24), UInt8((v >> 16) & 0xFF), UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)]
    }
}
