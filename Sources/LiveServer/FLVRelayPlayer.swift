import LiveCore
import LiveNet
import LiveRTMP

/// One HTTP-FLV or WebSocket FLV viewer of a relayed stream: the FLV header, then the
/// stream's headers, its GOP cache and the live messages, each as one FLV tag
/// (`FLVFramedBytes`, framed once per message and shared by every viewer).
///
/// It is a `RelayPlayer` like an RTMP play, with the same backpressure: its connection
/// takes the relay players' watermarks (`playerHighWatermark` / `playerLowWatermark`)
/// and `PlayerBackpressure` decides what a viewer that falls behind skips (video until
/// a keyframe, with the headers again before it). Its queue therefore never holds more
/// than the high watermark plus one message and the headers; dropped frames are counted
/// per player, per stream and in total, as RTMP players' are.
///
/// The stream ends for the viewer (the chunked body's last chunk, or a WebSocket close
/// 1000 "the stream ended") when its publisher unpublishes on purpose, and after
/// `idleTimeout` without a publisher (one that dropped may come back meanwhile, as for
/// RTMP players). Every `pingInterval` it checks that, the token's expiry under
/// `--on-expiry close`, and that a viewer with bytes waiting has taken some within
/// `idleTimeout` (a reader that stopped reading altogether is closed, counted as a
/// timeout): a viewer sends nothing, so silence on the socket proves nothing.
///
/// Confined to its connection's loop thread.
final class FLVRelayPlayer: RelayPlayer, TCPConnectionHandler, @unchecked Sendable {
    // @unchecked: all state is touched only on `connection.loop`'s thread (see above).

    /// How the FLV bytes are framed on the connection.
    enum Framing {
        /// HTTP/1.1: `Transfer-Encoding: chunked`, one chunk per tag.
        case chunked
        /// HTTP/1.0: the bytes as they are, the end of the body is the connection's.
        case untilClose
        /// One binary WebSocket message per tag (the FLV header first).
        case webSocket(WebSocketConnection)
    }

    let connection: TCPConnection
    let framing: Framing
    let key: StreamKey
    private let server: RTMPServer
    /// When the viewer's play token expires (auth on), checked under `--on-expiry close`.
    private let tokenExpiry: Int64?
    private let counters = PlayerCounters()
    private var stream: RelayStream?
    private var backpressure = PlayerBackpressure()
    private var tickTimer: TimerHandle?
    private var closed = false
    /// Since when the stream has had no publisher (nil while it has one).
    private var withoutPublisherSince: UInt64?
    /// The written byte count at the last tick that saw progress, and when.
    private var lastProgress: (written: UInt64, micros: UInt64) = (0, 0)

    var loop: EventLoop { connection.loop }
    var transport: PlayerTransport {
        if case .webSocket = framing { return .webSocketFLV }
        return .httpFLV
    }
    private var peer: String { connection.peerAddress }
    private var label: String { transport.rawValue }

    init(connection: TCPConnection, framing: Framing, key: StreamKey, server: RTMPServer, tokenExpiry: Int64?) {
        self.connection = connection
        self.framing = framing
        self.key = key
        self.server = server
        self.tokenExpiry = tokenExpiry
    }

    /// Starts playing once the connection is this player's (or its WebSocket's): from a
    /// task, so that the HTTP server has handed the connection over first (one task per
    /// viewer, so not refused for a full queue; only a loop shutting down refuses it).
    /// Loop thread.
    func begin() {
        guard loop.executeCoalesced({ self.start() }) else {
            connection.abort(nil)
            return
        }
    }

    private func start() {
        guard !closed, connection.state == .open else { return }
        // The HTTP session may have paused reading at its own (smaller) watermark.
        connection.resumeReading()
        connection.setWatermarks(high: server.configuration.playerHighWatermark, low: server.configuration.playerLowWatermark)
        let now = Clock.monotonicMicros()
        lastProgress = (connection.bytesWritten, now)
        let joined = server.registry.join(key, player: self, address: peer, counters: counters)
        stream = joined.stream
        backpressure = PlayerBackpressure(needsKeyframe: !joined.startsAtKeyframe)
        let tracks = Self.tracks(in: joined.replay)
        send(.header(hasAudio: tracks.audio, hasVideo: tracks.video))
        Log.info("\(label) \(peer): playing \(key)")
        deliver(joined.replay[...], from: joined.stream)
        scheduleTick()
    }

    /// Which tracks the FLV header announces: those the replay holds; both when it holds
    /// no media yet (a publisher that has just started).
    static func tracks(in replay: [RelayMessage]) -> (audio: Bool, video: Bool) {
        let audio = replay.contains { $0.kind == .audioHeader || $0.kind == .audio }
        let video = replay.contains { $0.kind == .videoHeader || $0.kind.isVideoFrame }
        return audio || video ? (audio, video) : (true, true)
    }

    // MARK: relaying to this viewer

    func deliver(_ messages: ArraySlice<RelayMessage>, from stream: RelayStream) {
        guard !closed, self.stream === stream else { return }
        let queuedBefore = connection.bytesQueued
        var drops = 0
        for message in messages {
            let dropped = backpressure.deliver(message, kind: message.kind, headers: { stream.headers },
                                               isWritable: { connection.isWritable }, write: { write($0) })
            if dropped { drops += 1 }
        }
        let bytes = Int(clamping: connection.bytesQueued &- queuedBefore)
        if bytes > 0 {
            RelayCounters.add(counters.bytesOut, bytes)
            RelayCounters.add(server.counters.flvBytesOut, bytes)
            counters.recordQueue(connection.queuedBytes)
        }
        if drops > 0 { countDrops(drops, in: stream) }
    }

    func lostMessages(of stream: RelayStream) {
        guard !closed, self.stream === stream else { return }
        backpressure.lostMessages()
        countDrops(1, in: stream)
    }

    func streamUnpublished(_ stream: RelayStream) {
        guard !closed, self.stream === stream else { return }
        end("the stream ended")
    }

    /// Queues one message as a tag; false when the queue refused it. A message no tag
    /// carries is skipped as if sent.
    private func write(_ message: RelayMessage) -> Bool {
        guard let framed = message.flvFramed else { return true }
        return send(framed)
    }

    @discardableResult
    private func send(_ framed: FLVFramedBytes) -> Bool {
        switch framing {
        case .chunked: connection.write(framed.buffer, ranges: framed.chunkRanges)
        case .untilClose: connection.write(framed.buffer, range: framed.body)
        case .webSocket(let socket): socket.send(encodedFrames: framed.buffer, range: framed.webSocketFrame)
        }
    }

    private func countDrops(_ count: Int, in stream: RelayStream) {
        RelayCounters.add(counters.droppedFrames, count)
        RelayCounters.add(stream.droppedFrames, count)
        RelayCounters.add(server.counters.droppedFrames, count)
    }

    // MARK: ending

    /// Ends the body in order (what is queued leaves first) and leaves the stream. A
    /// queue at its high watermark refuses the body's end (the last chunk, the close
    /// frame): it is sent once the queue has drained to the low one, and the connection
    /// is dropped if it has not within `idleTimeout`.
    private func end(_ reason: String) {
        guard !closed else { return }
        Log.info("\(label) \(peer): \(reason) (\(key)); closing")
        leave()
        finishBody(reason, deadline: Clock.monotonicMicros() + EventLoopMicros.of(server.configuration.idleTimeout))
    }

    /// How often an ending body checks whether its queue takes the end.
    private static let endRetry = Duration.milliseconds(100)

    private func finishBody(_ reason: String, deadline: UInt64) {
        guard connection.state == .open else { return }
        guard connection.isWritable else {
            if Clock.monotonicMicros() >= deadline {
                connection.abort(.timedOut("\(label) viewer's last bytes"))
                return
            }
            tickTimer = loop.schedule(after: Self.endRetry) { [self] in finishBody(reason, deadline: deadline) }
            return
        }
        switch framing {
        case .chunked:
            connection.write(FLVFramedBytes.lastChunk)
            connection.close()
        case .untilClose:
            connection.close()
        case .webSocket(let socket):
            socket.close(code: 1000, reason: reason)
        }
    }

    /// Leaves the stream (the connection is closing, closed, or ending its body).
    private func leave() {
        closed = true
        tickTimer?.cancel()
        tickTimer = nil
        guard let stream else { return }
        self.stream = nil
        stream.removePlayer(self)
        server.registry.removeIfEmpty(stream)
    }

    private func scheduleTick() {
        // The timer holds the player strongly; `leave` cancels it.
        tickTimer = loop.schedule(after: server.configuration.pingInterval) { [self] in tick() }
    }

    private func tick() {
        guard !closed, let stream else { return }
        let now = Clock.monotonicMicros()
        let idle = EventLoopMicros.of(server.configuration.idleTimeout)
        if stream.hasPublisher {
            withoutPublisherSince = nil
        } else if let since = withoutPublisherSince {
            if now &- since >= idle {
                end("no publisher for \(server.configuration.idleTimeout)")
                return
            }
        } else {
            withoutPublisherSince = now
        }
        let written = connection.bytesWritten
        if connection.queuedBytes == 0 || written != lastProgress.written {
            lastProgress = (written, now)
        } else if now &- lastProgress.micros >= idle {
            RelayCounters.add(server.counters.timeouts, 1)
            Log.warning("\(label) \(peer): took no bytes for \(server.configuration.idleTimeout); closing")
            leave()
            connection.abort(.timedOut("\(label) viewer"))
            return
        }
        if server.configuration.onExpiry == .close, let exp = tokenExpiry, let verifier = server.configuration.auth,
           verifier.hasExpired(exp: exp, nowSeconds: StreamAccess.nowSeconds()) {
            end("token expired at \(exp) (--on-expiry close)")
            return
        }
        scheduleTick()
    }

    // MARK: TCPConnectionHandler (HTTP framings; a WebSocket's own handler calls `closed(_:)`)

    func onRead(_ connection: TCPConnection, _ bytes: UnsafeRawBufferPointer) {
        // A viewer has nothing to say after its request: what it sends is ignored.
    }

    func onClose(_ connection: TCPConnection, _ error: NetError?) {
        connectionClosed(error.map { "\($0)" })
    }

    /// The connection is gone (its WebSocket's close, or the HTTP connection's).
    func connectionClosed(_ reason: String?) {
        let wasPlaying = stream != nil
        leave()
        if wasPlaying, let reason { Log.info("\(label) \(peer): closed (\(reason))") }
    }
}
