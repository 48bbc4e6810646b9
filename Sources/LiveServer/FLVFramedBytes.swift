import LiveNet
import LiveRTMP

/// One piece of an FLV stream (the file header, or one tag with its PreviousTagSize)
/// laid out once for every framing the relay's FLV viewers use, so that one buffer is
/// queued on all their connections without a copy:
///
///     [chunk-size line: 8 hex digits, CRLF][WebSocket frame head, right-aligned in 10 bytes][body][CRLF]
///
/// - chunked HTTP sends the size line and then body + CRLF (two ranges; leading zeros
///   in a chunk size are allowed, RFC 9112 §7.1),
/// - HTTP until close sends the body alone,
/// - the WebSocket feed sends the frame head and the body: one binary message.
///
/// Pure: bytes in, bytes out.
struct FLVFramedBytes: Sendable {
    /// The chunk-size line's length, and the room kept for a WebSocket frame head.
    static let sizeLineLength = 10
    static let bodyStart = sizeLineLength + WebSocketFrame.maxUnmaskedHeadSize

    let buffer: SharedBytes

    /// Frames `body` (at most `FLVTagWriter.maxPayloadSize` plus a tag's overhead, far
    /// below the eight hex digits' limit).
    init(body: some Collection<UInt8>) {
        let count = body.count
        precondition(count < 1 << 32, "an FLV piece fits a chunk size of eight hex digits")
        var head: [UInt8] = []
        WebSocketFrame.appendHead(opcode: .binary, payloadLength: count, to: &head)
        var bytes = Array(Self.hex8(count).utf8) + [0x0D, 0x0A]
        bytes += [UInt8](repeating: 0, count: WebSocketFrame.maxUnmaskedHeadSize - head.count) + head
        bytes += body
        bytes += [0x0D, 0x0A]
        buffer = SharedBytes(bytes)
    }

    /// Wraps a buffer made by `init(body:)`.
    init(buffer: SharedBytes) { self.buffer = buffer }

    /// The body: an FLV header or tag as `FLVTagWriter` made it.
    var body: Range<Int> { Self.bodyStart..<(buffer.count - 2) }

    /// What a chunked HTTP response sends: the size line, then the body and its CRLF.
    var chunkRanges: [Range<Int>] { [0..<Self.sizeLineLength, Self.bodyStart..<buffer.count] }

    /// One unmasked binary WebSocket frame carrying the body.
    var webSocketFrame: Range<Int> {
        let length = body.count
        let headSize = length < 126 ? 2 : length <= 0xFFFF ? 4 : 10
        return (Self.bodyStart - headSize)..<body.upperBound
    }

    /// The FLV file header (with PreviousTagSize0), framed.
    static func header(hasAudio: Bool, hasVideo: Bool) -> FLVFramedBytes {
        FLVFramedBytes(body: FLVTagWriter.header(hasAudio: hasAudio, hasVideo: hasVideo))
    }

    /// A relayed message as a tag, framed; nil for a message no FLV tag carries (a type
    /// other than audio, video and AMF0 data, or a payload too large for a tag).
    static func tag(_ raw: RTMPRawMessage) -> FLVFramedBytes? {
        guard [FLVTagWriter.TagType.audio, FLVTagWriter.TagType.video, FLVTagWriter.TagType.script].contains(raw.typeID),
              let tag = FLVTagWriter.tag(type: raw.typeID, timestamp: raw.timestamp, payload: raw.payload)
        else { return nil }
        return FLVFramedBytes(body: tag)
    }

    /// The last chunk of a chunked body (RFC 9112 §7.1): no trailers.
    static let lastChunk = SharedBytes(Array("0\r\n\r\n".utf8))

    static func hex8(_ value: Int) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, 8 - digits.count)) + digits
    }
}
