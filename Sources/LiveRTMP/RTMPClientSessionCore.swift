/// The client side of one RTMP connection after the handshake, as a pure state
/// machine: the publish and play flows as ffmpeg's rtmpproto.c runs them, without the
/// socket. Bytes in through `feed(_:)`, events out, bytes to send in `takeOutput()`.
///
/// - publish: Set Chunk Size, connect → releaseStream, FCPublish, createStream →
///   publish(name?query, "live") → NetStream.Publish.Start → `.publishing`; then
///   `sendMetadata`, `sendVideo`, `sendAudio`.
/// - play: connect → createStream → play(name?query) + Set Buffer Length →
///   NetStream.Play.Start → `.playing`; then `.metadata`, `.video`, `.audio` events.
///
/// Ping requests are answered and acknowledgements sent as the server's window asks.
/// Confined to the connection's event-loop thread.
public struct RTMPClientSessionCore {
    /// `probe`: connect only; the flow stops at connect's answer (`connectInformation`).
    public enum Mode: Sendable, Equatable { case publish, play, probe }

    public struct Configuration: Sendable {
        /// The chunk size the client sends with (ffmpeg: 4096 when publishing).
        public var chunkSize: Int
        /// The buffer length announced when playing, in milliseconds (ffmpeg: 3000).
        public var bufferLengthMilliseconds: UInt32
        public var flashVer: String
        public var maxMessageLength: Int

        public init(chunkSize: Int = 4096, bufferLengthMilliseconds: UInt32 = 3000,
                    flashVer: String = "FMLE/3.0 (compatible; LiveLine)",
                    maxMessageLength: Int = RTMPChunkDecoder.defaultMaxMessageLength)
        {
            self.chunkSize = chunkSize
            self.bufferLengthMilliseconds = bufferLengthMilliseconds
            self.flashVer = flashVer
            self.maxMessageLength = maxMessageLength
        }
    }

    public enum State: Sendable, Equatable {
        case idle, connecting, creatingStream, starting, publishing, playing, failed
    }

    public enum Event: Equatable, Sendable {
        /// connect succeeded.
        case connected
        /// The stream is published; media may flow (the anyRTC SDK: onRtmpStreamOk).
        case publishing(streamID: UInt32)
        /// The stream plays; media will arrive (the anyRTC SDK: onRtmpPlayerOk).
        case playing(streamID: UInt32)
        /// A status the flow did not consume (Play.Reset, UnpublishNotify, Play.Stop…).
        case status(RTMPStatus)
        /// The server refused: connect `_error`, an error onStatus, or a createStream `_error`.
        case failed(RTMPStatus)
        case metadata(RTMPStreamMetadata, timestamp: UInt32)
        case video(RTMPRawMessage)
        case audio(RTMPRawMessage)
        /// The stream ended on the server (Stream EOF).
        case streamEOF
    }

    public enum Error: Swift.Error, CustomStringConvertible, Equatable, Sendable {
        case notPublishing(String)

        public var description: String {
            switch self {
            case .notPublishing: "the RTMP session is not publishing: nothing can be sent"
            }
        }
    }

    public let url: RTMPURL
    public let mode: Mode
    public let configuration: Configuration
    public private(set) var state = State.idle
    public private(set) var decoder: RTMPChunkDecoder
    private var encoder = RTMPChunkEncoder()
    private var output: [UInt8] = []
    private var transactions = 0
    private var connectTransaction: Double = 0
    private var createStreamTransaction: Double = 0
    /// The message stream createStream returned (0 before).
    public private(set) var streamID: UInt32 = 0
    /// The information object of connect's `_result` (code NetConnection.Connect.Success
    /// and whatever else the server tells about itself); nil before.
    public private(set) var connectInformation: AMF0Object?

    public init(url: RTMPURL, mode: Mode, configuration: Configuration = Configuration()) {
        self.url = url
        self.mode = mode
        self.configuration = configuration
        decoder = RTMPChunkDecoder(maxMessageLength: configuration.maxMessageLength)
    }

    /// Takes the bytes to send, leaving the buffer empty.
    public mutating func takeOutput() -> [UInt8] {
        defer { output = [] }
        return output
    }

    public var pendingOutputCount: Int { output.count }

    /// Starts the flow (call right after the handshake): Set Chunk Size and connect.
    public mutating func start() throws {
        guard state == .idle else { return }
        try send(.setChunkSize(UInt32(configuration.chunkSize)))
        try encoder.setChunkSize(configuration.chunkSize)
        connectTransaction = nextTransaction()
        let parameters = RTMPConnectParameters(app: url.app, tcUrl: url.tcUrl, flashVer: configuration.flashVer,
                                               forPlaying: mode != .publish)
        try send(.command(.connect(transactionID: connectTransaction, parameters)))
        state = .connecting
    }

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

    // MARK: - Publishing

    /// Sends @setDataFrame onMetaData.
    public mutating func sendMetadata(_ metadata: RTMPStreamMetadata) throws {
        guard state == .publishing else { throw Error.notPublishing("sendMetadata") }
        try send(.data(.setDataFrame(handler: "onMetaData", metadata: metadata)), messageStreamID: streamID)
    }

    /// Sends a video message (an `FLVVideoTag` payload) with a timestamp in milliseconds.
    public mutating func sendVideo(_ payload: [UInt8], timestamp: UInt32) throws {
        guard state == .publishing else { throw Error.notPublishing("sendVideo") }
        try encoder.append(RTMPRawMessage(chunkStreamID: RTMPChunkStreamID.video, typeID: RTMPMessage.TypeID.video,
                                          messageStreamID: streamID, timestamp: timestamp, payload: payload), to: &output)
    }

    /// Sends an audio message (an `FLVAudioTag` payload).
    public mutating func sendAudio(_ payload: [UInt8], timestamp: UInt32) throws {
        guard state == .publishing else { throw Error.notPublishing("sendAudio") }
        try encoder.append(RTMPRawMessage(chunkStreamID: RTMPChunkStreamID.audio, typeID: RTMPMessage.TypeID.audio,
                                          messageStreamID: streamID, timestamp: timestamp, payload: payload), to: &output)
    }

    /// Ends publishing or playing politely: FCUnpublish (publish) and deleteStream.
    public mutating func stop() throws {
        guard streamID != 0 else { return }
        if mode == .publish {
            try send(.command(.fcUnpublish(transactionID: nextTransaction(), streamName: url.streamNameWithQuery)))
        }
        try send(.command(.deleteStream(transactionID: nextTransaction(), streamID: Double(streamID))))
        streamID = 0
        state = .idle
    }

    // MARK: - Handling

    private mutating func nextTransaction() -> Double {
        transactions += 1
        return Double(transactions)
    }

    private mutating func send(_ message: RTMPMessage, messageStreamID: UInt32 = 0) throws {
        try encoder.append(try message.raw(messageStreamID: messageStreamID), to: &output)
    }

    private mutating func handle(_ raw: RTMPRawMessage, events: inout [Event]) throws {
        switch try RTMPMessage(decoding: raw) {
        case .userControl(.pingRequest(let timestamp)):
            try send(.userControl(.pingResponse(timestamp: timestamp)))
        case .userControl(.streamEOF):
            events.append(.streamEOF)
        case .video:
            if state == .playing { events.append(.video(raw)) }
        case .audio:
            if state == .playing { events.append(.audio(raw)) }
        case .aggregate(let parts):
            guard state == .playing else { break }
            for part in parts {
                if part.typeID == RTMPMessage.TypeID.video { events.append(.video(part)) }
                if part.typeID == RTMPMessage.TypeID.audio { events.append(.audio(part)) }
            }
        case .data(let data):
            if let metadata = data.metadata { events.append(.metadata(metadata, timestamp: raw.timestamp)) }
        case .command(let command):
            try handle(command, events: &events)
        default:
            break
        }
    }

    private mutating func handle(_ command: RTMPCommand, events: inout [Event]) throws {
        switch command {
        case .result(let t, _, let information) where t == connectTransaction && state == .connecting:
            connectInformation = information.objectValue ?? AMF0Object()
            events.append(.connected)
            if mode == .probe {
                state = .idle
                return
            }
            if mode == .publish {
                try send(.command(.releaseStream(transactionID: nextTransaction(), streamName: url.streamNameWithQuery)))
                try send(.command(.fcPublish(transactionID: nextTransaction(), streamName: url.streamNameWithQuery)))
            }
            createStreamTransaction = nextTransaction()
            try send(.command(.createStream(transactionID: createStreamTransaction)))
            state = .creatingStream
        case .result(let t, _, _) where t == createStreamTransaction && state == .creatingStream:
            guard let id = command.createdStreamID else {
                state = .failed
                events.append(.failed(RTMPStatus(level: "error", code: "createStream", description: "no stream id in _result")))
                return
            }
            streamID = id
            switch mode {
            case .publish:
                try send(.command(.publish(transactionID: nextTransaction(), streamName: url.streamNameWithQuery, type: .live)),
                         messageStreamID: id)
            case .play:
                try send(.command(.play(transactionID: nextTransaction(), streamName: url.streamNameWithQuery)),
                         messageStreamID: id)
                try send(.userControl(.setBufferLength(streamID: id, milliseconds: configuration.bufferLengthMilliseconds)))
            case .probe:
                return
            }
            state = .starting
        case .error(let t, _, let information) where t == connectTransaction || t == createStreamTransaction:
            state = .failed
            events.append(.failed(RTMPStatus(information.objectValue ?? AMF0Object())))
        case .onStatus(let status):
            if status.isError {
                state = .failed
                events.append(.failed(status))
            } else if state == .starting && mode == .publish && status.code == RTMPStatus.Code.publishStart {
                state = .publishing
                events.append(.publishing(streamID: streamID))
            } else if state == .starting && mode == .play && status.code == RTMPStatus.Code.playStart {
                state = .playing
                events.append(.playing(streamID: streamID))
            } else {
                events.append(.status(status))
            }
        default:
            break
        }
    }
}
