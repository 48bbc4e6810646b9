/// Reassembles RTMP messages from a chunk stream (RTMP 1.0 §5.3), in the manner of
/// swift-nio's `ByteToMessageDecoder`: `feed(_:)` appends received bytes and
/// `nextMessage()` returns the next complete message or nil for "need more data".
/// The result does not depend on how the bytes were split across `feed` calls.
///
/// Protocol control messages are applied here as they complete, before the next chunk
/// is read, and still returned: Set Chunk Size (§5.4.1) changes the size from the next
/// chunk on, Abort (§5.4.2) drops a partial message, Window Acknowledgement Size
/// (§5.4.4) arms `acknowledgementDue`.
///
/// Choices where peers differ from the text of the spec:
/// - Chunk size: the spec allows 1…2³¹−1. No message exceeds 16 MiB − 1 (24-bit length),
///   so larger values are accepted and act as that maximum. 0 is an error; the reserved
///   top bit is ignored, as ffmpeg and nginx-rtmp do.
/// - Extended timestamp on a format-3 chunk: ffmpeg, nginx-rtmp and Flash Media Server
///   repeat the 4-byte extended timestamp on every format-3 chunk of a stream whose
///   last header had one; some encoders omit it. As SRS does, the 4 bytes are taken as
///   the extended timestamp when they equal the last one on that chunk stream, and as
///   payload otherwise. The decoder therefore waits for those 4 bytes to be buffered.
/// - Format 3 that starts a new message adds the previous delta; after a format-0
///   header that "delta" is the absolute timestamp field, as ffmpeg and SRS read it
///   (ffmpeg's writer relies on this). `RTMPChunkEncoder` never produces that case.
/// - A format 0–2 header on a chunk stream with a partial message drops the partial
///   message and starts a new one, as ffmpeg does.
///
/// Budgets (every size the peer controls is checked before memory follows it):
/// - `maxMessageLength` for audio, video and aggregate messages, the far smaller
///   `maxCommandMessageLength` for every other type (commands, data, control), checked
///   on the header, before any payload arrives;
/// - `maxChunkStreams` distinct chunk streams (real peers use fewer than ten);
/// - `maxUnfinishedBytes` for the unfinished messages of all chunk streams together
///   plus the received bytes not yet decoded (`unfinishedByteCount`). A partial payload
///   grows with the bytes that really arrive, never to the length the header claims.
public struct RTMPChunkDecoder {
    /// Why the chunk stream cannot be decoded; the connection should be closed.
    public enum Error: Swift.Error, CustomStringConvertible, Equatable, Sendable {
        /// A format 1–3 chunk on a chunk stream that never had a format-0 header.
        case missingPreviousHeader(chunkStreamID: UInt32, format: UInt8)
        /// A message longer than `maxMessageLength`.
        case messageTooLong(length: Int, limit: Int)
        /// Set Chunk Size with the value 0.
        case invalidChunkSize(UInt32)
        /// A protocol control message whose payload is too short.
        case malformedControlMessage(typeID: UInt8, length: Int)
        /// More distinct chunk streams than `maxChunkStreams`.
        case tooManyChunkStreams(limit: Int)
        /// A command, data or control message longer than `maxCommandMessageLength`.
        case nonMediaMessageTooLong(typeID: UInt8, length: Int, limit: Int)
        /// Unfinished messages and undecoded bytes would exceed `maxUnfinishedBytes`.
        case unfinishedBytesExceeded(limit: Int)

        public var description: String {
            switch self {
            case .missingPreviousHeader(let csid, let format):
                "RTMP chunk stream: format-\(format) chunk on chunk stream \(csid) with no earlier header"
            case .messageTooLong(let length, let limit):
                "RTMP chunk stream: message of \(length) bytes exceeds the limit of \(limit)"
            case .invalidChunkSize(let size): "RTMP chunk stream: invalid chunk size \(size)"
            case .malformedControlMessage(let type, let length):
                "RTMP chunk stream: protocol control message type \(type) with \(length)-byte payload"
            case .tooManyChunkStreams(let limit): "RTMP chunk stream: more than \(limit) chunk streams"
            case .nonMediaMessageTooLong(let type, let length, let limit):
                "RTMP chunk stream: message of type \(type) and \(length) bytes exceeds the limit of \(limit) for non-media messages"
            case .unfinishedBytesExceeded(let limit):
                "RTMP chunk stream: unfinished messages would hold more than \(limit) bytes"
            }
        }
    }

    /// The chunk size both sides start with (RTMP 1.0 §5.3.1).
    public static let defaultChunkSize = 128
    /// The largest effective chunk size: the largest message (24-bit length).
    public static let maxChunkSize = 0xFF_FFFF
    /// The default message size limit: the 24-bit length field's maximum (16 MiB − 1).
    public static let defaultMaxMessageLength = 0xFF_FFFF
    /// The default limit for commands, data and control messages (connect with every
    /// optional field is under 1 KiB; ffmpeg's onMetaData about 400 bytes).
    public static let defaultMaxCommandMessageLength = 64 << 10
    /// The default number of chunk streams (ffmpeg, OBS and nginx-rtmp use 2–8).
    public static let defaultMaxChunkStreams = 64
    /// The default budget of unfinished messages plus undecoded bytes: one largest
    /// message and room for the small ones interleaved with it.
    public static let defaultMaxUnfinishedBytes = defaultMaxMessageLength + (1 << 20)

    /// The state one chunk stream keeps between chunks (§5.3.1.2).
    private struct ChunkStream {
        var timestamp: UInt32 = 0
        var delta: UInt32 = 0
        var length = 0
        var typeID: UInt8 = 0
        var messageStreamID: UInt32 = 0
        /// The last header's timestamp field was 0xFFFFFF; its 4-byte value follows.
        var extended = false
        var extendedValue: UInt32 = 0
        /// Payload of the message in progress.
        var payload: [UInt8] = []
        /// The capacity reserved for `payload`, counted in `unfinishedPayloadBytes`.
        var reserved = 0
        var inProgress = false
    }

    /// The size of incoming chunks' payloads, changed by the peer's Set Chunk Size.
    public private(set) var chunkSize = RTMPChunkDecoder.defaultChunkSize
    /// The longest audio, video or aggregate message.
    public let maxMessageLength: Int
    /// The longest message of any other type (commands, data, protocol control).
    public let maxCommandMessageLength: Int
    /// The most chunk streams one connection may use (real peers use fewer than ten).
    public let maxChunkStreams: Int
    /// The most bytes unfinished messages and undecoded input may hold together; keep it
    /// above `maxMessageLength` plus a read's worth, or the longest messages cannot pass.
    public let maxUnfinishedBytes: Int
    /// Capacity reserved by the partial payloads of all chunk streams.
    public private(set) var unfinishedPayloadBytes = 0
    /// Bytes fed so far: the acknowledgement sequence number (RTMP 1.0 §5.4.3) is this
    /// modulo 2³².
    public private(set) var bytesReceived: UInt64 = 0
    /// The window the peer announced with Window Acknowledgement Size, if any.
    public private(set) var windowAcknowledgementSize: UInt32?
    private var acknowledgedBytes: UInt64 = 0

    private var buffer: [UInt8] = []
    private var readIndex = 0
    private var streams: [UInt32: ChunkStream] = [:]

    public init(maxMessageLength: Int = RTMPChunkDecoder.defaultMaxMessageLength,
                maxCommandMessageLength: Int = RTMPChunkDecoder.defaultMaxCommandMessageLength,
                maxChunkStreams: Int = RTMPChunkDecoder.defaultMaxChunkStreams,
                maxUnfinishedBytes: Int = RTMPChunkDecoder.defaultMaxUnfinishedBytes)
    {
        self.maxMessageLength = min(maxMessageLength, Self.defaultMaxMessageLength)
        self.maxCommandMessageLength = min(maxCommandMessageLength, self.maxMessageLength)
        self.maxChunkStreams = maxChunkStreams
        self.maxUnfinishedBytes = maxUnfinishedBytes
    }

    /// Bytes fed but not yet decoded.
    public var bufferedByteCount: Int { buffer.count - readIndex }

    /// What the peer makes this decoder hold now: partial payloads and undecoded bytes.
    public var unfinishedByteCount: Int { unfinishedPayloadBytes + bufferedByteCount }

    /// True for the types whose length only `maxMessageLength` bounds.
    static func isMedia(typeID: UInt8) -> Bool {
        typeID == RTMPMessage.TypeID.audio || typeID == RTMPMessage.TypeID.video || typeID == RTMPMessage.TypeID.aggregate
    }

    /// Appends received bytes.
    public mutating func feed<Bytes: Collection>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        compact()
        buffer.append(contentsOf: bytes)
        bytesReceived += UInt64(bytes.count)
    }

    /// Appends received bytes from a raw buffer (a socket read).
    public mutating func feed(_ bytes: UnsafeRawBufferPointer) {
        compact()
        buffer.append(contentsOf: bytes)
        bytesReceived += UInt64(bytes.count)
    }

    /// Sets the incoming chunk size by hand (Set Chunk Size messages are applied already).
    public mutating func setChunkSize(_ size: UInt32) throws {
        let value = size & 0x7FFF_FFFF
        guard value > 0 else { throw Error.invalidChunkSize(size) }
        chunkSize = min(Int(value), Self.maxChunkSize)
    }

    /// The sequence number to acknowledge when the bytes received since the last
    /// acknowledgement reach the peer's window; nil while none is due.
    public var acknowledgementDue: UInt32? {
        guard let window = windowAcknowledgementSize, window > 0,
              bytesReceived - acknowledgedBytes >= UInt64(window) else { return nil }
        return UInt32(truncatingIfNeeded: bytesReceived)
    }

    /// Records that an Acknowledgement for everything received so far was sent.
    public mutating func acknowledgementSent() {
        acknowledgedBytes = bytesReceived
    }

    /// The next complete message, or nil when more bytes are needed.
    public mutating func nextMessage() throws -> RTMPRawMessage? {
        while true {
            guard let message = try nextChunk() else {
                // All that can be decoded is; what remains waits for the peer.
                guard unfinishedByteCount <= maxUnfinishedBytes else {
                    throw Error.unfinishedBytesExceeded(limit: maxUnfinishedBytes)
                }
                return nil
            }
            if let message {
                try apply(message)
                return message
            }
        }
    }

    /// Reads one chunk. Nil: need more bytes; `.some(nil)`: a chunk was consumed but
    /// its message is not complete yet.
    private mutating func nextChunk() throws -> RTMPRawMessage?? {
        var p = readIndex
        let end = buffer.count
        guard p < end else { return nil }
        // Basic header (§5.3.1.1).
        let first = buffer[p]
        p += 1
        let format = first >> 6
        var csid = UInt32(first & 0x3F)
        if csid == 0 {
            guard p < end else { return nil }
            csid = 64 + UInt32(buffer[p])
            p += 1
        } else if csid == 1 {
            guard end - p >= 2 else { return nil }
            csid = 64 + UInt32(buffer[p]) + UInt32(buffer[p + 1]) << 8
            p += 2
        }
        // Message header (§5.3.1.2).
        let headerSize = [11, 7, 3, 0][Int(format)]
        guard end - p >= headerSize else { return nil }
        var stream: ChunkStream
        if let existing = streams[csid] {
            stream = existing
        } else {
            guard format == 0 else { throw Error.missingPreviousHeader(chunkStreamID: csid, format: format) }
            guard streams.count < maxChunkStreams else { throw Error.tooManyChunkStreams(limit: maxChunkStreams) }
            stream = ChunkStream()
        }
        var timestampField: UInt32 = 0
        if format <= 2 {
            timestampField = uint24(at: p)
            if format <= 1 {
                stream.length = Int(uint24(at: p + 3))
                stream.typeID = buffer[p + 6]
                if format == 0 {
                    stream.messageStreamID = UInt32(buffer[p + 7]) | UInt32(buffer[p + 8]) << 8
                        | UInt32(buffer[p + 9]) << 16 | UInt32(buffer[p + 10]) << 24
                }
            }
            p += headerSize
            stream.extended = timestampField == 0xFF_FFFF
            if stream.extended {
                guard end - p >= 4 else { return nil }
                stream.extendedValue = uint32(at: p)
                timestampField = stream.extendedValue
                p += 4
            }
        } else if stream.extended {
            // See the type's note on extended timestamps in format-3 chunks.
            guard end - p >= 4 else { return nil }
            if uint32(at: p) == stream.extendedValue { p += 4 }
        }
        var freed = 0
        if format <= 2 || !stream.inProgress {
            if stream.length > maxMessageLength {
                throw Error.messageTooLong(length: stream.length, limit: maxMessageLength)
            }
            if stream.length > maxCommandMessageLength, !Self.isMedia(typeID: stream.typeID) {
                throw Error.nonMediaMessageTooLong(typeID: stream.typeID, length: stream.length, limit: maxCommandMessageLength)
            }
            switch format {
            case 0:
                stream.timestamp = timestampField
                stream.delta = timestampField
            case 1, 2:
                stream.delta = timestampField
                stream.timestamp = stream.timestamp &+ timestampField
            default:
                stream.timestamp = stream.timestamp &+ stream.delta
            }
            // Any partial message is dropped; its reservation is given back below,
            // once this chunk is known to be complete (until then nothing changes).
            freed = stream.reserved
            stream.reserved = 0
            stream.payload = []
            stream.inProgress = true
        }
        let take = min(chunkSize, stream.length - stream.payload.count)
        guard end - p >= take else { return nil }
        // Drop the dictionary's copy so appending does not copy the partial payload.
        streams[csid] = nil
        unfinishedPayloadBytes -= freed
        let needed = stream.payload.count + take
        if needed > stream.reserved {
            // The length is the peer's claim: memory follows the bytes that really
            // arrive, doubling so a long message is copied a bounded number of times.
            let grown = min(stream.length, max(needed, stream.reserved * 2))
            guard unfinishedPayloadBytes - stream.reserved + grown + (end - p - take) <= maxUnfinishedBytes else {
                throw Error.unfinishedBytesExceeded(limit: maxUnfinishedBytes)
            }
            unfinishedPayloadBytes += grown - stream.reserved
            stream.reserved = grown
            stream.payload.reserveCapacity(grown)
        }
        stream.payload.append(contentsOf: buffer[p..<p + take])
        p += take
        readIndex = p
        guard stream.payload.count == stream.length else {
            streams[csid] = stream
            return .some(nil)
        }
        let message = RTMPRawMessage(chunkStreamID: csid, typeID: stream.typeID, messageStreamID: stream.messageStreamID,
                                     timestamp: stream.timestamp, payload: stream.payload)
        release(&stream)
        stream.inProgress = false
        streams[csid] = stream
        return .some(message)
    }

    /// Forgets a chunk stream's partial payload and gives its reservation back.
    private mutating func release(_ stream: inout ChunkStream) {
        unfinishedPayloadBytes -= stream.reserved
        stream.reserved = 0
        stream.payload = []
    }

    /// Applies protocol control messages that change how the following chunks read.
    private mutating func apply(_ message: RTMPRawMessage) throws {
        switch message.typeID {
        case RTMPMessage.TypeID.setChunkSize, RTMPMessage.TypeID.abort, RTMPMessage.TypeID.windowAcknowledgementSize:
            guard message.payload.count >= 4 else {
                throw Error.malformedControlMessage(typeID: message.typeID, length: message.payload.count)
            }
            let value = UInt32(message.payload[0]) << 24 | UInt32(message.payload[1]) << 16
                | UInt32(message.payload[2]) << 8 | UInt32(message.payload[3])
            switch message.typeID {
            case RTMPMessage.TypeID.setChunkSize: try setChunkSize(value)
            case RTMPMessage.TypeID.abort:
                if var stream = streams[value] {
                    release(&stream)
                    stream.inProgress = false
                    streams[value] = stream
                }
            default: windowAcknowledgementSize = value
            }
        default:
            break
        }
    }

    /// Input buffer capacity kept across reads; a burst that grew it beyond this (one
    /// huge chunk) gives the memory back once the bytes are decoded.
    static let retainedBufferCapacity = 256 << 10

    private mutating func compact() {
        guard readIndex > 0 else { return }
        let remaining = buffer.count - readIndex
        if buffer.capacity > Self.retainedBufferCapacity, buffer.capacity > 4 * remaining {
            buffer = Array(buffer[readIndex...])
            readIndex = 0
        } else if readIndex == buffer.count || (readIndex >= 65536 && readIndex * 2 >= buffer.count) {
            // Move the unread tail down once the consumed head is both large and most
            // of the buffer, so copying stays proportional to the data.
            buffer.removeFirst(readIndex)
            readIndex = 0
        }
    }

    /// The capacity of the input buffer (what undecoded bytes cost in memory).
    var inputCapacity: Int { buffer.capacity }

    @inline(__always)
    private func uint24(at i: Int) -> UInt32 {
        UInt32(buffer[i]) << 16 | UInt32(buffer[i + 1]) << 8 | UInt32(buffer[i + 2])
    }

    @inline(__always)
    private func uint32(at i: Int) -> UInt32 {
        UInt32(buffer[i]) << 24 | UInt32(buffer[i + 1]) << 16 | UInt32(buffer[i + 2]) << 8 | UInt32(buffer[i + 3])
    }
}
