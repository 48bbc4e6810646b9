/// One WebSocket frame (RFC 6455 §5.2) with its payload unmasked.
public struct WebSocketFrame: Equatable, Sendable {
    /// The frame's opcode (§5.2); 3-7 and 11-15 are reserved and refused by the decoder.
    public enum Opcode: UInt8, Sendable {
        case continuation = 0x0, text = 0x1, binary = 0x2, close = 0x8, ping = 0x9, pong = 0xA

        /// Close, ping and pong (§5.5): never fragmented, payload at most 125 bytes.
        public var isControl: Bool { rawValue & 0x8 != 0 }
    }

    /// Largest payload of a control frame (§5.5).
    public static let maxControlPayload = 125

    public var fin: Bool
    public var opcode: Opcode
    public var payload: [UInt8]

    public init(fin: Bool = true, opcode: Opcode, payload: [UInt8] = []) {
        self.fin = fin
        self.opcode = opcode
        self.payload = payload
    }

    /// A close frame carrying `code` and a UTF-8 `reason` (§5.5.1), cut to fit 125 bytes.
    public static func close(code: UInt16, reason: String = "") -> WebSocketFrame {
        var payload = [UInt8(code >> 8), UInt8(truncatingIfNeeded: code)]
        payload += Array(reason.utf8.prefix(maxControlPayload - 2))
        return WebSocketFrame(opcode: .close, payload: payload)
    }

    /// The frame as wire bytes. A client masks every frame it sends (§5.3) with a fresh
    /// `maskingKey`; a server sends `nil`.
    public func encoded(maskingKey: [UInt8]? = nil) -> [UInt8] {
        precondition(maskingKey == nil || maskingKey!.count == 4, "a masking key has 4 bytes")
        var bytes: [UInt8] = []
        bytes.reserveCapacity(payload.count + 14)
        Self.appendHead(fin: fin, opcode: opcode, payloadLength: payload.count, masked: maskingKey != nil, to: &bytes)
        if let key = maskingKey {
            bytes += key
            for (index, byte) in payload.enumerated() { bytes.append(byte ^ key[index & 3]) }
        } else {
            bytes += payload
        }
        return bytes
    }

    /// The most bytes a frame's head takes before its payload (no mask key): 2, 4 or 10.
    public static let maxUnmaskedHeadSize = 10

    /// Appends a frame's head (§5.2): FIN and opcode, the mask bit and the payload
    /// length; a masked frame's key follows it (the caller's). A server's frames are
    /// unmasked, so a head made once serves every connection sending that payload.
    public static func appendHead(fin: Bool = true, opcode: Opcode, payloadLength length: Int, masked: Bool = false,
                                  to bytes: inout [UInt8]) {
        precondition(length >= 0, "a payload length cannot be negative")
        bytes.append((fin ? 0x80 : 0) | opcode.rawValue)
        let maskBit: UInt8 = masked ? 0x80 : 0
        if length < 126 {
            bytes.append(maskBit | UInt8(length))
        } else if length <= 0xFFFF {
            bytes += [maskBit | 126, UInt8(length >> 8), UInt8(length & 0xFF)]
        } else {
            bytes.append(maskBit | 127)
            for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: UInt64(length) >> UInt64(shift))) }
        }
    }
}
