import LiveCore
import LiveNet
import LiveRTMP

/// One simulated viewer: handshake, connect, createStream, play (the commands ffmpeg's
/// player sends), then counts what arrives without decoding it.
///
/// "Keeping up" (see `PlayerResult.keptUp`): a viewer watching in real time needs
/// every frame, on time. Judged over the measurement window only (from
/// `measureFromMicros`, after every player has started and the join bursts settled);
/// per video frame in the window the player computes
/// `late = (wall − wall₀) − (ts − ts₀)`, how far the arrival is behind the media clock,
/// and its lag is `late` minus the smallest `late` seen so far: 0 while frames come as
/// promptly as they ever did (including the GOP-cache burst at the start, whose old
/// frames each set a new minimum), growing when the player falls behind.
///
/// Every frame arrived: with a `published` recording, the player counts the frames it
/// received from one keyframe in the window to the next and adds the frames the
/// publisher sent between the same keyframes (`PublishedStream`); a keyframe the
/// recording does not have is counted as unknown.
///
/// Confined to its connection's loop thread; read `result` after the loops stopped.
final class LoadPlayer: TCPConnectionHandler, @unchecked Sendable {
    // @unchecked: every field is touched on the loop thread only, and read by the main
    // thread after the loop group has been shut down (which joins the threads).

    enum Phase { case idle, connecting, handshaking, commands, playing, closed }

    let url: RTMPURL
    let loop: EventLoop
    /// Frames before this (monotonic µs) count for the first-frame time and the totals,
    /// not for lag, gaps and span.
    let measureFromMicros: UInt64
    /// What the publisher sends, to count frames against; nil: frames are not counted.
    let published: PublishedStream?
    private let streamName: String
    private var phase = Phase.idle
    private var connection: TCPConnection?
    private var handshake = RTMPHandshakeClient()
    private var scanner = RTMPChunkScanner()
    private var encoder = RTMPChunkEncoder()
    private var output: [UInt8] = []
    private var streamID: UInt32 = 0
    private var windowSize: UInt32 = 0
    private var acknowledged: UInt64 = 0
    private var lastFrameMicros: UInt64 = 0
    private var firstTimestamp: UInt32 = 0
    private var lastTimestamp: UInt32 = 0
    private var minLate = Int64.max
    /// The recording's index of the last keyframe in the window, and the frames received since it.
    private var lastKeyframe: Int?
    private var sinceKeyframe = 0

    private(set) var result = PlayerResult()

    init(url: RTMPURL, loop: EventLoop, measureFromMicros: UInt64, published: PublishedStream?) {
        self.url = url
        self.loop = loop
        self.measureFromMicros = measureFromMicros
        self.published = published
        streamName = url.streamNameWithQuery
    }

    /// Connects and plays. Loop thread.
    func start(connectTimeout: Duration) {
        phase = .connecting
        result.startMicros = Clock.monotonicMicros()
        TCPConnection.connect(host: url.host, port: UInt16(url.port), on: loop,
                              options: TCPConnectionOptions(highWatermark: 64 << 10, lowWatermark: 16 << 10),
                              timeout: connectTimeout) { [self] outcome in
            switch outcome {
            case .success(let connection):
                self.connection = connection
                connection.handler = self
                result.tcpConnectMicros = Clock.monotonicMicros() - result.startMicros
                phase = .handshaking
                connection.write(handshake.start())
            case .failure(let error):
                fail("connect: \(error)")
            }
        }
    }

    /// Closes the connection. Loop thread.
    func stop() {
        connection?.abort(nil)
    }

    func onRead(_ connection: TCPConnection, _ bytes: UnsafeRawBufferPointer) {
        do {
            if phase == .handshaking {
                let step = try handshake.feed(Array(bytes))
                if !step.output.isEmpty { connection.write(step.output) }
                guard step.done else { return }
                phase = .commands
                try send(.command(.connect(transactionID: 1, RTMPConnectParameters(
                    app: url.app, tcUrl: url.tcUrl, flashVer: "LNX 9,0,124,2", forPlaying: true))))
                if !step.leftover.isEmpty {
                    try step.leftover.withUnsafeBytes { try scan($0) }
                }
            } else {
                try scan(bytes)
            }
            if !output.isEmpty {
                connection.write(output)
                output.removeAll(keepingCapacity: true)
            }
        } catch {
            fail("\(error)")
            connection.abort(nil)
        }
    }

    func onClose(_ connection: TCPConnection, _ error: NetError?) {
        if phase != .playing, phase != .closed { fail("closed before playing: \(error.map { "\($0)" } ?? "by the server")") }
        if phase == .playing, result.closedMicros == 0 { result.closedMicros = Clock.monotonicMicros() }
        phase = .closed
        self.connection = nil
    }

    private func fail(_ reason: String) {
        guard result.failure == nil, phase != .closed else { return }
        result.failure = reason
        phase = .closed
    }

    private func send(_ message: RTMPMessage, messageStreamID: UInt32 = 0) throws {
        try encoder.append(try message.raw(messageStreamID: messageStreamID), to: &output)
    }

    private func scan(_ bytes: UnsafeRawBufferPointer) throws {
        result.bytes += UInt64(bytes.count)
        try scanner.scan(bytes) { message in
            if message.isMedia {
                media(message)
            } else {
                try control(message)
            }
        }
        if windowSize > 0, scanner.bytesScanned - acknowledged >= UInt64(windowSize) {
            acknowledged = scanner.bytesScanned
            try send(.acknowledgement(sequenceNumber: UInt32(truncatingIfNeeded: acknowledged)))
        }
    }

    private func media(_ message: RTMPChunkScanner.Message) {
        guard phase == .playing else { return }
        if message.typeID == RTMPMessage.TypeID.audio {
            result.audioMessages += 1
            return
        }
        // Only an AVC picture (codec 7, packet type 1) is a frame: a sequence header
        // (type 0) is configuration, an end of sequence (type 2) a marker.
        if message.head.0 & 0x0F == 7, message.head.1 != 1 {
            result.videoHeaders += 1
            return
        }
        let now = Clock.monotonicMicros()
        let keyframe = message.head.0 >> 4 == 1
        if result.frames == 0 {
            guard keyframe else {
                result.framesBeforeKeyframe += 1
                return
            }
            result.firstFrameMicros = now - result.startMicros
        }
        if keyframe { result.keyframes += 1 }
        result.frames += 1
        guard now >= measureFromMicros else { return }
        if result.windowFrames == 0 {
            result.firstFrameWallMicros = now
            firstTimestamp = message.timestamp
        } else {
            result.maxGapMicros = max(result.maxGapMicros, now - lastFrameMicros)
            let step = Int32(bitPattern: message.timestamp &- lastTimestamp)
            result.maxMediaGapMilliseconds = max(result.maxMediaGapMilliseconds, Int(step))
        }
        result.windowFrames += 1
        if let published { count(message, keyframe: keyframe, against: published) }
        lastFrameMicros = now
        lastTimestamp = message.timestamp
        let media = Int64(Int32(bitPattern: message.timestamp &- firstTimestamp)) * 1000
        let late = Int64(now - result.firstFrameWallMicros) - media
        minLate = min(minLate, late)
        result.lagMicros = late - minLate
        result.maxLagMicros = max(result.maxLagMicros, result.lagMicros)
        result.mediaSpanMicros = media
        result.lastFrameWallMicros = now
    }

    /// Counts a frame of the window: at each keyframe, the frames received since the
    /// previous one against the frames published between the two.
    private func count(_ message: RTMPChunkScanner.Message, keyframe: Bool, against published: PublishedStream) {
        guard keyframe else {
            sinceKeyframe += 1
            return
        }
        guard let index = published.keyframe(length: message.length) else {
            result.unknownKeyframes += 1
            lastKeyframe = nil
            return
        }
        if let previous = lastKeyframe {
            result.countedFrames += sinceKeyframe
            result.publishedFrames += published.framesBetween(previous, index)
        }
        lastKeyframe = index
        sinceKeyframe = 1
    }

    private func control(_ message: RTMPChunkScanner.Message) throws {
        let raw = RTMPRawMessage(chunkStreamID: UInt32(message.chunkStreamID), typeID: message.typeID,
                                 messageStreamID: message.messageStreamID, timestamp: message.timestamp,
                                 payload: message.payload)
        switch try RTMPMessage(decoding: raw) {
        case .windowAcknowledgementSize(let size):
            windowSize = size
        case .userControl(.pingRequest(let timestamp)):
            try send(.userControl(.pingResponse(timestamp: timestamp)))
        case .command(.result(let transaction, _, _)) where transaction == 1 && phase == .commands:
            try send(.windowAcknowledgementSize(2_500_000))
            try send(.command(.createStream(transactionID: 2)))
        case .command(let command) where phase == .commands && command.createdStreamID != nil:
            if case .result(let transaction, _, _) = command, transaction == 2, let id = command.createdStreamID {
                streamID = id
                try send(.command(.play(transactionID: 0, streamName: streamName)), messageStreamID: id)
                try send(.userControl(.setBufferLength(streamID: id, milliseconds: 3000)))
            }
        case .command(.error(_, _, let information)):
            throw LoadError.refused(RTMPStatus(information.objectValue ?? AMF0Object()).code)
        case .command(.onStatus(let status)):
            if status.isError { throw LoadError.refused(status.code) }
            if status.code == RTMPStatus.Code.playStart, phase == .commands {
                phase = .playing
                result.playMicros = Clock.monotonicMicros() - result.startMicros
            }
        default:
            break
        }
    }
}

enum LoadError: Error, CustomStringConvertible {
    case refused(String)
    case usage(String)

    var description: String {
        switch self {
        case .refused(let code): "the server refused: \(code)"
        case .usage(let text): text
        }
    }
}
