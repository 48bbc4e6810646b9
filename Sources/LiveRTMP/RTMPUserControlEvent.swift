/// A User Control message (type 4, RTMP 1.0 §6.2 / §7.1.7): a 16-bit event type and
/// its data.
public enum RTMPUserControlEvent: Equatable, Sendable {
    /// 0: the stream became functional (sent after a successful play or publish).
    case streamBegin(streamID: UInt32)
    /// 1: playback of the stream ended.
    case streamEOF(streamID: UInt32)
    /// 2: no more data on the stream for now.
    case streamDry(streamID: UInt32)
    /// 3: the client's buffer length in milliseconds for a stream.
    case setBufferLength(streamID: UInt32, milliseconds: UInt32)
    /// 4: the stream is a recorded one.
    case streamIsRecorded(streamID: UInt32)
    /// 6: the server asks for a ping response with this timestamp.
    case pingRequest(timestamp: UInt32)
    /// 7: the answer to a ping request, echoing its timestamp.
    case pingResponse(timestamp: UInt32)
    /// Any other event (e.g. SWF verification, 26/27), kept as raw bytes.
    case other(eventType: UInt16, data: [UInt8])

    /// Why a User Control payload cannot be read.
    public enum Error: Swift.Error, CustomStringConvertible, Equatable, Sendable {
        case truncated(eventType: UInt16?, length: Int)

        public var description: String {
            switch self {
            case .truncated(let type, let length):
                "RTMP user control message: \(length)-byte payload too short for event \(type.map(String.init) ?? "type")"
            }
        }
    }

    public var eventType: UInt16 {
        switch self {
        case .streamBegin: 0
        case .streamEOF: 1
        case .streamDry: 2
        case .setBufferLength: 3
        case .streamIsRecorded: 4
        case .pingRequest: 6
        case .pingResponse: 7
        case .other(let type, _): type
        }
    }

    /// Reads the payload of a type-4 message.
    public init(decoding payload: [UInt8]) throws {
        guard payload.count >= 2 else { throw Error.truncated(eventType: nil, length: payload.count) }
        let type = UInt16(payload[0]) << 8 | UInt16(payload[1])
        func word(_ index: Int) throws -> UInt32 {
            let at = 2 + index * 4
            guard payload.count >= at + 4 else { throw Error.truncated(eventType: type, length: payload.count) }
            return UInt32(payload[at]) << 24 | UInt32(payload[at + 1]) << 16 | UInt32(payload[at + 2]) << 8 | UInt32(payload[at + 3])
        }
        switch type {
        case 0: self = .streamBegin(streamID: try word(0))
        case 1: self = .streamEOF(streamID: try word(0))
        case 2: self = .streamDry(streamID: try word(0))
        case 3: self = .setBufferLength(streamID: try word(0), milliseconds: try word(1))
        case 4: self = .streamIsRecorded(streamID: try word(0))
        case 6: self = .pingRequest(timestamp: try word(0))
        case 7: self = .pingResponse(timestamp: try word(0))
        default: self = .other(eventType: type, data: Array(payload.dropFirst(2)))
        }
    }

    /// The payload of a type-4 message.
    public var payload: [UInt8] {
        var out = [UInt8(eventType >> 8), UInt8(eventType & 0xFF)]
        func word(_ v: UInt32) { out += [UInt8(v >> 24), UInt8((v >> 16) & 0xFF), UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)] }
        switch self {
        case .streamBegin(let id), .streamEOF(let id), .streamDry(let id), .streamIsRecorded(let id): word(id)
        case .setBufferLength(let id, let ms): word(id); word(ms)
        case .pingRequest(let t), .pingResponse(let t): word(t)
        case .other(_, let data): out += data
        }
        return out
    }
}
