/// An AMF0 data message (type 18, RTMP 1.0 §7.1.2): the stream metadata a publisher
/// sets with `@setDataFrame` and players receive as `onMetaData`.
public enum RTMPData: Equatable, Sendable {
    /// `@setDataFrame`, the handler name (normally "onMetaData") and the metadata: what
    /// a publisher sends; the server stores it and relays it without the first string.
    case setDataFrame(handler: String, metadata: RTMPStreamMetadata)
    /// `onMetaData` and the metadata: what a player receives.
    case onMetaData(RTMPStreamMetadata)
    /// Any other data message (`|RtmpSampleAccess`, `onTextData`…).
    case other([AMF0Value])

    /// Reads a data message from its AMF0 values. The metadata may be an ECMA array
    /// (ffmpeg, OBS) or an object (some encoders); both are accepted.
    public init(decoding values: [AMF0Value]) throws {
        switch values.first?.stringValue {
        case "@setDataFrame":
            if values.count >= 3, let handler = values[1].stringValue, let object = values[2].objectValue {
                self = .setDataFrame(handler: handler, metadata: RTMPStreamMetadata(object))
            } else {
                self = .other(values)
            }
        case "onMetaData":
            if values.count >= 2, let object = values[1].objectValue {
                self = .onMetaData(RTMPStreamMetadata(object))
            } else {
                self = .other(values)
            }
        default:
            self = .other(values)
        }
    }

    public var values: [AMF0Value] {
        switch self {
        case .setDataFrame(let handler, let metadata): ["@setDataFrame", .string(handler), .ecmaArray(metadata.object)]
        case .onMetaData(let metadata): ["onMetaData", .ecmaArray(metadata.object)]
        case .other(let values): values
        }
    }

    /// The metadata, from either form.
    public var metadata: RTMPStreamMetadata? {
        switch self {
        case .setDataFrame(_, let metadata), .onMetaData(let metadata): metadata
        case .other: nil
        }
    }

    /// What a server relays to players: `@setDataFrame` becomes the handler call itself.
    public var forPlayers: RTMPData {
        if case .setDataFrame(let handler, let metadata) = self, handler == "onMetaData" { return .onMetaData(metadata) }
        return self
    }
}
