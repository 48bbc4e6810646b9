import LiveAuth
import LiveCore
import LiveNet
import LiveRTMP

/// One RTMP connection of the relay: the handshake, then `RTMPServerSessionCore` fed
/// from the socket, its decisions (publish, play) taken against the `StreamRegistry`,
/// and, as a player, the relayed messages queued with per-player backpressure.
///
/// Backpressure: a player's connection refuses writes once its queue holds the high
/// watermark (`TCPConnection.isWritable`). A refused or skipped frame puts the player
/// in "wait for a keyframe" (`PlayerBackpressure`): it gets no media until a keyframe
/// arrives while its queue has drained to the low watermark, then the headers it
/// missed, the keyframe and what follows. Its queue therefore never holds more than
/// the high watermark plus one message (the headers owed besides), and its slowness
/// costs no one else anything. Dropped video frames are counted per player, per
/// stream and in total.
///
/// Timers: the handshake must finish within `handshakeTimeout`; a connection from which
/// no byte arrives for `idleTimeout` is closed by LiveNet (the server's own writes do not
/// count); every `pingInterval` the session sends a ping request (a player waiting for a
/// publisher stays alive by answering it), closes a
/// publisher that sent no media for `idleTimeout`, and closes a connection that has
/// neither published nor played for `idleTimeout`.
///
/// Memory: what the peer makes the core hold (unfinished messages and undecoded
/// bytes, `RTMPChunkDecoder.unfinishedByteCount`) is capped per connection by the
/// core and charged to the server-wide `RTMPServer.unfinishedBudget` after every read;
/// a read that would pass that budget closes the connection. Closing gives the charge
/// back, drops the core's buffers and, after a large charge, asks glibc to return the
/// freed memory to the system (`HeapTrim`).
///
/// Confined to its connection's loop thread.
final class RTMPServerSession: TCPConnectionHandler, RelayPublisher, RelayPlayer, @unchecked Sendable {
    // @unchecked: all state is touched only on `connection.loop`'s thread (see above).

    private struct Playback {
        let stream: RelayStream
        let streamID: UInt32
        let counters: PlayerCounters
    }

    let connection: TCPConnection
    private let server: RTMPServer
    private var handshake: RTMPHandshakeServer? = RTMPHandshakeServer()
    // `core`, `playback` and `backpressure` are touched once or more per relayed message
    // and player, on the loop thread only; the core is a pure value (its methods call no
    // code), and `backpressure.deliver`'s callbacks touch the core and the connection,
    // never `backpressure` or `playback`: no access to them can overlap another, so they
    // go without run-time exclusivity checks (see `TCPConnection.queue`).
    @exclusivity(unchecked) private var core: RTMPServerSessionCore
    private var handshakeTimer: TimerHandle?
    private var tickTimer: TimerHandle?
    private var publication: (stream: RelayStream, streamID: UInt32)?
    @exclusivity(unchecked) private var playback: Playback?
    /// The playback's keyframe wait, kept beside it so that a delivery changes it in place.
    @exclusivity(unchecked) private var backpressure = PlayerBackpressure()
    private var lastMediaMicros: UInt64 = 0
    private var withoutRoleSinceMicros: UInt64 = 0
    /// Bytes charged to `server.unfinishedBudget`, and the most ever charged.
    private var unfinishedCharged = 0
    private var unfinishedPeak = 0
    private var closed = false
    /// With auth on: the token sent with connect (tcUrl's query), already verified.
    private var connectToken: String?
    /// With auth on: when the token of the current publication or playback expires.
    private var tokenExpiry: Int64?

    var loop: EventLoop { connection.loop }
    private var peer: String { connection.peerAddress }

    init(connection: TCPConnection, server: RTMPServer) {
        self.connection = connection
        self.server = server
        core = RTMPServerSessionCore(configuration: Self.coreConfiguration(server.configuration,
                                                                           announcement: server.connectAnnouncement))
    }

    static func coreConfiguration(_ configuration: RTMPServer.Configuration,
                                  announcement: AMF0Object = AMF0Object()) -> RTMPServerSessionCore.Configuration {
        var core = RTMPServerSessionCore.Configuration(
            chunkSize: configuration.chunkSize, windowAcknowledgementSize: configuration.windowAcknowledgementSize,
            maxMessageLength: configuration.maxMessageLength, maxCommandMessageLength: configuration.maxCommandMessageLength,
            maxChunkStreams: configuration.maxChunkStreams,
            maxUnfinishedBytes: configuration.maxUnfinishedBytesPerConnection,
            maxNameLength: configuration.maxNameLength, maxQueryLength: configuration.maxQueryLength)
        core.connectAnnouncement = announcement
        return core
    }

    /// Takes over the accepted connection. Loop thread.
    func start() {
        connection.handler = self
        // Timers hold the session strongly (a weak reference would move every retain of
        // this hot object to the slow side-table path); `onClose` cancels them, which
        // releases the closures and breaks the cycle.
        handshakeTimer = loop.schedule(after: server.configuration.handshakeTimeout) { [self] in
            handshakeTimedOut()
        }
    }

    // MARK: reading

    func onRead(_ connection: TCPConnection, _ bytes: UnsafeRawBufferPointer) {
        RelayCounters.add(server.counters.bytesIn, bytes.count)
        do {
            if handshake != nil {
                try readHandshake(Array(bytes))
            } else {
                try readChunks(bytes)
            }
        } catch {
            fail("\(error)")
        }
    }

    private func readHandshake(_ bytes: [UInt8]) throws {
        guard var state = handshake else { return }
        let step = try state.feed(bytes)
        handshake = state
        if !step.output.isEmpty { send(step.output) }
        guard step.done else { return }
        handshake = nil
        handshakeTimer?.cancel()
        handshakeTimer = nil
        withoutRoleSinceMicros = Clock.monotonicMicros()
        scheduleTick()
        if !step.leftover.isEmpty { try readChunks(step.leftover) }
    }

    private func readChunks<Bytes: Collection>(_ bytes: Bytes) throws where Bytes.Element == UInt8 {
        let events = try core.feed(bytes)
        try chargeUnfinished()
        for event in events where !closed {
            try handle(event)
        }
        flushCore()
    }

    /// Brings this connection's share of the server-wide budget in line with what its
    /// core holds now; throws when the budget cannot cover it.
    private func chargeUnfinished() throws {
        let held = core.decoder.unfinishedByteCount
        if held < unfinishedCharged {
            server.unfinishedBudget.refund(unfinishedCharged - held)
        } else if held > unfinishedCharged, !server.unfinishedBudget.charge(held - unfinishedCharged) {
            throw RTMPServer.BudgetError.unfinishedBytesTotal(limit: server.unfinishedBudget.limit)
        }
        unfinishedCharged = held
        unfinishedPeak = max(unfinishedPeak, held)
    }

    private func handle(_ event: RTMPServerSessionCore.Event) throws {
        switch event {
        case .connected(let parameters):
            try connected(parameters)
        case .publishRequested(let streamID, let name, let query, _):
            try publish(streamID: streamID, name: name, query: query)
        case .playRequested(let streamID, let name, let query):
            try play(streamID: streamID, name: name, query: query)
        case .metadata(let streamID, let data, let raw):
            guard let publication, publication.streamID == streamID, case .onMetaData = data else { return }
            let message = try RTMPMessage.data(data).raw(timestamp: raw.timestamp, messageStreamID: streamID)
            try publication.stream.relay(message, kind: .metadata, from: self, nowMicros: Clock.monotonicMicros())
        case .media(let raw):
            guard let publication, publication.streamID == raw.messageStreamID else { return }
            let now = Clock.monotonicMicros()
            lastMediaMicros = now
            let kind = RelayMessage.Kind.classify(typeID: raw.typeID, payload: raw.payload)
            try publication.stream.relay(raw, kind: kind, from: self, nowMicros: now)
        case .unpublished(let streamID, _):
            guard let publication, publication.streamID == streamID else { return }
            Log.info("rtmp \(peer): unpublished \(publication.stream.key)")
            stopPublishing(notifyPlayers: true)
        case .playStopped(let streamID, _):
            guard let playback, playback.streamID == streamID else { return }
            stopPlaying()
        default:
            break
        }
    }

    /// The stream's key: the app without any query clients put on it ("live?token=…",
    /// as OBS sends a server URL with one), so tokens never reach keys and listings.
    private func streamKey(_ name: String) -> StreamKey {
        StreamKey(app: StreamAccess.app(core.connectParameters), name: name)
    }

    /// With auth on, a token in connect's tcUrl must verify; a bad one is refused at once
    /// with NetConnection.Connect.Rejected instead of the success the core prepared.
    private func connected(_ parameters: RTMPConnectParameters) throws {
        guard let verifier = server.configuration.auth, let token = StreamAccess.connectToken(parameters) else { return }
        do {
            _ = try verifier.verify(token, nowSeconds: StreamAccess.nowSeconds())
            connectToken = token
        } catch {
            RelayCounters.add(server.counters.refusedConnects, 1)
            Log.warning("rtmp \(peer): connect refused: \(error.statusText)")
            // The core's answer (window size, bandwidth, chunk size, _result) is dropped
            // unsent: the peer still reads 128-byte chunks and sees only the refusal.
            _ = core.takeOutput()
            forgetCoreChunkStreams()
            try core.send(.setChunkSize(UInt32(server.configuration.chunkSize)))
            let status = RTMPStatus(level: "error", code: RTMPStatus.Code.connectRejected, description: error.statusText)
            try core.send(.command(.error(transactionID: 1, properties: .null, information: .object(status.object))))
            flushCore()
            closed = true
            connection.close()
        }
    }

    /// With auth on, the claims granting `action` on `key`; nil when auth is off. A refusal
    /// is logged, counted and thrown for the caller to answer.
    private func authorize(_ action: AccessAction, _ key: StreamKey, query: String?) throws(TokenError) -> AccessClaims? {
        guard let verifier = server.configuration.auth else { return nil }
        do {
            return try StreamAccess.authorize(verifier, action, key: key, query: query, connectToken: connectToken,
                                              nowSeconds: StreamAccess.nowSeconds())
        } catch {
            Log.warning("rtmp \(peer): \(action.rawValue) of \(key) refused: \(error.statusText)")
            throw error
        }
    }

    /// What `admit` decided: the claims that allow the action (nil with auth off), or why not.
    private enum Admission {
        case allowed(AccessClaims?)
        case refused(String)
    }

    /// The token check (with auth on), then the relay's own rule for the action: the
    /// publish rule for every name, the play rule for co-host (`line-…`) and call
    /// (`call-…`) names. Refusals are logged; the caller counts and answers them.
    private func admit(_ action: AccessAction, _ key: StreamKey, query: String?) -> Admission {
        let claims: AccessClaims?
        do {
            claims = try authorize(action, key, query: query)
        } catch {
            return .refused(error.statusText)
        }
        let rule: String? = switch action {
        case .publish: server.publishAuthorizer.refusal(key, query: query, claims: claims)
        case .play where PlayAuthorizer.guards(key): server.playAuthorizer.refusal(key, query: query, claims: claims)
        default: nil
        }
        if let rule {
            Log.warning("rtmp \(peer): \(action.rawValue) of \(key) refused: \(rule)")
            return .refused(rule)
        }
        return .allowed(claims)
    }

    private func publish(streamID: UInt32, name: String, query: String?) throws {
        guard publication == nil, playback == nil else {
            try core.rejectPublish(streamID: streamID, description: "This connection already has a stream")
            return
        }
        let key = streamKey(name)
        let claims: AccessClaims?
        switch admit(.publish, key, query: query) {
        case .allowed(let granted):
            claims = granted
        case .refused(let reason):
            RelayCounters.add(server.counters.refusedPublishes, 1)
            try core.rejectPublish(streamID: streamID, code: RTMPStatus.Code.publishBadName, description: reason)
            return
        }
        let (stream, claim) = server.registry.claim(key, by: self, address: peer, query: query, authorized: claims != nil)
        switch claim {
        case .accepted(let replaced):
            if let replaced {
                RelayCounters.add(server.counters.takeovers, 1)
                Log.info("rtmp \(peer): takes over \(key)")
                replaced.loop.executeCoalesced { replaced.replaced() }
            }
            // The rule once more, now that the stream is claimed: a call or a co-host that
            // ended between the check and the claim found no publisher here to end.
            if let late = server.publishAuthorizer.refusal(key, query: query, claims: claims) {
                stream.endPublishing(self, notifyPlayers: true)
                server.registry.removeIfEmpty(stream)
                RelayCounters.add(server.counters.refusedPublishes, 1)
                Log.warning("rtmp \(peer): publish of \(key) refused: \(late)")
                try core.rejectPublish(streamID: streamID, code: RTMPStatus.Code.publishBadName, description: late)
                return
            }
            publication = (stream, streamID)
            tokenExpiry = claims?.exp
            lastMediaMicros = Clock.monotonicMicros()
            try core.acceptPublish(streamID: streamID)
            Log.info("rtmp \(peer): publishing \(key)")
        case .refused(let holder):
            RelayCounters.add(server.counters.refusedPublishes, 1)
            Log.warning("rtmp \(peer): publish of \(key) refused, \(holder) is publishing it")
            try core.rejectPublish(streamID: streamID, code: RTMPStatus.Code.publishBadName,
                                   description: "\(key) is already being published")
        }
    }

    private func play(streamID: UInt32, name: String, query: String?) throws {
        guard publication == nil, playback == nil else {
            try core.rejectPlay(streamID: streamID, description: "This connection already has a stream")
            return
        }
        let key = streamKey(name)
        let claims: AccessClaims?
        switch admit(.play, key, query: query) {
        case .allowed(let granted):
            claims = granted
        case .refused(let reason):
            RelayCounters.add(server.counters.refusedPlays, 1)
            try core.rejectPlay(streamID: streamID, code: RTMPStatus.Code.playFailed, description: reason)
            return
        }
        let counters = PlayerCounters()
        let joined = server.registry.join(key, player: self, address: peer, counters: counters)
        playback = Playback(stream: joined.stream, streamID: streamID, counters: counters)
        backpressure = PlayerBackpressure(needsKeyframe: !joined.startsAtKeyframe)
        tokenExpiry = claims?.exp
        try core.acceptPlay(streamID: streamID)
        flushCore()
        Log.info("rtmp \(peer): playing \(joined.stream.key)")
        deliver(joined.replay[...], from: joined.stream)
    }

    private func stopPublishing(notifyPlayers: Bool) {
        guard let publication else { return }
        self.publication = nil
        withoutRoleSinceMicros = Clock.monotonicMicros()
        publication.stream.endPublishing(self, notifyPlayers: notifyPlayers)
        server.registry.removeIfEmpty(publication.stream)
    }

    private func stopPlaying() {
        guard let playback else { return }
        self.playback = nil
        withoutRoleSinceMicros = Clock.monotonicMicros()
        playback.stream.removePlayer(self)
        server.registry.removeIfEmpty(playback.stream)
    }

    // MARK: relaying to this player

    func deliver(_ messages: ArraySlice<RelayMessage>, from stream: RelayStream) {
        guard !closed, let play = playback, play.stream === stream else { return }
        let streamID = play.streamID
        let queuedBefore = connection.bytesQueued
        var drops = 0
        for message in messages {
            let dropped = backpressure.deliver(message, kind: message.kind, headers: { Self.headers(of: stream) },
                                               isWritable: { connection.isWritable },
                                               write: { write($0, streamID: streamID) })
            if dropped { drops += 1 }
        }
        // The counters once a batch: a merged write hands a player many messages at once.
        let bytes = Int(clamping: connection.bytesQueued &- queuedBefore)
        if bytes > 0 {
            RelayCounters.add(play.counters.bytesOut, bytes)
            RelayCounters.add(server.counters.bytesOut, bytes)
            play.counters.recordQueue(connection.queuedBytes)
        }
        if drops > 0 { countDrops(play, drops) }
    }

    /// The stream's headers, out of line: inlined into `deliver`, the compiler begins
    /// the cache's run-time exclusivity check on every delivery, not only when a player
    /// needs the headers again.
    @inline(never)
    private static func headers(of stream: RelayStream) -> [RelayMessage] { stream.headers }

    func lostMessages(of stream: RelayStream) {
        guard !closed, let play = playback, play.stream === stream else { return }
        backpressure.lostMessages()
        countDrops(play, 1)
    }

    func streamUnpublished(_ stream: RelayStream) {
        guard !closed, let play = playback, play.stream === stream else { return }
        backpressure.publisherLeft()
        try? core.notifyUnpublished(streamID: play.streamID)
        flushCore()
    }

    /// Queues one relayed message: the shared bytes when this player can take them as
    /// they are, else an encoding of its own. False when the queue is full.
    private func write(_ message: RelayMessage, streamID: UInt32) -> Bool {
        if streamID == RelayMessage.sharedMessageStreamID, message.chunkSize == core.outgoingChunkSize {
            guard connection.write(message.encoded) else { return false }
            let csid = message.raw.chunkStreamID
            if csid != RTMPChunkStreamID.audio, csid != RTMPChunkStreamID.video {
                // The core sends on this chunk stream too (onStatus): its next header
                // there must not lean on one the peer never saw from it.
                core.didSendSelfContained(onChunkStreamID: csid)
            }
        } else {
            var raw = message.raw
            raw.messageStreamID = streamID
            guard connection.isWritable, (try? core.send(raw)) != nil else { return false }
            let bytes = core.takeOutput()
            guard connection.write(bytes) else {
                forgetCoreChunkStreams()
                return false
            }
        }
        return true
    }

    private func countDrops(_ play: Playback, _ count: Int) {
        RelayCounters.add(play.counters.droppedFrames, count)
        RelayCounters.add(play.stream.droppedFrames, count)
        RelayCounters.add(server.counters.droppedFrames, count)
    }

    // MARK: publisher side

    func replaced() {
        guard !closed else { return }
        Log.info("rtmp \(peer): replaced as publisher; closing")
        publication = nil
        connection.close()
    }

    // MARK: writing

    private func flushCore() {
        guard !closed, core.pendingOutputCount > 0 else { return }
        send(core.takeOutput())
    }

    private func send(_ bytes: [UInt8]) {
        if connection.write(bytes) {
            RelayCounters.add(server.counters.bytesOut, bytes.count)
        } else {
            forgetCoreChunkStreams()
        }
    }

    /// After a refused write the peer never saw those messages, so the core's header
    /// compression must not refer to them.
    private func forgetCoreChunkStreams() {
        for csid in [RTMPChunkStreamID.control, RTMPChunkStreamID.command, RTMPChunkStreamID.streamCommand,
                     RTMPChunkStreamID.audio, RTMPChunkStreamID.video] {
            core.didSendSelfContained(onChunkStreamID: csid)
        }
    }

    // MARK: timers and closing

    private func handshakeTimedOut() {
        guard !closed, handshake != nil else { return }
        Log.warning("rtmp \(peer): no handshake within \(server.configuration.handshakeTimeout); closing")
        connection.abort(.timedOut("RTMP handshake"))
    }

    private func scheduleTick() {
        tickTimer = loop.schedule(after: server.configuration.pingInterval) { [self] in
            tick()
        }
    }

    private func tick() {
        guard !closed else { return }
        let now = Clock.monotonicMicros()
        let idle = EventLoopMicros.of(server.configuration.idleTimeout)
        if publication != nil, now &- lastMediaMicros > idle {
            Log.warning("rtmp \(peer): publisher sent no media for \(server.configuration.idleTimeout); closing")
            connection.abort(.timedOut("RTMP publisher media"))
            return
        }
        if server.configuration.onExpiry == .close, publication != nil || playback != nil, let exp = tokenExpiry,
           let verifier = server.configuration.auth, verifier.hasExpired(exp: exp, nowSeconds: StreamAccess.nowSeconds()) {
            Log.warning("rtmp \(peer): token expired at \(exp); closing (--on-expiry close)")
            connection.abort(.timedOut("RTMP session token"))
            return
        }
        if publication == nil, playback == nil, now &- withoutRoleSinceMicros > idle {
            Log.warning("rtmp \(peer): neither published nor played for \(server.configuration.idleTimeout); closing")
            connection.abort(.timedOut("RTMP session without a stream"))
            return
        }
        try? core.send(.userControl(.pingRequest(timestamp: UInt32(truncatingIfNeeded: now / 1000))))
        flushCore()
        scheduleTick()
    }

    private func fail(_ reason: String) {
        guard !closed else { return }
        RelayCounters.add(server.counters.protocolErrors, 1)
        Log.warning("rtmp \(peer): \(reason); closing")
        connection.abort(nil)
    }

    func onClose(_ connection: TCPConnection, _ error: NetError?) {
        // Every timeout (handshake, idle, silent publisher) ends here as `.timedOut`.
        if case .timedOut? = error { RelayCounters.add(server.counters.timeouts, 1) }
        closed = true
        handshakeTimer?.cancel()
        handshakeTimer = nil
        tickTimer?.cancel()
        tickTimer = nil
        stopPublishing(notifyPlayers: false)
        stopPlaying()
        server.unfinishedBudget.refund(unfinishedCharged)
        unfinishedCharged = 0
        // The session may outlive its connection a little (a task already queued to
        // its loop); its buffers need not. A read the budgets refused was never charged.
        let held = max(unfinishedPeak, core.decoder.unfinishedByteCount)
        core = RTMPServerSessionCore(configuration: core.configuration)
        handshake = nil
        if held >= HeapTrim.threshold { server.heapTrim.request(on: loop) }
        if let error, error != .loopShutdown { Log.info("rtmp \(peer): closed (\(error))") }
    }
}

/// Durations as the microseconds the monotonic clock counts.
enum EventLoopMicros {
    static func of(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        return UInt64(max(0, seconds * 1_000_000 + attoseconds / 1_000_000_000_000))
    }
}
