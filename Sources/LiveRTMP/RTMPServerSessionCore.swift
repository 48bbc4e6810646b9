/// The server side of one RTMP connection after the handshake, as a pure state
/// machine (go-rtmp's and SRS's per-connection handlers, without the socket): bytes in
/// through `feed(_:)`, events out for the server to act on, bytes to send collected in
/// `takeOutput()`.
///
/// It answers what it can alone, in nginx-rtmp's order: connect gets Window
/// Acknowledgement Size, Set Peer Bandwidth, Set Chunk Size and `_result`;
/// createStream gets a stream id; releaseStream, FCPublish, FCUnpublish and
/// getStreamLength get a `_result`; ping requests get a response; acknowledgements go
/// out as the client's window requires. Publish and play need the server's decision:
/// they surface as events and the server calls `acceptPublish` / `rejectPublish` /
/// `acceptPlay` / `rejectPlay`.
///
/// Confined to the connection's event-loop thread.
public struct RTMPServerSessionCore {
    /// What the server answers connect with, and what it accepts from the client.
    public struct Configuration: Sendable {
        /// The chunk size the server sends with (nginx-rtmp: 4096).
        public var chunkSize: Int
        /// Window Acknowledgement Size and Set Peer Bandwidth (nginx-rtmp: 5000000).
        public var windowAcknowledgementSize: UInt32
        /// The longest audio, video or aggregate message (`RTMPChunkDecoder`).
        public var maxMessageLength: Int
        /// The longest command, data or control message (`RTMPChunkDecoder`).
        public var maxCommandMessageLength: Int
        /// The most chunk streams of one connection (`RTMPChunkDecoder`).
        public var maxChunkStreams: Int
        /// The most bytes unfinished messages and undecoded input may hold (`RTMPChunkDecoder`).
        public var maxUnfinishedBytes: Int
        /// The longest app or stream name, in UTF-8 bytes, without the query.
        public var maxNameLength: Int
        /// The longest query (after '?') on an app or stream name, in bytes.
        public var maxQueryLength: Int
        /// Properties added to the information object of connect's `_result` (the relay
        /// announces its co-host line signaling address there).
        public var connectAnnouncement = AMF0Object()

        public init(chunkSize: Int = 4096, windowAcknowledgementSize: UInt32 = 5_000_000,
                    maxMessageLength: Int = RTMPChunkDecoder.defaultMaxMessageLength,
                    maxCommandMessageLength: Int = RTMPChunkDecoder.defaultMaxCommandMessageLength,
                    maxChunkStreams: Int = RTMPChunkDecoder.defaultMaxChunkStreams,
                    maxUnfinishedBytes: Int = RTMPChunkDecoder.defaultMaxUnfinishedBytes,
                    maxNameLength: Int = 256, maxQueryLength: Int = 4096)
        {
            self.chunkSize = chunkSize
            self.windowAcknowledgementSize = windowAcknowledgementSize
            self.maxMessageLength = maxMessageLength
            self.maxCommandMessageLength = maxCommandMessageLength
            self.maxChunkStreams = maxChunkStreams
            self.maxUnfinishedBytes = maxUnfinishedBytes
            self.maxNameLength = maxNameLength
            self.maxQueryLength = maxQueryLength
        }

        /// Why `name` (app or stream, query included) is refused; nil when it is fine:
        /// 1…`maxNameLength` bytes without control characters, a query of at most
        /// `maxQueryLength` bytes.
        public func refusal(ofName fullName: String, kind: String) -> String? {
            let (name, query) = RTMPURL.splitQuery(fullName)
            if name.isEmpty { return "empty \(kind) name" }
            if name.utf8.count > maxNameLength { return "\(kind) name longer than \(maxNameLength) bytes" }
            if name.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
                return "\(kind) name with control characters"
            }
            if let query, query.utf8.count > maxQueryLength { return "query longer than \(maxQueryLength) bytes" }
            return nil
        }
    }

    /// What happened on the connection that the server must know.
    public enum Event: Equatable, Sendable {
        /// connect was answered with success.
        case connected(RTMPConnectParameters)
        /// The client wants to publish `name` (query split off) on `streamID`; answer
        /// with `acceptPublish` or `rejectPublish`.
        case publishRequested(streamID: UInt32, name: String, query: String?, type: RTMPPublishType)
        /// The client wants to play `name`; answer with `acceptPlay` or `rejectPlay`.
        case playRequested(streamID: UInt32, name: String, query: String?)
        /// Metadata from the publisher, in the form players get (`onMetaData`).
        case metadata(streamID: UInt32, RTMPData, RTMPRawMessage)
        /// An audio or video message from the publisher, as received, to relay.
        case media(RTMPRawMessage)
        /// The publisher stopped (FCUnpublish, closeStream or deleteStream of its stream,
        /// by id or, as GStreamer sends it, by name).
        case unpublished(streamID: UInt32, name: String)
        /// A player's stream was closed or deleted.
        case playStopped(streamID: UInt32, name: String)
        /// The client acknowledged this many bytes (modulo 2³²).
        case acknowledged(UInt32)
        /// The client announced its buffer length for a stream.
        case bufferLength(streamID: UInt32, milliseconds: UInt32)
        /// The client answered a ping request sent with `send(.userControl(.pingRequest…))`.
        case pingResponse(timestamp: UInt32)
    }

    /// Why the connection must be closed.
    public enum Error: Swift.Error, CustomStringConvertible, Equatable, Sendable {
        /// A command other than connect first; its name as `excerpt(_:)` makes it printable.
        case commandBeforeConnect(String)
        case tooManyStreams(limit: Int)
        /// A second connect on a connected connection.
        case repeatedConnect

        public var description: String {
            switch self {
            case .commandBeforeConnect(let name): "RTMP session: \(name) before connect"
            case .repeatedConnect: "RTMP session: connect on a connection that is connected already"
            case .tooManyStreams(let limit): "RTMP session: more than \(limit) streams on one connection"
            }
        }
    }

    private enum StreamRole: Equatable {
        case created
        case publishRequested(String), publishing(String)
        case playRequested(String), playing(String)
    }

    public let configuration: Configuration
    public private(set) var decoder: RTMPChunkDecoder
    private var encoder = RTMPChunkEncoder()
    private var output: [UInt8] = []
    public private(set) var connectParameters: RTMPConnectParameters?
    private var streams: [UInt32: StreamRole] = [:]
    private var nextStreamID: UInt32 = 1
    /// The most message streams one connection may create.
    public static let maxStreams = 16

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        decoder = RTMPChunkDecoder(maxMessageLength: configuration.maxMessageLength,
                                   maxCommandMessageLength: configuration.maxCommandMessageLength,
                                   maxChunkStreams: configuration.maxChunkStreams,
                                   maxUnfinishedBytes: configuration.maxUnfinishedBytes)
    }

    /// True once connect succeeded.
    public var isConnected: Bool { connectParameters != nil }

    /// The chunk size of what this side sends (after connect: the configured one).
    public var outgoingChunkSize: Int { encoder.chunkSize }

    /// Takes the bytes to send, leaving the buffer empty.
    public mutating func takeOutput() -> [UInt8] {
        defer { output = [] }
        return output
    }

    /// Bytes waiting in `takeOutput()`.
    public var pendingOutputCount: Int { output.count }

    /// Feeds received bytes; returns the events of every message they complete.
    public mutating func feed<Bytes: Collection>(_ bytes: Bytes) throws -> [Event] where Bytes.Element == UInt8 {
        decoder.feed(bytes)
        var events: [Event] = []
        while let raw = try decoder.nextMessage() {
            try handle(raw, events: &events)
        }
        if let sequence = decoder.acknowledgementDue {
            try send(.acknowledgement(sequenceNumber: sequence))
            decoder.acknowledgementSent()
        }
        return events
    }

    /// Sends a typed message through this connection's encoder.
    public mutating func send(_ message: RTMPMessage, timestamp: UInt32 = 0, messageStreamID: UInt32 = 0) throws {
        try encoder.append(try message.raw(timestamp: timestamp, messageStreamID: messageStreamID), to: &output)
    }

    /// Sends a raw message through this connection's encoder.
    public mutating func send(_ raw: RTMPRawMessage) throws {
        try encoder.append(raw, to: &output)
    }

    /// Records that bytes made elsewhere (`RTMPChunkEncoder.appendSelfContained`, shared
    /// among players) were sent on `chunkStreamID`, so this encoder's next header there
    /// is a full one.
    public mutating func didSendSelfContained(onChunkStreamID chunkStreamID: UInt32) {
        encoder.forget(chunkStreamID: chunkStreamID)
    }

    // MARK: - Decisions

    /// Starts publishing on `streamID`: onStatus NetStream.Publish.Start.
    public mutating func acceptPublish(streamID: UInt32) throws {
        guard case .publishRequested(let name) = streams[streamID] else { return }
        streams[streamID] = .publishing(name)
        try sendStatus(RTMPStatus(code: RTMPStatus.Code.publishStart, description: "Start publishing"), streamID: streamID)
    }

    /// Refuses a publish: onStatus at level error (NetStream.Publish.BadName by default).
    public mutating func rejectPublish(streamID: UInt32, code: String = RTMPStatus.Code.publishBadName,
                                       description: String = "Already publishing") throws
    {
        guard case .publishRequested = streams[streamID] else { return }
        streams[streamID] = .created
        try sendStatus(RTMPStatus(level: "error", code: code, description: description), streamID: streamID)
    }

    /// Starts playing on `streamID`: Stream Begin, onStatus Play.Reset and Play.Start,
    /// and `|RtmpSampleAccess`, as nginx-rtmp sends them.
    public mutating func acceptPlay(streamID: UInt32) throws {
        guard case .playRequested(let name) = streams[streamID] else { return }
        streams[streamID] = .playing(name)
        try send(.userControl(.streamBegin(streamID: streamID)))
        try sendStatus(RTMPStatus(code: RTMPStatus.Code.playReset, description: "Playing and resetting \(name)."), streamID: streamID)
        try sendStatus(RTMPStatus(code: RTMPStatus.Code.playStart, description: "Started playing \(name)."), streamID: streamID)
        try send(.data(.other(["|RtmpSampleAccess", true, true])), messageStreamID: streamID)
    }

    /// Refuses a play: onStatus at level error (NetStream.Play.StreamNotFound by default).
    public mutating func rejectPlay(streamID: UInt32, code: String = RTMPStatus.Code.playStreamNotFound,
                                    description: String = "No such stream") throws
    {
        guard case .playRequested = streams[streamID] else { return }
        streams[streamID] = .created
        try sendStatus(RTMPStatus(level: "error", code: code, description: description), streamID: streamID)
    }

    /// Tells a player its stream's publisher left: Stream EOF and onStatus
    /// NetStream.Play.UnpublishNotify.
    public mutating func notifyUnpublished(streamID: UInt32) throws {
        guard case .playing(let name) = streams[streamID] else { return }
        try send(.userControl(.streamEOF(streamID: streamID)))
        try sendStatus(RTMPStatus(code: RTMPStatus.Code.playUnpublishNotify, description: "\(name) is now unpublished."),
                       streamID: streamID)
    }

    // MARK: - Handling

    private mutating func sendStatus(_ status: RTMPStatus, streamID: UInt32) throws {
        try send(.command(.onStatus(status)), messageStreamID: streamID)
    }

    private mutating func handle(_ raw: RTMPRawMessage, events: inout [Event]) throws {
        // Nothing is decoded before the state allows it: media and metadata only on a
        // stream this connection publishes, and before connect only connect itself.
        switch raw.typeID {
        case RTMPMessage.TypeID.audio, RTMPMessage.TypeID.video, RTMPMessage.TypeID.aggregate,
             RTMPMessage.TypeID.dataAMF0, RTMPMessage.TypeID.dataAMF3:
            guard case .publishing = streams[raw.messageStreamID] else { return }
        case RTMPMessage.TypeID.commandAMF0, RTMPMessage.TypeID.commandAMF3:
            if !isConnected {
                let name = RTMPCommand.name(ofMessage: raw)
                guard name == "connect" else { throw Error.commandBeforeConnect(name.map(Self.excerpt) ?? "a command without a name") }
            }
        default:
            break
        }
        let message = try RTMPMessage(decoding: raw)
        switch message {
        case .userControl(.pingRequest(let timestamp)):
            try send(.userControl(.pingResponse(timestamp: timestamp)))
        case .userControl(.setBufferLength(let id, let ms)):
            events.append(.bufferLength(streamID: id, milliseconds: ms))
        case .userControl(.pingResponse(let timestamp)):
            events.append(.pingResponse(timestamp: timestamp))
        case .acknowledgement(let n):
            events.append(.acknowledged(n))
        case .audio, .video:
            if case .publishing = streams[raw.messageStreamID] { events.append(.media(raw)) }
        case .data(let data):
            if case .publishing = streams[raw.messageStreamID] {
                events.append(.metadata(streamID: raw.messageStreamID, data.forPlayers, raw))
            }
        case .aggregate(let parts):
            for part in parts where part.typeID == RTMPMessage.TypeID.audio || part.typeID == RTMPMessage.TypeID.video {
                if case .publishing = streams[raw.messageStreamID] { events.append(.media(part)) }
            }
        case .command(let command):
            try handle(command, on: raw.messageStreamID, events: &events)
        default:
            break
        }
    }

    private mutating func handle(_ command: RTMPCommand, on messageStreamID: UInt32, events: inout [Event]) throws {
        if case .connect(let transactionID, let parameters, _) = command {
            guard !isConnected else { throw Error.repeatedConnect }
            if let refusal = configuration.refusal(ofName: parameters.app ?? "", kind: "app") {
                try send(.command(.error(transactionID: transactionID, properties: .null,
                                         information: .object(RTMPStatus(level: "error", code: RTMPStatus.Code.connectRejected,
                                                                         description: refusal).object))))
                return
            }
            try send(.windowAcknowledgementSize(configuration.windowAcknowledgementSize))
            try send(.setPeerBandwidth(size: configuration.windowAcknowledgementSize, limit: .dynamic))
            try send(.setChunkSize(UInt32(configuration.chunkSize)))
            try encoder.setChunkSize(configuration.chunkSize)
            try send(.command(.connectResult(transactionID: transactionID, objectEncoding: parameters.objectEncoding ?? 0,
                                             extra: configuration.connectAnnouncement)))
            connectParameters = parameters
            events.append(.connected(parameters))
            return
        }
        guard isConnected else { throw Error.commandBeforeConnect(Self.excerpt(command.name)) }
        switch command {
        case .releaseStream(let t, _), .fcPublish(let t, _):
            try send(.command(.result(transactionID: t, properties: .null, information: .undefined)))
        case .getStreamLength(let t, _):
            // ffmpeg reads a number here (a live stream's length is 0) and warns otherwise.
            try send(.command(.result(transactionID: t, properties: .null, information: .number(0))))
        case .createStream(let t):
            guard streams.count < Self.maxStreams else { throw Error.tooManyStreams(limit: Self.maxStreams) }
            let id = nextStreamID
            nextStreamID += 1
            streams[id] = .created
            try send(.command(.createStreamResult(transactionID: t, streamID: id)))
        case .publish(_, let fullName, let type):
            guard streams[messageStreamID] != nil else { return }
            if let refusal = configuration.refusal(ofName: fullName, kind: "stream") {
                try sendStatus(RTMPStatus(level: "error", code: RTMPStatus.Code.publishBadName, description: refusal),
                               streamID: messageStreamID)
                return
            }
            let (name, query) = RTMPURL.splitQuery(fullName)
            streams[messageStreamID] = .publishRequested(name)
            events.append(.publishRequested(streamID: messageStreamID, name: name, query: query, type: type))
        case .play(_, let fullName, _, _, _):
            guard streams[messageStreamID] != nil else { return }
            if let refusal = configuration.refusal(ofName: fullName, kind: "stream") {
                try sendStatus(RTMPStatus(level: "error", code: RTMPStatus.Code.playFailed, description: refusal),
                               streamID: messageStreamID)
                return
            }
            let (name, query) = RTMPURL.splitQuery(fullName)
            streams[messageStreamID] = .playRequested(name)
            events.append(.playRequested(streamID: messageStreamID, name: name, query: query))
        case .fcUnpublish(let t, let fullName):
            try send(.command(.result(transactionID: t, properties: .null, information: .undefined)))
            let name = RTMPURL.splitQuery(fullName).name
            for (id, role) in streams where role == .publishing(name) {
                streams[id] = .created
                events.append(.unpublished(streamID: id, name: name))
            }
        case .closeStream:
            end(streamID: messageStreamID, deleting: false, events: &events)
        case .deleteStream(_, let id):
            guard id >= 0, id <= Double(UInt32.max) else { return }
            end(streamID: UInt32(id), deleting: true, events: &events)
        case .deleteStreamNamed(_, let fullName):
            // GStreamer's form: whatever this connection publishes or plays under that
            // name ends (after its FCUnpublish, usually nothing is left to end).
            let name = RTMPURL.splitQuery(fullName).name
            for (id, role) in streams.sorted(by: { $0.key < $1.key }) where role == .publishing(name) || role == .playing(name) {
                end(streamID: id, deleting: true, events: &events)
            }
        default:
            break
        }
    }

    /// A peer's string as errors and logs may carry it: at most 64 characters, control
    /// characters as '?', so a hostile name cannot flood or forge log lines.
    static func excerpt(_ text: String) -> String {
        var result = String(String.UnicodeScalarView(text.unicodeScalars.prefix(64).map {
            $0.value < 0x20 || $0.value == 0x7F ? "?" : $0
        }))
        if text.unicodeScalars.count > 64 { result += "…" }
        return result
    }

    private mutating func end(streamID: UInt32, deleting: Bool, events: inout [Event]) {
        switch streams[streamID] {
        case .publishing(let name): events.append(.unpublished(streamID: streamID, name: name))
        case .playing(let name): events.append(.playStopped(streamID: streamID, name: name))
        default: break
        }
        streams[streamID] = deleting ? nil : (streams[streamID] == nil ? nil : .created)
    }
}
