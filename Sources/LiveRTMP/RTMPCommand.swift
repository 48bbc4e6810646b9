/// An AMF0 command message (type 20, RTMP 1.0 §7.1.1 / §7.2): name, transaction id,
/// command object and arguments, typed for the commands publishers, players and
/// servers exchange (as ffmpeg's rtmpproto.c and nginx-rtmp send them).
public enum RTMPCommand: Equatable, Sendable {
    /// `connect` (§7.2.1.1); extra arguments after the command object are kept.
    case connect(transactionID: Double, RTMPConnectParameters, arguments: [AMF0Value] = [])
    /// `_result`: the answer to a command; for createStream `information` is the stream id.
    case result(transactionID: Double, properties: AMF0Value, information: AMF0Value)
    /// `_error`: a failed command.
    case error(transactionID: Double, properties: AMF0Value, information: AMF0Value)
    /// `releaseStream` (FMLE/ffmpeg, before publishing).
    case releaseStream(transactionID: Double, streamName: String)
    /// `FCPublish` (FMLE/ffmpeg, before publishing).
    case fcPublish(transactionID: Double, streamName: String)
    /// `FCUnpublish` (when the publisher stops).
    case fcUnpublish(transactionID: Double, streamName: String)
    /// `createStream` (§7.2.1.3).
    case createStream(transactionID: Double)
    /// `deleteStream` (§7.2.2.3).
    case deleteStream(transactionID: Double, streamID: Double)
    /// `deleteStream` naming the stream instead of giving its id, as GStreamer's rtmp2sink
    /// sends it (on message stream 0, after FCUnpublish). nginx-rtmp accepts it too.
    case deleteStreamNamed(transactionID: Double, streamName: String)
    /// `closeStream`: on the message stream being closed.
    case closeStream(transactionID: Double)
    /// `publish` (§7.2.2.6), sent on the message stream createStream returned.
    case publish(transactionID: Double, streamName: String, type: RTMPPublishType)
    /// `play` (§7.2.2.1): start −2 live-or-recorded, −1 live only, ≥ 0 seconds into a
    /// recording; duration −1 to the end; reset flushes earlier playlists.
    case play(transactionID: Double, streamName: String, start: Double = -2, duration: Double = -1, reset: Bool = true)
    /// `getStreamLength` (ffmpeg asks it before playing).
    case getStreamLength(transactionID: Double, streamName: String)
    /// `onStatus` (§7.2.2): transaction id 0, a null command object and the status.
    case onStatus(RTMPStatus)
    /// `onFCPublish`: the answer to FCPublish some servers send.
    case onFCPublish(RTMPStatus)
    /// `onFCUnpublish`.
    case onFCUnpublish(RTMPStatus)
    /// Any other command (`_checkbw`, `onBWDone`…).
    case other(name: String, transactionID: Double, commandObject: AMF0Value, arguments: [AMF0Value])

    /// Why a command message cannot be read.
    public enum Error: Swift.Error, CustomStringConvertible, Equatable, Sendable {
        /// The message does not start with a string (the command name).
        case missingName
        /// A known command without a required argument.
        case missingArgument(command: String, argument: String)

        public var description: String {
            switch self {
            case .missingName: "RTMP command: the command message does not start with a name string"
            case .missingArgument(let command, let argument): "RTMP command: \(command) without its \(argument)"
            }
        }
    }

    /// Reads a command from the AMF0 values of a message.
    public init(decoding values: [AMF0Value]) throws {
        guard let name = values.first?.stringValue else { throw Error.missingName }
        let transactionID = values.count > 1 ? values[1].numberValue ?? 0 : 0
        let commandObject = values.count > 2 ? values[2] : .null
        let arguments = Array(values.dropFirst(3))
        func string(_ index: Int, _ what: String) throws -> String {
            guard index < arguments.count, let s = arguments[index].stringValue else {
                throw Error.missingArgument(command: name, argument: what)
            }
            return s
        }
        func status() -> RTMPStatus { RTMPStatus(arguments.first?.objectValue ?? AMF0Object()) }
        switch name {
        case "connect":
            self = .connect(transactionID: transactionID, RTMPConnectParameters(commandObject.objectValue ?? AMF0Object()),
                            arguments: arguments)
        case "_result":
            self = .result(transactionID: transactionID, properties: commandObject, information: arguments.first ?? .undefined)
        case "_error":
            self = .error(transactionID: transactionID, properties: commandObject, information: arguments.first ?? .undefined)
        case "releaseStream": self = .releaseStream(transactionID: transactionID, streamName: try string(0, "stream name"))
        case "FCPublish": self = .fcPublish(transactionID: transactionID, streamName: try string(0, "stream name"))
        case "FCUnpublish": self = .fcUnpublish(transactionID: transactionID, streamName: try string(0, "stream name"))
        case "createStream": self = .createStream(transactionID: transactionID)
        case "deleteStream":
            // Real clients differ: the stream id (ffmpeg, OBS), its name (GStreamer), or
            // nothing usable, which is kept as `.other` for a server to ignore, as
            // nginx-rtmp does, rather than end the connection over a goodbye.
            if let id = arguments.first?.numberValue {
                self = .deleteStream(transactionID: transactionID, streamID: id)
            } else if let streamName = arguments.first?.stringValue {
                self = .deleteStreamNamed(transactionID: transactionID, streamName: streamName)
            } else {
                self = .other(name: name, transactionID: transactionID, commandObject: commandObject, arguments: arguments)
            }
        case "closeStream": self = .closeStream(transactionID: transactionID)
        case "publish":
            let type = arguments.count > 1 ? arguments[1].stringValue.map(RTMPPublishType.init(rawValue:)) ?? .live : .live
            self = .publish(transactionID: transactionID, streamName: try string(0, "stream name"), type: type)
        case "play":
            self = .play(transactionID: transactionID, streamName: try string(0, "stream name"),
                         start: arguments.count > 1 ? arguments[1].numberValue ?? -2 : -2,
                         duration: arguments.count > 2 ? arguments[2].numberValue ?? -1 : -1,
                         reset: arguments.count > 3 ? arguments[3].booleanValue ?? true : true)
        case "getStreamLength": self = .getStreamLength(transactionID: transactionID, streamName: try string(0, "stream name"))
        case "onStatus": self = .onStatus(status())
        case "onFCPublish": self = .onFCPublish(status())
        case "onFCUnpublish": self = .onFCUnpublish(status())
        default:
            self = .other(name: name, transactionID: transactionID, commandObject: commandObject, arguments: arguments)
        }
    }

    /// The name of the command a type 20 or 17 message carries, read without decoding
    /// anything after it; nil when the message does not start with a string.
    public static func name(ofMessage raw: RTMPRawMessage) -> String? {
        // Type 17 puts a format byte (0: AMF0 follows) before the AMF0 values.
        let skip = raw.typeID == RTMPMessage.TypeID.commandAMF3 ? 1 : 0
        let p = raw.payload
        guard p.count >= skip + 3, skip == 0 || p[0] == 0, p[skip] == AMF0Value.Marker.string.rawValue else { return nil }
        let length = Int(p[skip + 1]) << 8 | Int(p[skip + 2])
        guard p.count - skip - 3 >= length else { return nil }
        return String(decoding: p[(skip + 3)..<(skip + 3 + length)], as: UTF8.self)
    }

    /// The command name on the wire.
    public var name: String {
        switch self {
        case .connect: "connect"
        case .result: "_result"
        case .error: "_error"
        case .releaseStream: "releaseStream"
        case .fcPublish: "FCPublish"
        case .fcUnpublish: "FCUnpublish"
        case .createStream: "createStream"
        case .deleteStream, .deleteStreamNamed: "deleteStream"
        case .closeStream: "closeStream"
        case .publish: "publish"
        case .play: "play"
        case .getStreamLength: "getStreamLength"
        case .onStatus: "onStatus"
        case .onFCPublish: "onFCPublish"
        case .onFCUnpublish: "onFCUnpublish"
        case .other(let name, _, _, _): name
        }
    }

    public var transactionID: Double {
        switch self {
        case .connect(let t, _, _), .result(let t, _, _), .error(let t, _, _), .releaseStream(let t, _), .fcPublish(let t, _),
             .fcUnpublish(let t, _), .createStream(let t), .deleteStream(let t, _), .deleteStreamNamed(let t, _), .closeStream(let t),
             .publish(let t, _, _), .play(let t, _, _, _, _), .getStreamLength(let t, _), .other(_, let t, _, _):
            t
        case .onStatus, .onFCPublish, .onFCUnpublish: 0
        }
    }

    /// Commands that belong to a message stream rather than the connection.
    public var isStreamCommand: Bool {
        switch self {
        case .publish, .play, .closeStream, .onStatus: true
        default: false
        }
    }

    /// The AMF0 values of the message: name, transaction id, command object, arguments.
    public var values: [AMF0Value] {
        let head: [AMF0Value] = [.string(name), .number(transactionID)]
        switch self {
        case .connect(_, let parameters, let arguments): return head + [.object(parameters.object)] + arguments
        case .result(_, let properties, let information), .error(_, let properties, let information):
            return head + [properties, information]
        case .releaseStream(_, let s), .fcPublish(_, let s), .fcUnpublish(_, let s), .getStreamLength(_, let s),
             .deleteStreamNamed(_, let s):
            return head + [.null, .string(s)]
        case .createStream, .closeStream: return head + [.null]
        case .deleteStream(_, let id): return head + [.null, .number(id)]
        case .publish(_, let s, let type): return head + [.null, .string(s), .string(type.rawValue)]
        case .play(_, let s, let start, let duration, let reset):
            return head + [.null, .string(s), .number(start), .number(duration), .boolean(reset)]
        case .onStatus(let status), .onFCPublish(let status), .onFCUnpublish(let status):
            return head + [.null, .object(status.object)]
        case .other(_, _, let commandObject, let arguments): return head + [commandObject] + arguments
        }
    }

    /// For a createStream `_result`: the new message stream id.
    public var createdStreamID: UInt32? {
        guard case .result(_, _, let information) = self, let id = information.numberValue,
              id >= 0, id <= Double(UInt32.max) else { return nil }
        return UInt32(id)
    }

    /// The `_result` of a successful connect, as nginx-rtmp answers it, with `extra`
    /// properties after nginx-rtmp's in the information object (a server's own
    /// announcements; clients that do not know them skip them).
    public static func connectResult(transactionID: Double, objectEncoding: Double = 0,
                                     extra: AMF0Object = AMF0Object()) -> RTMPCommand {
        var information: AMF0Object = ["level": "status", "code": .string(RTMPStatus.Code.connectSuccess),
                                       "description": "Connection succeeded.", "objectEncoding": .number(objectEncoding)]
        for property in extra.properties where information[property.name] == nil {
            information.properties.append(property)
        }
        return .result(transactionID: transactionID,
                       properties: .object(["fmsVer": "FMS/3,0,1,123", "capabilities": 31]),
                       information: .object(information))
    }

    /// The `_result` of createStream carrying the new stream id.
    public static func createStreamResult(transactionID: Double, streamID: UInt32) -> RTMPCommand {
        .result(transactionID: transactionID, properties: .null, information: .number(Double(streamID)))
    }
}
