/// Decodes WebSocket frames (RFC 6455 §5.2) from bytes as they arrive: `append` what the
/// socket gave, then call `next()` until it returns nil (more bytes needed). Pure: no
/// socket, clock or thread.
///
/// A server's decoder (`requireMask`) refuses unmasked frames and a client's refuses
/// masked ones (§5.1); a frame announcing more than `maxPayload` bytes is refused as
/// soon as its header is read, before any of its payload is buffered.
public struct WebSocketFrameDecoder: Sendable {
    public let requireMask: Bool
    public let maxPayload: Int
    private var buffer: [UInt8] = []
    private var readIndex = 0

    /// `requireMask`: true on the server side, false on the client side.
    public init(requireMask: Bool, maxPayload: Int = 1 << 20) {
        self.requireMask = requireMask
        self.maxPayload = maxPayload
    }

    /// Bytes received but not yet decoded.
    public var bufferedCount: Int { buffer.count - readIndex }

    public mutating func append<Bytes: Sequence>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        if readIndex > 0, readIndex >= buffer.count / 2 {
            buffer.removeFirst(readIndex)
            readIndex = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// The next complete frame, nil when more bytes are needed; throws on a frame that
    /// breaks the protocol or the size limit (the connection must then be closed).
    public mutating func next() throws(WebSocketError) -> WebSocketFrame? {
        let available = buffer.count - readIndex
        guard available >= 2 else { return nil }
        let first = buffer[readIndex], second = buffer[readIndex + 1]
        guard first & 0x70 == 0 else { throw .protocolViolation("reserved bits set without a negotiated extension") }
        guard let opcode = WebSocketFrame.Opcode(rawValue: first & 0x0F) else {
            throw .protocolViolation("reserved opcode \(first & 0x0F)")
        }
        let fin = first & 0x80 != 0
        let masked = second & 0x80 != 0
        if masked != requireMask {
            throw .protocolViolation(requireMask ? "a client frame must be masked" : "a server frame must not be masked")
        }
        var headerLength = 2
        var length = UInt64(second & 0x7F)
        if length == 126 {
            guard available >= 4 else { return nil }
            length = UInt64(buffer[readIndex + 2]) << 8 | UInt64(buffer[readIndex + 3])
            headerLength = 4
        } else if length == 127 {
            guard available >= 10 else { return nil }
            length = 0
            for index in 2..<10 { length = length << 8 | UInt64(buffer[readIndex + index]) }
            guard length >> 63 == 0 else { throw .protocolViolation("64-bit length with the most significant bit set") }
            headerLength = 10
        }
        if opcode.isControl {
            guard fin else { throw .protocolViolation("fragmented \(opcode) frame") }
            guard length <= UInt64(WebSocketFrame.maxControlPayload) else {
                throw .protocolViolation("\(opcode) frame of \(length) bytes (control frames hold at most 125)")
            }
        }
        guard length <= UInt64(maxPayload) else { throw .tooBig(length: length, limit: maxPayload) }
        let maskOffset = readIndex + headerLength
        if masked { headerLength += 4 }
        let total = headerLength + Int(length)
        guard available >= total else { return nil }
        let start = readIndex + headerLength
        var payload = Array(buffer[start..<(start + Int(length))])
        if masked {
            let key = (buffer[maskOffset], buffer[maskOffset + 1], buffer[maskOffset + 2], buffer[maskOffset + 3])
            payload.withUnsafeMutableBufferPointer { bytes in
                for index in 0..<bytes.count {
                    switch index & 3 {
                    case 0: bytes[index] ^= key.0
                    case 1: bytes[index] ^= key.1
                    case 2: bytes[index] ^= key.2
                    default: bytes[index] ^= key.3
                    }
                }
            }
        }
        readIndex += total
        if readIndex == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            readIndex = 0
        }
        return WebSocketFrame(fin: fin, opcode: opcode, payload: payload)
    }
}
