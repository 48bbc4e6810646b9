/// What a new player is sent before the live messages, so it shows a picture at once
/// (SRS's and go-rtmp's GOP cache): the latest metadata and sequence headers, then the
/// video and audio messages since the last keyframe, in timestamp order.
///
/// Audio: the GOP holds the audio stamped at or after its keyframe, whenever it arrived.
/// A publisher that encodes sound faster than pictures sends audio ahead of the video
/// it goes with, so the audio stamped after a keyframe may arrive before it; that audio
/// (the tail of the previous GOP, or of `leadAudio` while no GOP is open) moves into the
/// new GOP behind its keyframe. Audio stamped before the keyframe is not cached: its
/// picture is not in the replay. Messages that arrive out of timestamp order (audio
/// behind the video) are inserted in order, never moving one stream's messages past
/// each other, so a joining player gets both streams interleaved as a muxer would write
/// them. An audio-only stream (no video seen) caches no audio: it has no keyframe to
/// start at, and players get its audio live at once (`PlayerBackpressure`).
///
/// Capped by bytes, message count and duration, audio included: when a GOP grows past a
/// cap its messages are dropped (the headers stay) and caching resumes at the next
/// keyframe, so a stream with rare keyframes costs bounded memory and a joining player
/// waits for the next keyframe instead. Bytes are what the messages really hold
/// (payload and shared encoding, `RelayMessage.heldBytes`) in the GOP and in
/// `leadAudio`; a header larger than `maxHeaderBytes` (no real one is) is relayed but
/// not cached.
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
        /// How far ahead of the video a publisher's audio may run and still reach the
        /// GOP of the keyframe it belongs to (`leadAudio` keeps this much).
        public var maxAudioLeadMilliseconds: UInt32
        /// The server-wide budget the cache's owner charges `byteCount` to (the relay
        /// sets it; nil: none). The cache itself never touches it.
        public var sharedBudget: ByteBudget?

        public init(maxBytes: Int = 8 << 20, maxMessages: Int = 2048, maxDurationMilliseconds: UInt32 = 10_000,
                    maxHeaderBytes: Int = 64 << 10, maxAudioLeadMilliseconds: UInt32 = 500, sharedBudget: ByteBudget? = nil)
        {
            self.maxBytes = maxBytes
            self.maxMessages = maxMessages
            self.maxDurationMilliseconds = maxDurationMilliseconds
            self.maxHeaderBytes = maxHeaderBytes
            self.maxAudioLeadMilliseconds = maxAudioLeadMilliseconds
            self.sharedBudget = sharedBudget
        }

        public static func == (a: Limits, b: Limits) -> Bool {
            a.maxBytes == b.maxBytes && a.maxMessages == b.maxMessages && a.maxDurationMilliseconds == b.maxDurationMilliseconds
                && a.maxHeaderBytes == b.maxHeaderBytes && a.maxAudioLeadMilliseconds == b.maxAudioLeadMilliseconds
                && a.sharedBudget === b.sharedBudget
        }
    }

    public let limits: Limits
    public private(set) var metadata: RelayMessage?
    public private(set) var videoHeader: RelayMessage?
    public private(set) var audioHeader: RelayMessage?
    /// The current GOP: a keyframe first, then everything after it in timestamp order;
    /// empty while waiting for a keyframe.
    public private(set) var messages: [RelayMessage] = []
    /// While no GOP is open in a stream with video: the newest audio (at most
    /// `Limits.maxAudioLeadMilliseconds` of it), kept for the keyframe it may belong to.
    /// Never replayed on its own.
    public private(set) var leadAudio: [RelayMessage] = []
    /// Bytes `messages` and `leadAudio` hold (`RelayMessage.heldBytes`).
    public private(set) var byteCount = 0
    /// GOPs abandoned because they outgrew a cap.
    public private(set) var overflowCount = 0
    /// GOPs dropped by `dropToHeaders()` (the server-wide budget was spent).
    public private(set) var droppedCount = 0
    /// Headers not cached because they were larger than `Limits.maxHeaderBytes`.
    public private(set) var oversizeHeaderCount = 0
    /// The stream has sent video since the last `reset()` (else it is audio-only so far).
    public private(set) var hasVideo = false

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
        case .videoHeader:
            videoHeader = message
            hasVideo = true
        case .audioHeader: audioHeader = message
        case .keyframe:
            hasVideo = true
            let carried = audioTail(of: messages.isEmpty ? leadAudio : messages, notBefore: message.raw.timestamp)
            clearGOP()
            guard limits.maxDurationMilliseconds > 0 else { return }
            append(message)
            for audio in carried where !messages.isEmpty { append(audio) }
        case .interframe:
            hasVideo = true
            guard !messages.isEmpty else { return }
            append(message)
        case .audio:
            if !messages.isEmpty {
                guard let keyframe = messages.first, !Self.isBefore(message.raw.timestamp, keyframe.raw.timestamp) else { return }
                append(message)
            } else if hasVideo, limits.maxDurationMilliseconds > 0 {
                holdLeadAudio(message)
            }
        }
    }

    /// Drops the current GOP, keeping the headers; caching resumes at the next keyframe.
    public mutating func dropToHeaders() {
        guard !messages.isEmpty || !leadAudio.isEmpty else { return }
        if !messages.isEmpty { droppedCount += 1 }
        clearGOP()
    }

    /// Forgets everything (a new publisher sends its own headers).
    public mutating func reset() {
        metadata = nil
        videoHeader = nil
        audioHeader = nil
        hasVideo = false
        clearGOP()
    }

    /// True when timestamp `a` is earlier than `b` on RTMP's wrapping 32-bit clock.
    static func isBefore(_ a: UInt32, _ b: UInt32) -> Bool { Int32(bitPattern: a &- b) < 0 }

    /// The audio of `list` (in timestamp order) stamped at or after `timestamp`: its tail.
    private func audioTail(of list: [RelayMessage], notBefore timestamp: UInt32) -> [RelayMessage] {
        var start = list.endIndex
        while start > list.startIndex, !Self.isBefore(list[start - 1].raw.timestamp, timestamp) { start -= 1 }
        return list[start...].filter { $0.kind == .audio }
    }

    /// Adds `message` to the GOP behind every message stamped no later than it (the end,
    /// unless it arrived behind the other stream), or abandons the GOP at a cap.
    private mutating func append(_ message: RelayMessage) {
        let first = messages.first?.raw.timestamp ?? message.raw.timestamp
        let duration = message.raw.timestamp &- first
        let tooLong = duration > limits.maxDurationMilliseconds && duration < 1 << 31
        if tooLong || byteCount + message.heldBytes > limits.maxBytes || messages.count >= limits.maxMessages {
            clearGOP()
            overflowCount += 1
            return
        }
        var index = messages.endIndex
        // Never in front of the keyframe; equal timestamps keep their arrival order.
        while index > 1, Self.isBefore(message.raw.timestamp, messages[index - 1].raw.timestamp) { index -= 1 }
        messages.insert(message, at: index)
        byteCount += message.heldBytes
    }

    /// Keeps `message` in `leadAudio`, dropping what is older than the lead allowed or
    /// past the byte and count caps.
    private mutating func holdLeadAudio(_ message: RelayMessage) {
        leadAudio.append(message)
        byteCount += message.heldBytes
        var drop = 0
        var held = byteCount
        while drop < leadAudio.count {
            let age = message.raw.timestamp &- leadAudio[drop].raw.timestamp
            let tooOld = age > limits.maxAudioLeadMilliseconds && age < 1 << 31
            guard tooOld || held > limits.maxBytes || leadAudio.count - drop > limits.maxMessages else { break }
            held -= leadAudio[drop].heldBytes
            drop += 1
        }
        guard drop > 0 else { return }
        leadAudio.removeFirst(drop)
        byteCount = held
    }

    private mutating func clearGOP() {
        // The arrays' capacity is kept: at most `maxMessages` references each.
        messages.removeAll(keepingCapacity: true)
        leadAudio.removeAll(keepingCapacity: true)
        byteCount = 0
    }
}
