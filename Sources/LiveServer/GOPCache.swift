/// What a new player is sent before the live messages, so it shows a picture at once
/// (SRS's and go-rtmp's GOP cache): the latest metadata and sequence headers, then the
/// messages since the last keyframe, in order.
///
/// Capped by bytes, message count and duration: when a GOP grows past a cap its
/// messages are dropped (the headers stay) and caching resumes at the next keyframe, so
/// a stream with rare keyframes costs bounded memory and a joining player waits for the
/// next keyframe instead. Audio before the first keyframe is not cached: a player could
/// not show the matching picture. Bytes are what the messages really hold (payload and
/// shared encoding, `RelayMessage.heldBytes`); a header larger than `maxHeaderBytes`
/// (no real one is) is relayed but not cached.
///
/// Pure value; the stream that owns it guards it with its lock, and charges what it
/// holds to the server-wide `Limits.sharedBudget` (see `RelayStream`).
public struct GOPCache: Sendable {
    public struct Limits: Sendable, Equatable {
        /// Bytes the cached GOP holds (payloads and their shared encodings).
        public var maxBytes: Int
        public var maxMessages: Int
        /// From the keyframe's timestamp to the newest cached message; 0 caches headers only.
        public var maxDurationMilliseconds: UInt32
        /// The largest metadata or sequence header kept for new players.
        public var maxHeaderBytes: Int
        /// The server-wide budget the cache's owner charges `byteCount` to (the relay
        /// sets it; nil: none). The cache itself never touches it.
        public var sharedBudget: ByteBudget?

        public init(maxBytes: Int = 8 << 20, maxMessages: Int = 2048, maxDurationMilliseconds: UInt32 = 10_000,
                    maxHeaderBytes: Int = 64 << 10, sharedBudget: ByteBudget? = nil)
        {
            self.maxBytes = maxBytes
            self.maxMessages = maxMessages
            self.maxDurationMilliseconds = maxDurationMilliseconds
            self.maxHeaderBytes = maxHeaderBytes
            self.sharedBudget = sharedBudget
        }

        public static func == (a: Limits, b: Limits) -> Bool {
            a.maxBytes == b.maxBytes && a.maxMessages == b.maxMessages && a.maxDurationMilliseconds == b.maxDurationMilliseconds
                && a.maxHeaderBytes == b.maxHeaderBytes && a.sharedBudget === b.sharedBudget
        }
    }

    public let limits: Limits
    public private(set) var metadata: RelayMessage?
    public private(set) var videoHeader: RelayMessage?
    public private(set) var audioHeader: RelayMessage?
    /// The current GOP: a keyframe first, then everything after it; empty while waiting
    /// for a keyframe.
    public private(set) var messages: [RelayMessage] = []
    /// Bytes `messages` hold (`RelayMessage.heldBytes`).
    public private(set) var byteCount = 0
    /// GOPs abandoned because they outgrew a cap.
    public private(set) var overflowCount = 0
    /// GOPs dropped by `dropToHeaders()` (the server-wide budget was spent).
    public private(set) var droppedCount = 0
    /// Headers not cached because they were larger than `Limits.maxHeaderBytes`.
    public private(set) var oversizeHeaderCount = 0

    public init(limits: Limits = Limits()) {
        self.limits = limits
    }

    /// The headers, in the order players need them: metadata, video, audio.
    public var headers: [RelayMessage] { [metadata, videoHeader, audioHeader].compactMap { $0 } }

    /// Everything a new player is sent first: the headers, then the current GOP.
    public var replay: [RelayMessage] { headers + messages }

    /// True when the replay starts the player at a keyframe.
    public var hasKeyframe: Bool { messages.first?.kind == .keyframe }

    /// Takes the next message of the stream.
    public mutating func add(_ message: RelayMessage) {
        if message.kind.isHeader, message.heldBytes > limits.maxHeaderBytes {
            oversizeHeaderCount += 1
            return
        }
        switch message.kind {
        case .metadata: metadata = message
        case .videoHeader: videoHeader = message
        case .audioHeader: audioHeader = message
        case .keyframe:
            clearGOP()
            guard limits.maxDurationMilliseconds > 0 else { return }
            append(message)
        case .interframe, .audio:
            guard !messages.isEmpty else { return }
            append(message)
        }
    }

    /// Drops the current GOP, keeping the headers; caching resumes at the next keyframe.
    public mutating func dropToHeaders() {
        guard !messages.isEmpty else { return }
        clearGOP()
        droppedCount += 1
    }

    /// Forgets everything (a new publisher sends its own headers).
    public mutating func reset() {
        metadata = nil
        videoHeader = nil
        audioHeader = nil
        clearGOP()
    }

    private mutating func append(_ message: RelayMessage) {
        let first = messages.first?.raw.timestamp ?? message.raw.timestamp
        let duration = message.raw.timestamp &- first
        let tooLong = duration > limits.maxDurationMilliseconds && duration < 1 << 31
        if tooLong || byteCount + message.heldBytes > limits.maxBytes || messages.count >= limits.maxMessages {
            clearGOP()
            overflowCount += 1
            return
        }
        messages.append(message)
        byteCount += message.heldBytes
    }

    private mutating func clearGOP() {
        // The array's capacity is kept: at most `maxMessages` references.
        messages.removeAll(keepingCapacity: true)
        byteCount = 0
    }
}
