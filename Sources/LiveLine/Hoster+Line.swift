import Foundation
import LiveAuth
import LiveCore
import LiveMix
import LiveRTMP
import LiveSignal

/// The hoster's co-host line (seed: ARRtmpHosterKit's RTC methods, DESIGN.md §4).
///
/// Each accepted co-host publishes to its pubId stream; when the server reports its
/// video opened, the hoster plays that stream and mixes it in as the next participant
/// of the layout; when it closes, the feed stops and the layout reflows. The pushed
/// stream is the mix, picture and sound: every co-host's voice is in the program, and
/// each co-host hears everyone but itself, on a mix-minus stream the hoster pushes to
/// the co-host's hear stream (`PUBID.hear`, see `CohostVoices`). A hoster in audio mode
/// opens an audio line: its co-hosts push sound only and the slots are reported as
/// `audioLineOpened` / `audioLineClosed`. Events arrive on `onLineEvent`; a refused request (an accept over
/// the limit: 602) arrives as `.refused` with the seed's code.
///
/// The line holds no more co-hosts than the mix shows (`HosterMix.lineCapacity`, sent
/// with the create): an accept past it is refused with 602, never a co-host nobody sees.
/// A lost signaling connection is retried with the push's backoff (`.reconnecting`);
/// each try creates the line again, which reclaims it while the server still holds it
/// (its co-hosts come back) or opens it afresh after a server restart (its co-hosts
/// apply again). `.disconnected` comes only when the tries run out.
extension Hoster {
    /// Opens the co-host line of `liveId` on `server` (seed: createRTCLine(token, liveId,
    /// userId, userData, liveInfo)); `lineResult` follows. userData ≤ 512 bytes and
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
                                      onEvent: { [weak self] event in self?.lineEvent(event) },
                                      report: { [weak self] event in self?.reportLine(event) },
                                      onInterrupted: { [weak self] in self?.removeAllCohosts() },
                                      onLost: { [weak self] reason in self?.lineLost(reason) })
        setLine(session)
        let stream = "\(server.rtmp.app)/\(server.rtmp.streamName)"
        let audioLine = options.livingMediaMode == .audio
        // After a reconnect the same create reclaims the line (same token user, or the
        // lineKey of this hoster's push).
        session.start(token: token, reply: lineRefusal) { [weak self] client, token, tokenUser, reply in
            client.create(liveId: liveId, userId: tokenUser ?? userId, userData: userData, liveInfo: liveInfo, token: token,
                          stream: stream, lineKey: server.lineKey, maxCohosts: self?.currentMix?.lineCapacity ?? capacity,
                          audioLine: audioLine, reply: reply)
        }
        // A switch made before the line existed (a hoster that starts muted) is told once it opens.
        let status = localAVStatus
        if !status.audio || !status.video { setLineAVStatus(audio: status.audio, video: status.video) }
    }

    /// Hands the line a fresh token (seed: renewToken), e.g. after `.tokenWillExpire`
    /// when no provider was given; `.tokenRenewed` or `.authFailed` follows.
    public func renewLineToken(_ token: String) {
        guard let line = currentLine else { return reportLine(notOpen("renewToken")) }
        line.renew(with: token)
    }

    /// Lets the applicant `peerId` co-host (seed: acceptRTCLine); 602 (`.refused`)
    /// when the line is full.
    public func acceptLine(peerId: String) {
        guard let line = currentLine else { return reportLine(notOpen("accept")) }
        line.send { [refusal = lineRefusal] in $0.accept(peerId: peerId, reply: refusal) }
    }

    /// Turns the applicant `peerId` down (seed: rejectRTCLine); it hears 601.
    public func rejectLine(peerId: String) {
        guard let line = currentLine else { return reportLine(notOpen("reject")) }
        line.send { [refusal = lineRefusal] in $0.reject(peerId: peerId, reply: refusal) }
    }

    /// Ends the co-hosting of `peerId` (seed: hangupRTCLine(peerId)); its tile leaves the mix.
    public func hangupLine(peerId: String) {
        guard let line = currentLine else { return reportLine(notOpen("hangup")) }
        line.send { [refusal = lineRefusal] in $0.hangup(peerId: peerId, reply: refusal) }
    }

    /// Closes the line for everyone (seed: closeRTCLine): guests get liveStop and line
    /// leave, every co-host leaves the mix. Any thread but the line's loop.
    public func closeLine() {
        guard let line = takeLine() else { return }
        let done = DispatchSemaphore(value: 0)
        line.send { $0.closeLine { _ in done.signal() } }
        _ = done.wait(timeout: .now() + 2)
        line.close()
        removeAllCohosts()
    }

    /// A normal or barrage message to everyone in the room (seed: sendUserMessage(type,
    /// userName, header, content)); userName ≤ 256 bytes and content ≤ 1024 bytes, both required.
    public func sendMessage(type: String = "normal", userName: String, header: String = "", content: String) {
        guard let line = currentLine else { return reportLine(notOpen("message")) }
        let refusal = lineRefusal
        line.send { $0.message(type: type, userName: userName, header: header, content: content, reply: refusal) }
    }

    /// The mix template, live (seed: setMixVideoModel:). Throws when it does not fit the
    /// canvas with the current co-hosts; the layout in use stays then.
    public func setMixVideoModel(_ template: MixTemplate) throws {
        try setVideoTemplate(template, options: mixLayoutNow.options)
    }

    /// Template and tile options, live (seed: setVideoTemplate:ver:dir:horPad:verPad:borderWidth:).
    public func setVideoTemplate(_ template: MixTemplate, options: MixOptions) throws {
        try currentMix?.setLayout(template: template, options: options)
        setMixLayout(template, options)
        // The line accepts no more co-hosts than the new layout shows.
        if let capacity = currentMix?.lineCapacity {
            currentLine?.send { [refusal = lineRefusal] in $0.setMaxCohosts(capacity, reply: refusal) }
        }
    }

    /// Tells the room the hoster's audio / video is on or off (seed:
    /// setLocalAudioEnable / setLocalVideoEnable, as remote AV status for the others).
    public func setLineAVStatus(audio: Bool, video: Bool) {
        currentLine?.send { [refusal = lineRefusal] in $0.setAVStatus(audio: audio, video: video, reply: refusal) }
    }

    /// The co-hosts now in the mix, by peerId, in layout order.
    public var mixedCohosts: [String] { currentMix?.cohostKeys ?? [] }

    // MARK: - Line loop thread

    private func lineEvent(_ event: LineEvent) {
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
        default:
            break
        }
        if let kitEvent = LineSessionEvent(event) { reportLine(kitEvent) }
    }

    private func openCohost(peerId: String, userId: String, url: RTMPURL, hear: RTMPURL?) {
        do {
            try mixStage().addCohost(key: peerId, userId: userId, stream: url, hear: hear, hearOptions: options.push) { [weak self] width, height in
                self?.reportLine(.cohostFirstFrame(peerId: peerId, width: width, height: height))
            }
        } catch {
            // Never an accepted co-host nobody sees: it is hung up and both sides hear why.
            Log.warning("co-host \(peerId) cannot join the mix: \(error); hanging it up")
            reportLine(.refused(op: "accept", code: .lineFull, message: "co-host \(peerId) does not fit the mix (\(error)): hung up"))
            hangupLine(peerId: peerId)
        }
    }

    private func lineLost(_ reason: String) {
        removeAllCohosts()
        reportLine(.disconnected(reason: reason))
    }

    func removeAllCohosts() {
        guard let mix = currentMix else { return }
        for key in mix.cohostKeys where !key.hasPrefix(HosterMix.localKeyPrefix) { mix.removeCohost(key: key) }
    }

    private func notOpen(_ op: String) -> LineSessionEvent {
        .refused(op: op, code: .lineNotStarted, message: "no line: call createLine first")
    }

    func reportLine(_ event: LineSessionEvent) { onLineEvent?(event) }

    /// Reports a request's non-zero answer as `.refused`.
    private var lineRefusal: @Sendable (LineEvent) -> Void {
        LineSession.refusal { [weak self] event in self?.reportLine(event) }
    }
}
