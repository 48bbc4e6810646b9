import Foundation
import LiveAuth
import LiveCore
import LiveMix
import LiveRTMP
import LiveSignal
import Synchronization

/// The hoster's co-host line (the anyRTC SDK: ARRtmpHosterKit's RTC methods, DESIGN.md §4).
///
/// Each accepted co-host publishes to its pubId stream; when the server reports its
/// video opened, the hoster plays that stream and mixes it in as the next participant
/// of the layout; when it closes, the feed stops and the layout reflows. The pushed
/// stream is the mix, picture and sound: every co-host's voice is in the program, and
/// each co-host hears everyone but itself, on a mix-minus stream the hoster pushes to
/// the co-host's hear stream (`PUBID.hear`, see `CohostVoices`). A hoster in audio mode
/// opens an audio line: its co-hosts push sound only and the slots are reported as
/// `audioLineOpened` / `audioLineClosed`. Events arrive on `onLineEvent`; a refused request (an accept over
/// the limit: 602) arrives as `.refused` with the anyRTC SDK's code.
///
/// The line holds no more co-hosts than the mix shows (`HosterMix.lineCapacity`, sent
/// with the create): an accept past it is refused with 602, never a co-host nobody sees.
/// A lost signaling connection is retried with the push's backoff (`.reconnecting`);
/// each try creates the line again, which reclaims it while the server still holds it
/// (its co-hosts come back) or opens it afresh after a server restart (its co-hosts
/// apply again). However the line ends — `closeLine` (0), the tries running out (101,
/// or 204 after a server shutdown), the server ending the session (212 token expired,
/// 211 the line reclaimed on another connection, 201 flooding, 101 silent) — the
/// co-hosts leave the mix and `.lineClosed(code:reason:)` comes, once, as the line's
/// last event (the anyRTC SDK's onRTCLineClosed(code)); line calls are then answered
/// with 600 until the next `createLine`.
extension Hoster {
    /// Opens the co-host line of `liveId` on `server` (the anyRTC SDK's createRTCLine(token,
    /// liveId, userId, userData, liveInfo)) and returns at once; `lineResult` follows. A
    /// push still connecting is waited for first (the create proves the publisher), so
    /// `startPush` then `createLine` is the order, as in the SDK; the line's guests hear
    /// liveStart while the push is published, liveStop when it stops. userData ≤ 512 bytes and
    /// liveInfo ≤ 1024 bytes (strict JSON when it starts with `{` or `[`; the living
    /// list shows it).
    ///
    /// Who may: on a server with tokens, the holder of `token` (or of the provider's
    /// tokens, renewed before they expire) allowing `line:host` on `liveId`, as the
    /// token's user (it replaces `userId`); on one
    /// without, the publisher of the stream named `liveId`: push to
    /// `LineServer.hosterPushURL(url)` and give `server` that same URL. A refusal comes as
    /// `lineResult` with its code (104 not the publisher / not allowed, 202, 212, 213).
    /// Without `token` and `tokenProvider`, the kit's `options.tokenProvider` serves the
    /// line too.
    public func createLine(server: LineServer, liveId: String, userId: String = "hoster", userData: String = "",
                           liveInfo: String = "", token: String? = nil, tokenProvider: TokenProvider? = nil) throws {
        closeLine()
        // The server holds the line to what the mix can show, so no co-host is accepted
        // into a tile that does not exist (602 instead).
        let capacity = try mixStage().lineCapacity
        let session = try LineSession(server: server, backoff: options.push.backoff,
                                      tokenProvider: tokenProvider ?? (token == nil ? options.tokenProvider : nil),
                                      onEvent: { [weak self] event in self?.lineEvent(event, serverId: server.signalURL, liveId: liveId) },
                                      report: { [weak self] event in self?.reportLine(event) },
                                      onInterrupted: { [weak self] in self?.removeAllCohosts() },
                                      onEnded: { [weak self] session, _, _ in self?.lineEnded(session) })
        setLine(session)
        let stream = "\(server.rtmp.app)/\(server.rtmp.streamName)"
        let audioLine = options.audioLine
        let refusal = lineRefusal
        // The create proves this hoster publishes the line's stream: it waits for a push
        // that is still connecting (the SDK: createRTCLine after startPushRtmpStream).
        whenPushSettled { [weak self] in
            guard let self, self.currentLine === session else { return }
            // After a reconnect the same create reclaims the line (same token user, or the
            // lineKey of this hoster's push); it says whether the live is on now.
            session.start(token: token, reply: refusal) { [weak self] client, token, tokenUser, reply in
                client.create(liveId: liveId, userId: tokenUser ?? userId, userData: userData, liveInfo: liveInfo, token: token,
                              stream: stream, lineKey: server.lineKey, maxCohosts: audioLine ? nil : self?.currentMix?.lineCapacity ?? capacity,
                              audioLine: audioLine, live: self?.isLive ?? false, reply: reply)
            }
        }
        // A switch made before the line existed (a hoster that starts muted) is told once it opens.
        let status = localAVStatus
        if !status.audio || !status.video { setLineAVStatus(audio: status.audio, video: status.video) }
    }

    /// Hands the line a fresh token (the anyRTC SDK: renewToken), e.g. after `.tokenWillExpire`
    /// when no provider was given; `.tokenRenewed` or `.authFailed` follows.
    public func renewLineToken(_ token: String) {
        guard let line = currentLine else { return reportLine(notOpen("renewToken")) }
        line.renew(with: token)
    }

    /// Lets the applicant `peerId` co-host (the anyRTC SDK: acceptRTCLine); 602 (`.refused`)
    /// when the line is full.
    public func acceptLine(peerId: String) {
        guard let line = currentLine else { return reportLine(notOpen("accept")) }
        line.send { [refusal = lineRefusal] in $0.accept(peerId: peerId, reply: refusal) }
    }

    /// Turns the applicant `peerId` down (the anyRTC SDK: rejectRTCLine); it hears 601.
    public func rejectLine(peerId: String) {
        guard let line = currentLine else { return reportLine(notOpen("reject")) }
        line.send { [refusal = lineRefusal] in $0.reject(peerId: peerId, reply: refusal) }
    }

    /// Ends the co-hosting of `peerId` (the anyRTC SDK: hangupRTCLine(peerId)); its tile leaves the mix.
    public func hangupLine(peerId: String) {
        guard let line = currentLine else { return reportLine(notOpen("hangup")) }
        line.send { [refusal = lineRefusal] in $0.hangup(peerId: peerId, reply: refusal) }
    }

    /// Closes the line for everyone (the anyRTC SDK's closeRTCLine) and returns at once:
    /// every co-host leaves the mix and this kit reports `.lineClosed(code: .ok, …)`
    /// before it returns (line calls are answered with 600 from then on); the guests get
    /// liveStop (while the live is on), lineLeave 0 and lineClosed 0. The connection
    /// closes once the server has answered, or after 2 s without an answer, and then
    /// `completion` runs, on a thread of its own (at once when there is no line). Any
    /// thread, the line's loop too.
    public func closeLine(completion: (@Sendable () -> Void)? = nil) {
        guard let line = takeLine() else {
            completion?()
            return
        }
        removeAllCohosts()
        line.finish(code: .ok, reason: "closed by the hoster")
        let closing = LineClosing(line, completion: completion)
        line.send { client in client.closeLine { _ in DispatchQueue.global().async { closing.finish() } } }
        DispatchQueue.global().asyncAfter(deadline: .now() + 2) { closing.finish() }
    }


    /// A normal or barrage message to everyone in the room (the anyRTC SDK's
    /// sendUserMessage(type, userName, header, content)); userName ≤ 256 bytes and
    /// content ≤ 1024 bytes, both required (else `.refused` with 4).
    public func sendMessage(type: LineMessageType = .normal, userName: String, header: String = "", content: String) {
        guard let line = currentLine else { return reportLine(notOpen("message")) }
        let refusal = lineRefusal
        line.send { $0.message(type: type.name, userName: userName, header: header, content: content, reply: refusal) }
    }

    /// The mix template, live (the anyRTC SDK: setMixVideoModel:). Throws when it does not fit the
    /// canvas with the current co-hosts; the layout in use stays then.
    public func setMixVideoModel(_ template: MixTemplate) throws {
        try setVideoTemplate(template, options: mixLayoutNow.options)
    }

    /// Template and tile options, live (the anyRTC SDK: setVideoTemplate:ver:dir:horPad:verPad:borderWidth:).
    public func setVideoTemplate(_ template: MixTemplate, options: MixOptions) throws {
        try currentMix?.setLayout(template: template, options: options)
        setMixLayout(template, options)
        // The line accepts no more co-hosts than the new layout shows.
        if !self.options.audioLine, let capacity = currentMix?.lineCapacity {
            currentLine?.send { [refusal = lineRefusal] in $0.setMaxCohosts(capacity, reply: refusal) }
        }
    }

    /// Tells the room the hoster's audio / video is on or off (the anyRTC SDK:
    /// setLocalAudioEnable / setLocalVideoEnable, as remote AV status for the others).
    public func setLineAVStatus(audio: Bool, video: Bool) {
        currentLine?.send { [refusal = lineRefusal] in $0.setAVStatus(audio: audio, video: video, reply: refusal) }
    }

    /// The co-hosts now in the mix, by peerId, in layout order.
    public var mixedCohosts: [String] { currentMix?.cohostKeys ?? [] }

    // MARK: - Line loop thread

    private func lineEvent(_ event: LineEvent, serverId: String, liveId: String) {
        switch event.event {
        case .cohostOpened:
            if let peerId = event.peerId, let pubId = event.pubId, let line = currentLine {
                // With tokens, the kit's provider plays the co-host's stream (HosterMix); a line
                // opened with a token of its own plays it with that one (it needs play on it).
                let token = options.tokenProvider == nil ? line.currentToken.map { "token=" + $0 } : nil
                // What the co-host hears goes to its hear stream, with the query the server gave.
                let hear = event.publishQuery.map { publish in
                    line.server.streamURL(pubId: pubId + LineStreams.hearSuffix, query: ([publish] + (token.map { [$0] } ?? [])).joined(separator: "&"))
                }
                openCohost(peerId: peerId, userId: event.userId ?? "", url: line.server.streamURL(pubId: pubId, query: token), hear: hear)
            }
        case .cohostClosed:
            if let peerId = event.peerId { currentMix?.removeCohost(key: peerId) }
        case .remoteAVStatus:
            // A co-host's camera off: its tile shows the fill image (setVideoSubBackground).
            if let peerId = event.peerId, let video = event.video { currentMix?.setCohostVideo(key: peerId, enabled: video) }
        case .lineResult where event.liveCode == .ok:
            announceShare()  // a share on before the line (re)opened
        default:
            break
        }
        if let kitEvent = LineSessionEvent(event, serverId: serverId, roomId: liveId) { reportLine(kitEvent) }
    }

    private func openCohost(peerId: String, userId: String, url: RTMPURL, hear: RTMPURL?) {
        do {
            // On an audio line the co-host is a voice: no tile.
            try mixStage().addCohost(key: peerId, userId: userId, stream: url, hear: hear, hearOptions: options.push,
                                     video: !options.audioLine) { [weak self] width, height in
                self?.reportLine(.cohostFirstFrame(peerId: peerId, width: width, height: height))
            } resized: { [weak self] width, height in
                self?.reportLine(.remoteVideoViewChanged(peerId: peerId, width: width, height: height))
            }
        } catch {
            // Never an accepted co-host nobody sees: it is hung up and both sides hear why.
            Log.warning("co-host \(peerId) cannot join the mix: \(error); hanging it up")
            reportLine(.refused(op: "accept", code: .lineFull, message: "co-host \(peerId) does not fit the mix (\(error)): hung up"))
            hangupLine(peerId: peerId)
        }
    }

    /// The line `session` ended (any way): its co-hosts leave the mix, and it is no
    /// longer the hoster's line.
    private func lineEnded(_ session: LineSession) {
        takeLine(ifItIs: session)
        removeAllCohosts()
    }

    func removeAllCohosts() {
        guard let mix = currentMix else { return }
        for key in mix.cohostKeys where !key.hasPrefix(HosterMix.localKeyPrefix) { mix.removeCohost(key: key) }
    }

    private func notOpen(_ op: String) -> LineSessionEvent {
        .refused(op: op, code: .lineNotStarted, message: "no line: call createLine first")
    }

    /// Co-host line events (the anyRTC SDK's hoster RTC delegate), most on the line's loop
    /// thread; `LineSessionEvent` says which come from others (the co-host feeds' first
    /// frames and sizes, the voices' levels, `closeLine`'s `.lineClosed` on its caller's).
    /// May be set from any thread.
    public var onLineEvent: (@Sendable (LineSessionEvent) -> Void)? {
        get { lineHandler.withLock { $0 } }
        set { lineHandler.withLock { $0 = newValue } }
    }

    func reportLine(_ event: LineSessionEvent) { onLineEvent?(event) }

    /// Reports a request's non-zero answer as `.refused`.
    var lineRefusal: @Sendable (LineEvent) -> Void {
        LineSession.refusal { [weak self] event in self?.reportLine(event) }
    }
}

/// A line being closed: its connection closes once, on the server's answer or the timeout.
private final class LineClosing: Sendable {
    private let line: LineSession
    private let completion: (@Sendable () -> Void)?
    private let done = Mutex(false)

    init(_ line: LineSession, completion: (@Sendable () -> Void)?) {
        self.line = line
        self.completion = completion
    }

    func finish() {
        let first = done.withLock { done in
            defer { done = true }
            return !done
        }
        guard first else { return }
        line.close(code: .ok, reason: "closed by the hoster")
        completion?()
    }
}
