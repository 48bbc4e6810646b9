/// Joins fragmented data frames into messages (RFC 6455 §5.4) while control frames
/// pass straight through, even between the fragments of a message. Pure.
public struct WebSocketMessageAssembler: Sendable {
    /// A message longer than this (all fragments together) is refused.
    public let maxMessage: Int
    private var pendingOpcode: WebSocketFrame.Opcode?
    private var pending: [UInt8] = []

    public init(maxMessage: Int = 1 << 20) {
        self.maxMessage = maxMessage
    }

    /// The message `frame` completes, nil while a fragmented message is still open.
    public mutating func push(_ frame: WebSocketFrame) throws(WebSocketError) -> WebSocketMessage? {
        switch frame.opcode {
        case .ping: return .ping(frame.payload)
        case .pong: return .pong(frame.payload)
        case .close: return try Self.close(frame.payload)
        case .text, .binary:
            guard pendingOpcode == nil else { throw .protocolViolation("a new \(frame.opcode) message inside a fragmented one") }
            if frame.fin { return try Self.message(frame.opcode, frame.payload, limit: maxMessage) }
            try checkLimit(frame.payload.count)
            pendingOpcode = frame.opcode
            pending = frame.payload
            return nil
        case .continuation:
            guard let opcode = pendingOpcode else { throw .protocolViolation("a continuation frame with no message to continue") }
            try checkLimit(pending.count + frame.payload.count)
            pending += frame.payload
            guard frame.fin else { return nil }
            let payload = pending
            pending = []
            pendingOpcode = nil
            return try Self.message(opcode, payload, limit: maxMessage)
        }
    }

    private func checkLimit(_ length: Int) throws(WebSocketError) {
        if length > maxMessage { throw .tooBig(length: UInt64(length), limit: maxMessage) }
    }

    private static func message(_ opcode: WebSocketFrame.Opcode, _ payload: [UInt8], limit: Int) throws(WebSocketError) -> WebSocketMessage {
        if payload.count > limit { throw .tooBig(length: UInt64(payload.count), limit: limit) }
        guard opcode == .text else { return .binary(payload) }
        guard let text = String(validating: payload, as: UTF8.self) else { throw .invalidText }
        return .text(text)
    }

    private static func close(_ payload: [UInt8]) throws(WebSocketError) -> WebSocketMessage {
        if payload.isEmpty { return .close(code: nil, reason: "") }
        guard payload.count >= 2 else { throw .protocolViolation("a close frame with a 1-byte payload") }
        let code = UInt16(payload[0]) << 8 | UInt16(payload[1])
        // §7.4: 1005, 1006 and 1015 only describe a close locally, and codes below 1000
        // or in the unassigned 1016-2999 are not for the wire; echoing one back would
        // send it ourselves.
        guard (1000...1003).contains(code) || (1007...1014).contains(code) || (3000...4999).contains(code) else {
            throw .protocolViolation("close code \(code) may not be sent")
        }
        guard let reason = String(validating: payload[2...], as: UTF8.self) else { throw .invalidText }
        return .close(code: code, reason: reason)
    }
}
