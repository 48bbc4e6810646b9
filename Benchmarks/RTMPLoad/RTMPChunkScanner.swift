import LiveRTMP

/// Reads an RTMP chunk stream (RTMP 1.0 §5.3) the way a load generator needs it: every
/// chunk header is parsed and every message's boundaries found, but audio and video
/// payloads are skipped in place (only their first two bytes are kept, enough to tell a
/// keyframe and an AVC sequence header), so a player costs the read syscall and a few
/// comparisons per chunk. Other messages (commands, control) are assembled whole.
///
/// Timestamps follow ffmpeg's rtmppkt.c: format 0 is absolute, formats 1 and 2 add their
/// delta, a format 3 chunk that starts a message adds the chunk stream's last delta.
///
/// Pure value: bytes in, messages out through the `scan` callback.
struct RTMPChunkScanner {
    enum Error: Swift.Error, CustomStringConvertible {
        case noPreviousHeader(chunkStreamID: Int, format: Int)
        case headerInsideMessage(chunkStreamID: Int, format: Int)
        case chunkStreamOutOfRange(Int)
        case messageTooLong(Int)

        var description: String {
            switch self {
            case .noPreviousHeader(let csid, let format):
                "RTMPChunkScanner.scan: format \(format) chunk on chunk stream \(csid) with no previous header"
            case .headerInsideMessage(let csid, let format):
                "RTMPChunkScanner.scan: format \(format) header inside a message on chunk stream \(csid)"
            case .chunkStreamOutOfRange(let csid): "RTMPChunkScanner.scan: chunk stream \(csid) is beyond the 1024 supported"
            case .messageTooLong(let length): "RTMPChunkScanner.scan: a \(length)-byte non-media message"
            }
        }
    }

    /// One complete message. `payload` is empty for audio and video (see `head`).
    struct Message {
        var chunkStreamID: Int
        var typeID: UInt8
        var messageStreamID: UInt32
        var timestamp: UInt32
        var length: Int
        /// The first two payload bytes (zero when shorter).
        var head: (UInt8, UInt8)
        var payload: [UInt8]

        var isMedia: Bool { typeID == RTMPMessage.TypeID.audio || typeID == RTMPMessage.TypeID.video }
    }

    private struct ChunkStream {
        var timestamp: UInt32 = 0
        var delta: UInt32 = 0
        var length = 0
        var typeID: UInt8 = 0
        var messageStreamID: UInt32 = 0
        var extended = false
        var known = false
        /// Payload bytes of the current message still to come; 0 between messages.
        var remaining = 0
        var head: (UInt8, UInt8) = (0, 0)
        var payload: [UInt8] = []
    }

    private static let maxHeader = 18
    private static let maxChunkStreams = 1024
    /// Commands and control messages are small; a larger one is a broken stream.
    private static let maxAssembled = 1 << 20

    private(set) var chunkSize = 128
    private(set) var bytesScanned: UInt64 = 0
    private var streams: [ChunkStream] = Array(repeating: ChunkStream(), count: 8)
    /// The chunk being read: its stream and payload bytes left.
    private var current = -1
    private var chunkLeft = 0
    /// A header split across reads.
    private var carry: [UInt8] = []

    /// Scans `bytes`, calling `onMessage` for every message they complete, in order.
    mutating func scan(_ bytes: UnsafeRawBufferPointer, _ onMessage: (Message) throws -> Void) throws {
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
        bytesScanned += UInt64(bytes.count)
        let end = bytes.count
        var at = 0
        while at < end {
            if chunkLeft > 0 {
                let take = min(chunkLeft, end - at)
                try payload(base + at, take, onMessage)
                at += take
                continue
            }
            if carry.isEmpty {
                if let used = try header(base + at, end - at, onMessage) {
                    at += used
                } else {
                    carry.append(contentsOf: UnsafeBufferPointer(start: base + at, count: end - at))
                    return
                }
            } else {
                let old = carry.count
                let take = min(Self.maxHeader - old, end - at)
                carry.append(contentsOf: UnsafeBufferPointer(start: base + at, count: take))
                let used = try carry.withUnsafeBufferPointer { try header($0.baseAddress!, $0.count, onMessage) }
                if let used {
                    at += used - old
                    carry.removeAll(keepingCapacity: true)
                } else {
                    at += take
                }
            }
        }
    }

    /// Parses one chunk header at `p`; nil when the `count` bytes do not hold all of it.
    private mutating func header(_ p: UnsafePointer<UInt8>, _ count: Int,
                                 _ onMessage: (Message) throws -> Void) throws -> Int? {
        guard count >= 1 else { return nil }
        let format = Int(p[0] >> 6)
        var csid = Int(p[0] & 0x3F)
        var at = 1
        if csid == 0 {
            guard count >= 2 else { return nil }
            csid = 64 + Int(p[1])
            at = 2
        } else if csid == 1 {
            guard count >= 3 else { return nil }
            csid = 64 + Int(p[1]) + Int(p[2]) << 8
            at = 3
        }
        let fieldBytes = format == 0 ? 11 : format == 1 ? 7 : format == 2 ? 3 : 0
        guard count >= at + fieldBytes else { return nil }
        guard csid < Self.maxChunkStreams else { throw Error.chunkStreamOutOfRange(csid) }
        if csid >= streams.count { streams += Array(repeating: ChunkStream(), count: csid + 1 - streams.count) }
        var stream = streams[csid]
        guard format == 0 || stream.known else { throw Error.noPreviousHeader(chunkStreamID: csid, format: format) }
        guard format == 3 || stream.remaining == 0 else { throw Error.headerInsideMessage(chunkStreamID: csid, format: format) }
        var field: UInt32 = 0
        var extended = stream.extended
        if format <= 2 {
            field = UInt32(p[at]) << 16 | UInt32(p[at + 1]) << 8 | UInt32(p[at + 2])
            extended = field == 0xFF_FFFF
        }
        if format <= 1 {
            stream.length = Int(p[at + 3]) << 16 | Int(p[at + 4]) << 8 | Int(p[at + 5])
            stream.typeID = p[at + 6]
        }
        if format == 0 {
            stream.messageStreamID = UInt32(p[at + 7]) | UInt32(p[at + 8]) << 8 | UInt32(p[at + 9]) << 16 | UInt32(p[at + 10]) << 24
        }
        at += fieldBytes
        if extended {
            guard count >= at + 4 else { return nil }
            let value = UInt32(p[at]) << 24 | UInt32(p[at + 1]) << 16 | UInt32(p[at + 2]) << 8 | UInt32(p[at + 3])
            if format <= 2 { field = value }
            at += 4
        }
        if stream.remaining == 0 {
            switch format {
            case 0:
                stream.timestamp = field
                stream.delta = field
            case 1, 2:
                stream.delta = field
                stream.timestamp &+= field
            default:
                stream.timestamp &+= stream.delta
            }
            if format <= 2 { stream.extended = extended }
            stream.known = true
            stream.remaining = stream.length
            stream.head = (0, 0)
            stream.payload.removeAll(keepingCapacity: true)
            if !(stream.typeID == RTMPMessage.TypeID.audio || stream.typeID == RTMPMessage.TypeID.video),
               stream.length > Self.maxAssembled {
                throw Error.messageTooLong(stream.length)
            }
        }
        streams[csid] = stream
        current = csid
        chunkLeft = min(chunkSize, stream.remaining)
        if stream.remaining == 0 { try complete(csid, onMessage) }
        return at
    }

    private mutating func payload(_ p: UnsafePointer<UInt8>, _ count: Int, _ onMessage: (Message) throws -> Void) throws {
        let csid = current
        let done = streams[csid].length - streams[csid].remaining
        if streams[csid].typeID == RTMPMessage.TypeID.audio || streams[csid].typeID == RTMPMessage.TypeID.video {
            if done == 0 { streams[csid].head.0 = p[0] }
            if done <= 1, done + count >= 2 { streams[csid].head.1 = p[1 - done] }
        } else {
            streams[csid].payload.append(contentsOf: UnsafeBufferPointer(start: p, count: count))
        }
        streams[csid].remaining -= count
        chunkLeft -= count
        if streams[csid].remaining == 0 {
            chunkLeft = 0
            try complete(csid, onMessage)
        }
    }

    private mutating func complete(_ csid: Int, _ onMessage: (Message) throws -> Void) throws {
        let stream = streams[csid]
        let message = Message(chunkStreamID: csid, typeID: stream.typeID, messageStreamID: stream.messageStreamID,
                              timestamp: stream.timestamp, length: stream.length, head: stream.head,
                              payload: stream.payload)
        switch stream.typeID {
        case RTMPMessage.TypeID.setChunkSize where stream.payload.count >= 4:
            let size = Int(stream.payload[0] & 0x7F) << 24 | Int(stream.payload[1]) << 16
                | Int(stream.payload[2]) << 8 | Int(stream.payload[3])
            chunkSize = max(1, size)
        case RTMPMessage.TypeID.abort where stream.payload.count >= 4:
            let target = Int(stream.payload[0]) << 24 | Int(stream.payload[1]) << 16
                | Int(stream.payload[2]) << 8 | Int(stream.payload[3])
            if target < streams.count { streams[target].remaining = 0 }
        default:
            break
        }
        try onMessage(message)
    }
}
