import Foundation
import LiveCodec
import LiveAuth
import LiveCore
import LiveRTMP
import LiveSignal
import Synchronization

/// The guest's co-host line (the anyRTC SDK: ARRtmpGuestKit's RTC methods, DESIGN.md §4).
///
/// Once the hoster accepts, the guest captures `options.cohost`'s source and publishes
/// it to its pubId stream (`rtmp://SERVER/APP/<pubId>?line=SECRET`), which the hoster
/// mixes into its own; the push stops when either side hangs up or the line closes.
/// Events arrive on `onLineEvent`; refused requests as `.refused` with the anyRTC SDK's code.
/// While co-hosting, the guest also plays its hear stream (`PUBID.hear`, the hoster's
/// mix of everyone but this co-host) and hears that instead of the program's sound,
/// which carries its own voice late (`GuestPipeline.startHearing`); it hears the program
/// again when co-hosting ends. On an audio line the push carries sound only.
/// A lost signaling connection stops the co-host push and is retried with
/// `options.reconnect` (`.reconnecting`), joining again each time until `lineResult` 0;
/// the guest is then a plain member and applies again to co-host.
///
/// However the line ends for the guest — `leaveLine` (0), the hoster closing it
/// (`lineLeave` 0), the tries running out (101, or 204 after a server shutdown; a
/// `lineLeave` 101, the hoster's connection lost, starts them as a lost connection of
/// the guest's own does, so the guest is back once the hoster re-created the line),
/// the server ending the session (212 token expired, 201 flooding, 101 silent) — the
/// co-host push and the remote renders stop
/// and `.lineClosed(code:reason:)` comes, once, as the line's last event (the anyRTC
/// SDK's onRTCLineClosed(code)); line calls are then answered with 600 until the next
/// `joinLine`.
///
/// The co-host's camera (the anyRTC SDK's guest kit camera calls): `switchCamera`,
/// `setCameraZoom`, `setMirror`, `setLocalVideoCapturer` (preview) and
/// `setRawFrameHook` (onRTCCaptureVideoPixelBuffer) work before and while co-hosting,
/// on the running push from its next frame; `options.linkMediaMode` `.audio` makes the
/// co-host push sound only (the room hears its video as off).
extension Guest {
    /// Joins the line of `liveId` on `server` (the anyRTC SDK: joinRTCLine(token, liveId, userId,
    /// userData)); `lineResult` and `liveStart` follow. On a server with tokens, `token`
    /// (or the provider's tokens, renewed before they expire) must allow `line:guest` or
    /// `line:host` on `liveId`, and the user id is the token's (it replaces `userId`). A user id already in the
    /// room is refused (604). Without `token` and `tokenProvider`, the kit's
    /// `options.tokenProvider` serves the line too.
    public func joinLine(server: LineServer, liveId: String, userId: String, userData: String = "",
                         token: String? = nil, tokenProvider: TokenProvider? = nil) throws {
        leaveLine()
        let session = try LineSession(server: server, backoff: options.reconnect,
                                      tokenProvider: tokenProvider ?? (token == nil ? options.tokenProvider : nil),
                                      onEvent: { [weak self] event in self?.lineEvent(event, serverId: server.signalURL, liveId: liveId) },
                                      report: { [weak self] event in self?.reportLine(event) },
                                      onInterrupted: { [weak self] in
                                          self?.stopCohostPush()
                                          self?.stopRemoteRenders()
                                      },
                                      onEnded: { [weak self] session, _, _ in
                                          guard let self else { return }
                                          shared.withLock { shared in
                                              if shared.line === session { shared.line = nil }
                                          }
                                          stopCohostPush()
                                          stopRemoteRenders()
                                      })
        shared.withLock { $0.line = session }
        // After a reconnect the guest joins again (and may apply again).
        session.start(token: token, reply: lineRefusal) { client, token, tokenUser, reply in
            client.join(liveId: liveId, userId: tokenUser ?? userId, userData: userData, token: token, reply: reply)
        }
    }

    /// Hands the line a fresh token (the anyRTC SDK: renewToken), e.g. after `.tokenWillExpire`
    /// when no provider was given; `.tokenRenewed` or `.authFailed` follows.
    public func renewLineToken(_ token: String) {
        guard let line = currentLine else { return reportLine(notJoined("renewToken")) }
        line.renew(with: token)
    }

    /// Applies to co-host (the anyRTC SDK: applyRTCLine); `applicationResult` follows (0 accepted:
    /// the push starts; 601 rejected, 602 full, 605 timed out).
    public func applyLine() {
        guard let line = currentLine else { return reportLine(notJoined("apply")) }
        line.send { [refusal = lineRefusal] in $0.apply(reply: refusal) }
    }

    /// Withdraws the application, or leaves co-hosting and stops the push (the anyRTC SDK:
    /// hangupRTCLine). The guest stays in the room.
    public func hangupLine() {
        stopCohostPush()
        guard let line = currentLine else { return reportLine(notJoined("hangup")) }
        line.send { [refusal = lineRefusal] in $0.hangup(reply: refusal) }
    }

    /// Leaves the room (the anyRTC SDK's leaveRTCLine): co-hosting ends, the connection
    /// closes, and `.lineClosed(code: .ok, …)` is reported before it returns. Waits up to
    /// 2 s for the server's answer. Any thread but the line's loop.
    public func leaveLine() {
        let session = shared.withLock { shared in
            defer { shared.line = nil }
            return shared.line
        }
        guard let session else { return }
        stopCohostPush()
        stopRemoteRenders()
        if !session.isFinished {
            let done = DispatchSemaphore(value: 0)
            session.send { $0.leave { _ in done.signal() } }
            _ = done.wait(timeout: .now() + 2)
        }
        session.close(code: .ok, reason: "left the line")
    }

    /// `leaveLine` without blocking: returns at once, and `completion` runs (on a thread
    /// of its own) once the server answered, or 2 s passed, and the connection closed;
    /// `.lineClosed(code: .ok, …)` comes just before it. Any thread, the line's loop too.
    public func leaveLine(completion: @escaping @Sendable () -> Void) {
        Thread.detachNewThread { [self] in
            leaveLine()
            completion()
        }
    }

    /// A normal or barrage message to everyone in the room (the anyRTC SDK's
    /// sendUserMessage(type, userName, header, content)); userName ≤ 256 bytes and
    /// content ≤ 1024 bytes, both required (else `.refused` with 4).
    public func sendMessage(type: LineMessageType = .normal, userName: String, header: String = "", content: String) {
        guard let line = currentLine else { return reportLine(notJoined("message")) }
        let refusal = lineRefusal
        line.send { $0.message(type: type.name, userName: userName, header: header, content: content, reply: refusal) }
    }

    /// Off: the co-host push sends a black picture instead of the camera, at its normal
    /// frame rate, and the room hears remote AV status (the anyRTC SDK: setLocalVideoEnable:).
    public func setLocalVideoEnable(_ enabled: Bool) {
        let (pipeline, status) = shared.withLock { shared in
            shared.localAV.video = enabled
            return (shared.cohostPipeline, shared.localAV)
        }
        pipeline?.setVideoEnabled(enabled)
        tellAVStatus(status)
    }

    /// Off: the co-host push's audio track carries silence in place of the sound (its
    /// timing goes on, see `HosterPipeline.setAudioEnabled`), and the room hears remote
    /// AV status (the anyRTC SDK: setLocalAudioEnable:). Before co-hosting it sets how the push
    /// starts, and the room hears it once the guest is accepted.
    public func setLocalAudioEnable(_ enabled: Bool) {
        let (pipeline, status) = shared.withLock { shared in
            shared.localAV.audio = enabled
            return (shared.cohostPipeline, shared.localAV)
        }
        pipeline?.setAudioEnabled(enabled)
        tellAVStatus(status)
    }

    /// Plays the co-host `pubId`'s own stream rather than the mix (the anyRTC SDK:
    /// setRemoteVideoRender:withRTCPubId:, once `cohostOpened` named the pubId, which
    /// only the line's hoster and co-hosts are told): each decoded frame goes to `render`
    /// on that stream's decode thread (the frame is reused afterwards); nil stops it. Its
    /// first frame and later size changes come as `.renderFirstFrame` and
    /// `.renderViewChanged` on `onLineEvent`. The play uses the kit's timeout, reconnect and
    /// buffer target (`Options.bufferTargetMilliseconds`). It
    /// stops by itself when that co-host leaves the line or the guest does. With a token
    /// provider (or a line opened with a token) the play carries a token, as a relay
    /// with tokens on wants from line members. Any thread; blocks while a token provider
    /// answers. Throws when the guest is in no line or the play cannot start.
    public func setRemoteVideoRender(pubId: String, render: (@Sendable (VideoFrame) -> Void)?) throws {
        let previous = shared.withLock { $0.remoteRenders.removeValue(forKey: pubId) }
        previous?.stop()
        guard let render else { return }
        guard let line = currentLine else { throw LiveError(.lineNotStarted, "no line: call joinLine first") }
        let query = options.tokenProvider == nil ? line.currentToken.map { "token=" + $0 } : nil
        let pipeline = try GuestPipeline(configuration: playConfiguration(url: line.server.streamURL(pubId: pubId, query: query)))
        pipeline.onFrame = render
        pipeline.onEvent = { [weak self] event in
            switch event {
            case .firstFrame(let width, let height): self?.reportLine(.renderFirstFrame(pubId: pubId, width: width, height: height))
            case .sizeChanged(let width, let height): self?.reportLine(.renderViewChanged(pubId: pubId, width: width, height: height))
            default: break
            }
        }
        try pipeline.start()
        shared.withLock { $0.remoteRenders[pubId] = pipeline }
    }

    /// Stops every co-host stream `setRemoteVideoRender` plays (any thread).
    func stopRemoteRenders(pubId: String? = nil) {
        let stopped = shared.withLock { shared in
            let stopped = pubId.map { key in shared.remoteRenders.removeValue(forKey: key).map { [$0] } ?? [] }
                ?? Array(shared.remoteRenders.values)
            if pubId == nil { shared.remoteRenders.removeAll() }
            return stopped
        }
        stopped.forEach { $0.stop() }
    }

    /// Tells the room the co-host's switches; an audio link (linkMediaMode) sends no picture.
    private func tellAVStatus(_ status: (audio: Bool, video: Bool)) {
        let video = status.video && options.linkMediaMode == .video
        currentLine?.send { [refusal = lineRefusal] in $0.setAVStatus(audio: status.audio, video: video, reply: refusal) }
    }

    /// True while the guest publishes to its pubId stream.
    public var isCohosting: Bool {
        shared.withLock { $0.cohostPipeline != nil }
    }

    /// The co-host push's capture and encode figures (zero when not co-hosting).
    public var cohostStats: PipelineStats {
        shared.withLock { $0.cohostPipeline?.stats ?? PipelineStats() }
    }

    // MARK: - Line loop thread

    private var currentLine: LineSession? {
        shared.withLock { $0.line }
    }

    private func lineEvent(_ event: LineEvent, serverId: String, liveId: String) {
        let kitEvent = LineSessionEvent(event, serverId: serverId, roomId: liveId)
        switch event.event {
        case .applicationResult where event.liveCode == .ok:
            if let pubId = event.pubId, let line = currentLine {
                let audioLine = event.audioLine == true
                startCohostPush(url: line.server.streamURL(pubId: pubId, query: event.publishQuery), audioOnly: audioLine)
                // Only this co-host may play its hear stream: with its publish query (or its token's user).
                playingPipeline?.startHearing(url: line.server.streamURL(pubId: pubId + LineStreams.hearSuffix, query: event.publishQuery),
                                              tokenProvider: options.tokenProvider)
                // The room hears only co-hosts' switches: one made before the accept is told
                // now, and so is the picture an audio link (linkMediaMode) never sends.
                let status = shared.withLock { $0.localAV }
                let video = status.video && (audioLine || options.linkMediaMode == .video)
                if !status.audio || !video {
                    line.send { [refusal = lineRefusal] in $0.setAVStatus(audio: status.audio, video: video, reply: refusal) }
                }
            }
        case .lineLeave:
            // Closed by the hoster: the line is over for this guest (lineLeave, then
            // lineClosed 0). The hoster's connection lost: it may come back and re-create
            // the line, so the guest joins again as after a lost connection of its own.
            if let kitEvent { reportLine(kitEvent) }
            if event.liveCode == .ok {
                currentLine?.end(code: .ok, reason: "the hoster closed the line")
            } else {
                currentLine?.interrupt(reason: "the hoster's connection was lost (\(event.reason ?? "gone"))")
            }
            return
        case .hungUp, .liveStop, .tokenExpired:
            stopCohostPush()
            stopRemoteRenders()
        case .cohostClosed:
            if let pubId = event.pubId { stopRemoteRenders(pubId: pubId) }
        default:
            break
        }
        if let kitEvent { reportLine(kitEvent) }
    }

    private func startCohostPush(url: RTMPURL, audioOnly: Bool) {
        let epoch = shared.withLock { $0.cohostEpoch }
        // The pipeline's connect blocks for a moment: keep it off the line's loop.
        Thread.detachNewThread { [weak self] in
            guard let self else { return }
            do {
                // The hoster's pipeline: the co-host's picture and sound (`options.cohost`).
                var configuration = options.cohost
                if audioOnly { configuration.livingMediaMode = .audio }
                // The camera in use (switchCamera) through the camera's shared filters.
                configuration.source = cohostCamera.sourceSpec
                let filters = configuration.livingMediaMode == .video ? try cohostCamera.makeFilterChain() : nil
                let pipeline = try HosterPipeline(configuration: configuration, filters: filters, testMix: false)
                let push = RTMPPublishSink(url: url, options: options.cohostPush)
                push.encoder = pipeline.encoder
                push.onEvent = { [weak self] event in
                    guard let self else { return }
                    // A push stopped on purpose (hang-up, leave) is not lost when the server
                    // ends its stream a moment before the push ends: no reconnecting or failed.
                    if case .closed = event {} else if self.cohostPushStopped(since: epoch) { return }
                    self.reportLine(.cohostPush(event))
                }
                pipeline.addSink(push)
                // The local picture and sound, as the hoster kit reports its own.
                let picture = LocalPictureSize()
                pipeline.onSourceFrame { [weak self] frame, source in
                    if let event = picture.event(frame, from: source) { self?.reportLine(.cohostPush(event)) }
                }
                let showTime = configuration.audioLevelIntervalMilliseconds
                pipeline.onAudioLevel(every: showTime) { [weak self] level in
                    self?.reportLine(.cohostPush(.localAudioActive(level: level, showTime: showTime)))
                }
                let (current, previous) = shared.withLock { shared -> (Bool, HosterPipeline?) in
                    guard epoch == shared.cohostEpoch else { return (false, nil) }
                    let previous = shared.cohostPipeline
                    shared.cohostPipeline = pipeline
                    pipeline.setVideoEnabled(shared.localAV.video)
                    pipeline.setAudioEnabled(shared.localAV.audio)
                    return (true, previous)
                }
                guard current else { return }
                previous?.stop()
                try pipeline.start()
            } catch {
                // Stopped meanwhile (the line was lost, hung up or left while the push was
                // still connecting): that is why it failed, and nothing to report.
                guard !cohostPushStopped(since: epoch) else { return }
                Log.warning("co-host push to \(url) failed: \(error)")
                shared.withLock { $0.cohostPipeline = nil }
                reportLine(.cohostPush(.failed((error as? LiveError)?.code ?? .networkDisconnected)))
            }
        }
    }

    /// True once the push started at `epoch` was asked to stop (any thread).
    private func cohostPushStopped(since epoch: Int) -> Bool {
        shared.withLock { $0.cohostEpoch != epoch }
    }

    /// Stops the co-host push without waiting (any thread).
    func stopCohostPush() {
        let (pipeline, playing) = shared.withLock { shared in
            defer {
                shared.cohostPipeline = nil
                shared.cohostEpoch += 1
            }
            return (shared.cohostPipeline, shared.playing)
        }
        pipeline?.stop()
        playing?.stopHearing()
    }

    private func notJoined(_ op: String) -> LineSessionEvent {
        .refused(op: op, code: .lineNotStarted, message: "no line: call joinLine first")
    }

    func reportLine(_ event: LineSessionEvent) { onLineEvent?(event) }

    /// Reports a request's non-zero answer as `.refused`.
    private var lineRefusal: @Sendable (LineEvent) -> Void {
        LineSession.refusal { [weak self] event in self?.reportLine(event) }
    }
}
