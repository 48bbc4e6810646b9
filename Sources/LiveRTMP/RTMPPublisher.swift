import Foundation
import LiveCore
import LiveNet
import Synchronization

/// Publishes one H.264 and/or AAC stream to an RTMP server (the anyRTC SDK: the hoster's push of
/// `startPushRtmpStream`, reported through onRtmpStreamOk / onRtmpStreamFailed /
/// onRtmpStreamStatus), on a LiveNet event loop.
///
/// `start()` connects, shakes hands and publishes; then `send(metadata:)`,
/// `send(sequenceHeader:)` / `send(audioHeader:)` and `send(_:)` per encoded packet.
/// Those entry points are thread-safe: the encode and audio threads call them and they
/// hop to the loop with `execute`. Video goes out with the FLV composition time =
/// pts − dts.
///
/// One timeline: both tracks' times are on the shared capture clock, the RTMP
/// timestamps count in ms from the first media item of either kind, and an
/// `FLVInterleaver` holds each item until the other track has caught up (at most
/// `reorderWindowMilliseconds` of its own track), so timestamps never go back. The
/// stream carries the `tracks` of the configuration: with video only or audio only
/// nothing waits.
///
/// A stream starts clean: video frames are dropped (counted in `Stats.droppedFrames`)
/// until a sequence header has been queued, and then until a keyframe; audio frames
/// until the AAC header (AudioSpecificConfig) has been queued; so nothing a player
/// cannot decode reaches the server first. Audio never waits for a video keyframe.
/// Metadata and the sequence headers queued after `start()` go out before any frame
/// (a reconnecting sink sends them on `.published` and asks its encoder for an IDR).
///
/// Bounded: packets wait in a queue here until the connection takes them (and, with
/// `inFlightMilliseconds`, until the kernel holds less than that much of the link's rate);
/// when the queue's delay (`Stats.queueDelayMilliseconds`: what the server has not
/// acknowledged, queued here or held by the kernel, at the link's rate) exceeds
/// `maxQueuedMilliseconds`, or the unsent bytes `maxQueuedBytes`, video is
/// dropped (counted in `Stats.droppedFrames` and `congestionDroppedFrames`), the stale
/// frames still waiting with it, until the queue is back under the bound and a keyframe
/// comes (`PublishGate`); `onKeyframeNeeded` asks for that keyframe once the queue has
/// drained. Audio is never dropped for congestion (it is small and a gap is heard at
/// once): only past twice `maxQueuedBytes`, a stalled connection, does an audio frame go
/// (`Stats.droppedAudioFrames`). `onCongestion` reports every change of that state.
public final class RTMPPublisher: @unchecked Sendable {
    // @unchecked: fields marked "loop" are touched only on `loop`'s thread; the
    // figures and state are in `lifecycle`, under its lock.

    public struct Configuration: Sendable {
        /// Connect + handshake + publish must finish within this time.
        public var connectTimeout: Duration
        /// The queue's delay (`Stats.queueDelayMilliseconds`) beyond which video is dropped
        /// to a keyframe.
        public var maxQueuedMilliseconds: Int
        /// Unsent bytes beyond which video is dropped to a keyframe.
        public var maxQueuedBytes: Int
        public var session: RTMPClientSessionCore.Configuration
        /// The socket's write queue: small, so media waits in the publisher's own queue
        /// where it can still be dropped.
        public var connectionOptions: TCPConnectionOptions
        /// The tracks the stream carries (video only by default; `[.audio]` for an
        /// audio-only live, both for a stream with sound).
        public var tracks: Set<FLVTrack>
        /// How far one track may run ahead of the other before its items are sent anyway.
        public var reorderWindowMilliseconds: Int
        /// The bytes the kernel holds unacknowledged are kept under what the link carried
        /// in this long (over the last quarter second; at least two round trips' worth and
        /// `minInFlightBytes`): when the link narrows, what it cannot carry at once waits in
        /// the publisher's queue, where it counts and can still be dropped, rather than in the
        /// kernel's and the bottleneck's. nil: as much as the kernel takes.
        public var inFlightMilliseconds: Int?
        /// The least the in-flight cap allows.
        public var minInFlightBytes = 16 << 10

        public init(connectTimeout: Duration = .seconds(10), maxQueuedMilliseconds: Int = 2000,
                    maxQueuedBytes: Int = 8 << 20, session: RTMPClientSessionCore.Configuration = .init(),
                    connectionOptions: TCPConnectionOptions = TCPConnectionOptions(highWatermark: 256 << 10,
                                                                                   lowWatermark: 64 << 10),
                    tracks: Set<FLVTrack> = [.video], reorderWindowMilliseconds: Int = 100)
        {
            self.tracks = tracks
            self.reorderWindowMilliseconds = reorderWindowMilliseconds
            self.connectTimeout = connectTimeout
            self.maxQueuedMilliseconds = maxQueuedMilliseconds
            self.maxQueuedBytes = maxQueuedBytes
            self.session = session
            self.connectionOptions = connectionOptions
        }
    }

    public enum State: Sendable, Equatable {
        case idle, connecting, publishing, closing, closed, failed
    }

    /// What the publisher reports, on the loop thread.
    public enum Event: Sendable {
        /// The server accepted connect.
        case connected
        /// NetStream.Publish.Start: media flows (the anyRTC SDK: onRtmpStreamOk).
        case published
        /// A status the flow did not consume (the anyRTC SDK: onRtmpStreamStatus).
        case status(RTMPStatus)
        /// The publisher stopped on an error (the anyRTC SDK: onRtmpStreamFailed).
        case failed(RTMPClientError)
        /// The publisher closed after `close()` (the anyRTC SDK: onRtmpStreamClosed).
        case closed
    }

    /// A snapshot of the publisher's figures, readable from any thread.
    public struct Stats: Sendable, Equatable {
        public var state = State.idle
        /// Bytes waiting to be sent: in the publisher's queue and the socket's.
        public var queuedBytes = 0
        /// Bytes the kernel took that the server has not acknowledged yet (unsent in the
        /// socket's buffer, or on the way): with `queuedBytes`, the whole send queue.
        public var unacknowledgedBytes = 0
        /// Media time between the oldest media packet (audio or video) the server has not
        /// acknowledged yet and the newest one queued: the send queue in ms of media.
        public var queuedMilliseconds = 0
        /// How long the whole send queue (queued here and held by the kernel) takes to
        /// leave at what the link carried over the last quarter second, once the queue is
        /// `busyQueueMilliseconds` long (its throughput is then the link's, not the
        /// encoder's), and at least `queuedMilliseconds`: the wait of the frame queued
        /// last. When the link narrows under a faster stream the oldest frame's age grows
        /// only by the share the link carries; this grows at once.
        public var queueDelayMilliseconds = 0
        /// Bytes per second the kernel took over the last second.
        public var sendRate = 0.0
        /// Bytes per second the server acknowledged over the last second: what the
        /// network really carried (the achieved throughput).
        public var throughput = 0.0
        /// The same over about the last quarter second: what the link carries now, while a
        /// backlog keeps it busy (the last second's figure still holds the time before a drop).
        public var recentThroughput = 0.0
        /// Bytes the kernel took since connect (handshake included).
        public var bytesSent: UInt64 = 0
        /// Video packets handed to the connection.
        public var sentFrames = 0
        /// Video packets waiting in the publisher's queue (not yet handed to the socket).
        public var queuedFrames = 0
        /// Video packets dropped because the queue was over its cap, or because no
        /// sequence header or keyframe had been queued yet.
        public var droppedFrames = 0
        /// The part of `droppedFrames` dropped because the queue passed its bound (to
        /// the next keyframe): congestion alone, not a stream's clean start.
        public var congestionDroppedFrames = 0
        /// True while video is dropped until the queue drains and a keyframe comes.
        public var isCongested = false
        /// AAC frames handed to the connection.
        public var sentAudioFrames = 0
        /// AAC frames dropped: before the AAC header, or past the hard byte cap.
        public var droppedAudioFrames = 0

        public init() {}
    }

    public let url: RTMPURL
    public let loop: EventLoop
    public let configuration: Configuration

    /// Events, called on the loop thread; set before `start()`.
    public var onEvent: (@Sendable (Event) -> Void)?
    /// Called on the loop thread when dropping starts (true) or ends (false), with the
    /// figures at that moment; set before `start()`.
    public var onCongestion: (@Sendable (Bool, Stats) -> Void)?
    /// Called on the loop thread while dropping once the queue is back under the bound:
    /// only a keyframe resumes the picture, ask the encoder for one; set before `start()`.
    public var onKeyframeNeeded: (@Sendable () -> Void)?

    private let lifecycle = RTMPClientLifecycle(Stats(), state: \.state)

    private enum Item: Sendable {
        case metadata(RTMPStreamMetadata)
        /// An FLV video payload; `dts` in µs of the capture clock.
        case video(payload: [UInt8], dts: Int64, isKeyframe: Bool, isConfiguration: Bool)
        /// An FLV audio payload; `dts` in µs of the capture clock.
        case audio(payload: [UInt8], dts: Int64, isConfiguration: Bool)

        /// The media time of a frame (not of metadata or a header).
        var frameDTS: Int64? {
            switch self {
            case .video(_, let dts, _, false), .audio(_, let dts, false): dts
            default: nil
            }
        }

        var byteCount: Int {
            switch self {
            case .metadata: 0
            case .video(let payload, _, _, _), .audio(let payload, _, _): payload.count
            }
        }
    }

    // Loop.
    private var client: RTMPClientConnection?
    /// Items ready for the connection, with their RTMP timestamps.
    private var pending: [(item: Item, timestamp: UInt32)?] = []
    private var pendingHead = 0
    private var pendingBytes = 0
    private var pendingFrames = 0
    /// Media waiting for the other track.
    private var interleaver: FLVInterleaver<Item>
    private var newestDTS: Int64?
    /// (end offset in the connection's byte count, dts) of media handed to the connection.
    private var inFlight: [(end: UInt64, dts: Int64)] = []
    private var inFlightHead = 0
    /// The drop rules.
    private var gate = PublishGate()
    /// `onKeyframeNeeded` was called in this drop and the queue has not passed the bound since.
    private var keyframeRequested = false
    /// A sequence header has been queued: frames may follow.
    private var hasSequenceHeader = false
    /// The AAC header has been queued: audio frames may follow.
    private var hasAudioHeader = false
    private var sentAudioFrames = 0
    private var droppedAudioFrames = 0
    private var sentFrames = 0
    private var droppedFrames = 0
    private var congestionDroppedFrames = 0
    /// Frames `send` could not hand to the loop (its queue was full); any thread.
    private let refusedFrames = Atomic<Int>(0)
    /// Audio frames `send` could not hand to the loop; any thread.
    private let refusedAudioFrames = Atomic<Int>(0)
    private var closeRequested = false
    private var isPublishing = false
    private var hasEnded = false
    private var rateMeter = ByteRateMeter()
    private var throughputMeter = ByteRateMeter()
    private var recentThroughputMeter = ByteRateMeter(windowMicros: 250_000)
    /// The last quarter second's acknowledged bytes per second.
    private var recentThroughput = 0.0
    /// The lowest round trip the kernel reported on this connection, in µs.
    private var minRoundTripMicros: Int?
    /// Pumps again while the in-flight cap holds the queue back (acks free no event).
    private var inFlightTimer: TimerHandle?
    /// Refreshes the figures in `lifecycle` while connected.
    private lazy var statsTimer = RepeatingTimer(loop: loop, every: .milliseconds(200))

    public init(url: RTMPURL, loop: EventLoop, configuration: Configuration = Configuration()) {
        self.url = url
        self.loop = loop
        self.configuration = configuration
        interleaver = FLVInterleaver(tracks: configuration.tracks,
                                     windowMicros: Int64(max(0, configuration.reorderWindowMilliseconds)) * 1000)
    }

    /// The current figures (any thread).
    public var stats: Stats { lifecycle.withLock { $0 } }

    /// The error that stopped the publisher, if any (any thread).
    public var error: RTMPClientError? { lifecycle.error }

    // MARK: - Control (any thread)

    /// Connects and publishes (the anyRTC SDK: startPushRtmpStream:); `onEvent` reports the outcome. The loop must be running.
    public func start() {
        lifecycle.setState(.connecting)
        let accepted = loop.execute { [self] in startOnLoop() }
        if !accepted { fail(.connectionLost(url: url.description, .loopShutdown)) }
    }

    /// Blocks the calling thread (never the loop's) until the stream is published;
    /// throws the reason it failed, or `.timedOut` after `timeout`.
    public func waitUntilPublished(timeout: Duration? = nil) throws {
        let limit = timeout ?? configuration.connectTimeout + .seconds(1)
        let end = lifecycle.wait(while: { $0 == .connecting || $0 == .idle }, timeout: limit)
        if let failure = end.failure { throw failure }
        guard end.state == .publishing else {
            throw RTMPClientError.timedOut(url: url.description, what: "publishing")
        }
    }

    /// Queues @setDataFrame onMetaData.
    public func send(metadata: RTMPStreamMetadata) {
        // Headers are rare and a player cannot start without them: never refused for a
        // full queue.
        loop.executeCoalesced { [self] in enqueue(.metadata(metadata)) }
    }

    /// Queues the AVC sequence header made from the encoder's SPS/PPS (Annex B); send it
    /// before the first packet and again whenever they change.
    public func send(sequenceHeader extradata: [UInt8]) throws {
        let payload = try FLVVideoTag.sequenceHeaderPayload(fromAnnexB: extradata)
        loop.executeCoalesced { [self] in
            enqueue(.video(payload: payload, dts: newestDTS ?? 0, isKeyframe: true, isConfiguration: true))
        }
    }

    /// Queues the AAC sequence header (the AudioSpecificConfig); send it before the first
    /// audio packet. FLV's flags for AAC are fixed (44 kHz, 16-bit, stereo: spec §E.4.2.1);
    /// the real rate and channels are in the config.
    public func send(audioHeader stream: AudioStreamInfo) {
        let payload = FLVAudioTag(aacPacketType: .sequenceHeader, data: stream.audioSpecificConfig).payload
        loop.executeCoalesced { [self] in enqueue(.audio(payload: payload, dts: newestDTS ?? 0, isConfiguration: true)) }
    }

    /// Queues one raw AAC frame (no ADTS header), timed by its pts on the capture clock.
    public func send(_ packet: EncodedAudioPacket) {
        let payload = FLVAudioTag(aacPacketType: .raw, data: packet.data).payload
        let item = Item.audio(payload: payload, dts: packet.pts.micros, isConfiguration: false)
        if !loop.execute({ [self] in enqueue(item) }) { refusedAudioFrames.add(1, ordering: .relaxed) }
    }

    /// Queues one encoded access unit (Annex B, as the encoder made it). The FLV payload
    /// is built on the calling thread; chunking happens on the loop.
    public func send(_ packet: EncodedVideoPacket) {
        var payload: [UInt8] = []
        let composition = Int32(clamping: (packet.pts.micros - packet.dts.micros) / 1000)
        FLVVideoTag.appendNALUnitsPayload(fromAnnexB: packet.data, keyframe: packet.isKeyframe,
                                          compositionTime: composition, to: &payload)
        let item = Item.video(payload: payload, dts: packet.dts.micros, isKeyframe: packet.isKeyframe, isConfiguration: false)
        if !loop.execute({ [self] in enqueue(item) }) {
            // The loop never saw this frame and later ones refer to it: it skips to the
            // next keyframe.
            refusedFrames.add(1, ordering: .relaxed)
        }
    }

    /// Sends what is queued, unpublishes (FCUnpublish, deleteStream) and closes; `.closed`
    /// follows (the anyRTC SDK: stopRtmpStream). Returns at once; `waitUntilClosed` waits.
    public func close() {
        let accepted = loop.execute { [self] in
            // What waits for the other track goes now: no more is coming.
            admit(interleaver.flush())
            closeRequested = true
            if client == nil {
                finishClosed()
            } else {
                pump()
            }
        }
        if !accepted { finishClosed() }
    }

    /// Waits until the publisher is closed or failed; false on timeout.
    @discardableResult
    public func waitUntilClosed(timeout: Duration) -> Bool {
        lifecycle.waitUntilEnded(timeout: timeout)
    }

    /// Closes at once, dropping what is queued (a failed close, shutdown).
    public func abort() {
        loop.execute { [self] in
            guard let client else { return finishClosed() }
            client.end(nil)
        }
    }

    // MARK: - Loop

    private func startOnLoop() {
        guard client == nil else { return }
        let client = RTMPClientConnection(url: url, mode: .publish, configuration: configuration.session, loop: loop)
        self.client = client
        // The connection's last callbacks can run after the publisher is released: hold it weakly.
        client.onEvents = { [weak self] events in self?.handle(events) }
        client.onWritable = { [weak self] in self?.pump() }
        client.onEnd = { [weak self] error in
            guard let self else { return }
            statsTimer.cancel()
            inFlightTimer?.cancel()
            inFlightTimer = nil
            updateStats()
            self.client = nil
            hasEnded = true
            isPublishing = false
            pending.removeAll()
            pendingHead = 0
            pendingBytes = 0
            pendingFrames = 0
            if let error { fail(error) } else { finishClosed() }
        }
        // Started before `open`, which can end the connection at once: `onEnd` cancels it.
        statsTimer.start { [weak self] in self?.updateStats() }
        client.open(timeout: configuration.connectTimeout, options: configuration.connectionOptions)
    }

    private func handle(_ events: [RTMPClientSessionCore.Event]) {
        for event in events {
            switch event {
            case .connected:
                onEvent?(.connected)
            case .publishing:
                client?.markReady()
                isPublishing = true
                lifecycle.setState(.publishing)
                onEvent?(.published)
                pump()
            case .failed(let status):
                client?.end(.rejected(url: url.description, status))
            case .status(let status):
                onEvent?(.status(status))
            case .playing, .metadata, .video, .audio, .streamEOF:
                break
            }
        }
    }

    private func enqueue(_ item: Item) {
        guard !closeRequested, !hasEnded else { return }
        let refused = refusedFrames.exchange(0, ordering: .relaxed)
        if refused > 0 {
            droppedFrames += refused
            gate.lostFrame()
        }
        droppedAudioFrames += refusedAudioFrames.exchange(0, ordering: .relaxed)
        switch item {
        case .metadata, .video(_, _, _, true), .audio(_, _, true):
            if case .video = item { hasSequenceHeader = true }
            if case .audio = item { hasAudioHeader = true }
            // A header follows everything sent before it, and precedes what comes after.
            admit(interleaver.flush())
            pendingBytes += item.byteCount
            pending.append((item, interleaver.lastTimestamp))
        case .video(_, let dts, let isKeyframe, false):
            guard configuration.tracks.contains(.video) else {
                droppedFrames += 1
                return
            }
            let wasDropping = gate.dropping
            switch gate.video(isKeyframe: isKeyframe, hasSequenceHeader: hasSequenceHeader, queueOverBound: isOverCap) {
            case .dropBeforeStart:
                return dropVideo(at: dts)
            case .dropDiscardingQueued:
                discardPendingFrames()
                keyframeRequested = false
                congestionDroppedFrames += 1
                dropVideo(at: dts)
                return congestionChanged()
            case .dropToKeyframe:
                congestionDroppedFrames += 1
                return dropVideo(at: dts)
            case .send:
                if wasDropping { congestionChanged() }
            }
            admit(interleaver.push(item, track: .video, dts: dts))
        case .audio(let payload, let dts, false):
            // Audio never waits for video, and congestion drops video first: only a
            // connection stalled past twice the byte cap loses audio.
            guard configuration.tracks.contains(.audio), hasAudioHeader,
                  PublishGate.admitsAudio(frameBytes: payload.count, queuedBytes: pendingBytes + (client?.unsentBytes ?? 0),
                                          maxQueuedBytes: configuration.maxQueuedBytes) else {
                droppedAudioFrames += 1
                if configuration.tracks.contains(.audio) { admit(interleaver.advance(.audio, to: dts)) }
                updateStats()
                return
            }
            admit(interleaver.push(item, track: .audio, dts: dts))
        }
        pump()
    }

    private func dropVideo(at dts: Int64) {
        droppedFrames += 1
        admit(interleaver.advance(.video, to: dts))
        updateStats()
    }

    /// Moves items the interleaver released into the send queue.
    private func admit(_ released: [(item: Item, timestamp: UInt32)]) {
        for entry in released {
            if let dts = entry.item.frameDTS { newestDTS = max(newestDTS ?? dts, dts) }
            pendingBytes += entry.item.byteCount
            if case .video = entry.item { pendingFrames += 1 }
            pending.append(entry)
        }
    }

    /// A queue at least this long (ms of media) has kept the link busy: its throughput
    /// measures the link.
    static let busyQueueMilliseconds = 100

    /// `Stats.queueDelayMilliseconds`, for a queue of `queuedMilliseconds`.
    private func queueDelay(queuedMilliseconds: Int) -> Int {
        guard let client else { return queuedMilliseconds }
        return Self.queueDelay(queuedMilliseconds: queuedMilliseconds, bytes: pendingBytes + client.unsentBytes + client.unacknowledgedBytes,
                               recentThroughput: recentThroughput)
    }

    /// How long `bytes` take to leave at `recentThroughput` (bytes/s), for a queue that spans
    /// `queuedMilliseconds` of media: that span while it is under `busyQueueMilliseconds`
    /// or nothing was carried (the throughput is then the encoder's, or says nothing), and
    /// never less than it (at most an hour).
    static func queueDelay(queuedMilliseconds: Int, bytes: Int, recentThroughput: Double) -> Int {
        guard queuedMilliseconds >= busyQueueMilliseconds, recentThroughput > 0 else { return queuedMilliseconds }
        return max(queuedMilliseconds, Int(min(Double(bytes) / recentThroughput * 1000, 3_600_000)))
    }

    private var isOverCap: Bool {
        queueDelay(queuedMilliseconds: queuedMilliseconds) > configuration.maxQueuedMilliseconds
            || pendingBytes + (client?.unsentBytes ?? 0) > configuration.maxQueuedBytes
    }

    /// Dropping started or ended: the figures and `onCongestion` say so.
    private func congestionChanged() {
        updateStats()
        onCongestion?(gate.dropping, stats)
    }

    /// Drops the video frames still waiting (a newer keyframe makes them useless);
    /// metadata, sequence headers and audio stay.
    private func discardPendingFrames() {
        var kept: [(item: Item, timestamp: UInt32)?] = []
        let before = droppedFrames
        defer { congestionDroppedFrames += droppedFrames - before }
        for entry in pending[pendingHead...] {
            if case .video(let payload, _, _, false)? = entry?.item {
                droppedFrames += 1
                pendingBytes -= payload.count
                pendingFrames -= 1
            } else {
                kept.append(entry)
            }
        }
        pending = kept
        pendingHead = 0
        droppedFrames += interleaver.discard(.video).count
    }

    /// Bytes the server has acknowledged (the kernel's count of bytes taken, less what
    /// it still holds unacknowledged).
    private func acknowledgedBytes(_ client: RTMPClientConnection) -> UInt64 {
        let written = client.bytesWritten
        return written - min(written, UInt64(client.unacknowledgedBytes))
    }

    /// Media time between the oldest unacknowledged media packet and the newest one queued.
    private var queuedMilliseconds: Int {
        guard let newest = newestDTS else { return 0 }
        var oldest: Int64?
        if let client {
            let acknowledged = acknowledgedBytes(client)
            while inFlightHead < inFlight.count, inFlight[inFlightHead].end <= acknowledged { inFlightHead += 1 }
            if inFlightHead < inFlight.count { oldest = inFlight[inFlightHead].dts }
        }
        if oldest == nil {
            for entry in pending[pendingHead...] {
                if let dts = entry?.item.frameDTS {
                    oldest = dts
                    break
                }
            }
        }
        guard let oldest else { return 0 }
        return Int(max(0, newest - oldest) / 1000)
    }

    /// Hands queued items to the connection while it takes them.
    private func pump() {
        guard let client else { return }
        if isPublishing {
            while pendingHead < pending.count, client.isWritable {
                if inFlightFull(client) {
                    retryWhenAcknowledged()
                    break
                }
                let slot = pending[pendingHead]
                pending[pendingHead] = nil  // the payload is released once sent
                pendingHead += 1
                guard let entry = slot else { continue }
                do {
                    try write(entry.item, timestamp: entry.timestamp, to: client)
                } catch {
                    client.end(.protocolViolation(url: url.description, reason: "\(error)"))
                    return
                }
            }
            if pendingHead == pending.count {
                pending.removeAll(keepingCapacity: true)
                pendingHead = 0
            } else if pendingHead > 256 {
                pending.removeFirst(pendingHead)
                pendingHead = 0
            }
            if inFlightHead > 256 {
                inFlight.removeFirst(inFlightHead)
                inFlightHead = 0
            }
        }
        updateStats()
        if closeRequested, pendingHead == pending.count || !isPublishing {
            lifecycle.setState(.closing)
            client.withCore { core in try? core.stop() }
            client.close()
        }
    }

    /// True when the kernel holds as much unacknowledged as `inFlightMilliseconds` allows.
    private func inFlightFull(_ client: RTMPClientConnection) -> Bool {
        guard let milliseconds = configuration.inFlightMilliseconds else { return false }
        if let rtt = client.roundTripMicros, rtt > 0 { minRoundTripMicros = min(minRoundTripMicros ?? rtt, rtt) }
        let limit = Self.inFlightLimit(milliseconds: milliseconds, throughput: recentThroughput,
                                       minRoundTripMicros: minRoundTripMicros ?? 0, minBytes: configuration.minInFlightBytes)
        return client.unacknowledgedBytes + client.unsentBytes >= limit
    }

    /// The bytes the kernel may hold unacknowledged: what `throughput` (bytes/s) carries in
    /// `milliseconds`, or in two round trips when that is longer, and at least `minBytes`.
    static func inFlightLimit(milliseconds: Int, throughput: Double, minRoundTripMicros: Int, minBytes: Int) -> Int {
        let seconds = max(Double(milliseconds) / 1000, 2 * Double(minRoundTripMicros) / 1e6)
        return max(minBytes, Int(min(throughput * seconds, Double(Int32.max))))
    }

    /// The in-flight cap stopped the pump: acknowledgements raise no event, so look again soon.
    private func retryWhenAcknowledged() {
        guard inFlightTimer == nil else { return }
        inFlightTimer = loop.schedule(after: .milliseconds(5)) { [weak self] in
            guard let self else { return }
            inFlightTimer = nil
            pump()
        }
    }

    private func write(_ item: Item, timestamp: UInt32, to client: RTMPClientConnection) throws {
        switch item {
        case .metadata(let metadata):
            try client.withCore { try $0.sendMetadata(metadata) }
        case .video(let payload, _, _, let isConfiguration):
            try client.withCore { try $0.sendVideo(payload, timestamp: timestamp) }
            if !isConfiguration { pendingFrames -= 1 }
            if !isConfiguration { sentFrames += 1 }
        case .audio(let payload, _, let isConfiguration):
            try client.withCore { try $0.sendAudio(payload, timestamp: timestamp) }
            if !isConfiguration { sentAudioFrames += 1 }
        }
        pendingBytes -= item.byteCount
        if let dts = item.frameDTS { inFlight.append((client.endOffset, dts)) }
    }

    private func updateStats() {
        if gate.dropping {
            let over = isOverCap
            if over {
                keyframeRequested = false
            } else if gate.wantsKeyframe(queueOverBound: over), !keyframeRequested {
                keyframeRequested = true
                onKeyframeNeeded?()
            }
        }
        let now = Clock.monotonicMicros()
        let written = client?.bytesWritten ?? lifecycle.withLock { $0.bytesSent }
        let rate = rateMeter.sample(bytes: written, at: now)
        let unacknowledged = client?.unacknowledgedBytes ?? 0
        let acknowledged = written - min(written, UInt64(unacknowledged))
        let throughput = throughputMeter.sample(bytes: acknowledged, at: now)
        recentThroughput = recentThroughputMeter.sample(bytes: acknowledged, at: now)
        let queuedMs = queuedMilliseconds
        let delayMs = queueDelay(queuedMilliseconds: queuedMs)
        let queuedBytes = pendingBytes + (client?.unsentBytes ?? 0)
        lifecycle.withLock { shared in
            shared.queuedBytes = queuedBytes
            shared.unacknowledgedBytes = unacknowledged
            shared.queuedMilliseconds = queuedMs
            shared.queueDelayMilliseconds = delayMs
            shared.sendRate = rate
            shared.throughput = throughput
            shared.recentThroughput = recentThroughput
            shared.bytesSent = written
            shared.sentFrames = sentFrames
            shared.queuedFrames = pendingFrames
            shared.droppedFrames = droppedFrames
            shared.congestionDroppedFrames = congestionDroppedFrames
            shared.isCongested = gate.dropping
            shared.sentAudioFrames = sentAudioFrames
            shared.droppedAudioFrames = droppedAudioFrames
        }
    }

    private func fail(_ error: RTMPClientError) {
        if lifecycle.fail(error) { onEvent?(.failed(error)) }
    }

    private func finishClosed() {
        updateStats()
        if lifecycle.finishClosed() { onEvent?(.closed) }
    }
}

extension RTMPPublisher.State: RTMPClientState {}
