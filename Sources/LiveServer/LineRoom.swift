import LiveCore
import LiveSignal

/// One co-host line, keyed by live id: its hoster, the guests who joined, pending
/// applications and the co-hosts on the line. Pure state: every change returns the
/// deliveries to carry out, in order; `LineRegistry` routes requests here and owns the clock.
///
/// The line's members are the hoster and its co-hosts: only they are told co-hosts'
/// stream names (pubIds); the other guests hear that a co-host opened or closed without it.
struct LineRoom: Sendable {
    struct Member: Sendable {
        let participant: LineParticipantID
        let userId: String
        let userData: String
        /// Join order, for the member pages.
        let sequence: UInt64
    }

    struct Application: Sendable {
        let peerId: String
        let guest: LineParticipantID
        let appliedAtMicros: UInt64
    }

    struct Cohost: Sendable {
        let peerId: String
        let pubId: String
        /// Given only to the co-host: the relay admits a publish of `pubId` with it (and,
        /// without tokens, a play of its hear stream).
        let secret: String
        /// Given only to the hoster: the relay admits a publish of the co-host's hear
        /// stream (`pubId` + `LineStreams.hearSuffix`, what the co-host hears) with it.
        let hearSecret: String
        let guest: LineParticipantID
        var audio = true
        var video = true
    }

    let liveId: String
    private(set) var hoster: LineParticipantID
    let liveInfo: String
    /// Creation order, for the living list.
    let sequence: UInt64
    /// The most co-hosts at once: the server's limit, or less when the hoster's mix shows
    /// fewer (set at create, changed by setMaxCohosts; co-hosts already on stay).
    var maxCohosts: Int
    /// Without tokens, the lineKey the hoster created the line with: a create with the
    /// same key (from the publisher holding it) reclaims the line.
    let hosterKey: String?
    /// The hoster lives in audio mode: the co-host events say `audioLine`.
    let audioLine: Bool
    /// The hoster's push is on (create's and setLive's `live`): guests hear liveStart /
    /// liveStop when it changes, a joining guest liveStart while it is on.
    private(set) var isLive: Bool
    private(set) var members: [LineParticipantID: Member] = [:]
    private(set) var applications: [Application] = []
    private(set) var cohosts: [Cohost] = []
    /// The member count changed since it was last sent (sent once per tick, not per change).
    private(set) var memberCountChanged = false
    /// The hoster's open share (shareOpen), told to every guest who joins while it lasts.
    private(set) var share: (type: Int, info: String)?

    init(liveId: String, hoster: Member, liveInfo: String, sequence: UInt64, maxCohosts: Int, hosterKey: String? = nil,
         audioLine: Bool = false, live: Bool = true) {
        self.liveId = liveId
        self.hoster = hoster.participant
        self.liveInfo = liveInfo
        self.sequence = sequence
        self.maxCohosts = maxCohosts
        self.hosterKey = hosterKey
        self.audioLine = audioLine
        isLive = live
        members[hoster.participant] = hoster
    }

    /// The hoster came back on a new connection (its old one lost or not yet noticed
    /// dead): `member` takes its place, the room and everyone in it stay. The new
    /// connection learns the line as the old one knew it: the member count, every
    /// co-host's video (with pubId, so the mix plays it again) and the applications
    /// still waiting for an answer.
    mutating func reclaim(by member: Member) -> [LineDelivery] {
        // It keeps its place in the member pages (first).
        let place = members.removeValue(forKey: hoster)?.sequence ?? member.sequence
        hoster = member.participant
        members[member.participant] = Member(participant: member.participant, userId: member.userId, userData: member.userData,
                                             sequence: place)
        let to = member.participant
        return [.send(LineEvent(.memberCount, total: memberCount), to: to)]
            + cohosts.map { .send(openedForHoster($0), to: to) }
            + applications.compactMap { application in
                members[application.guest].map { .send(LineEvent(.application, peerId: application.peerId, userId: $0.userId,
                                                                 userData: $0.userData), to: to) }
            }
    }

    /// Everyone in the room, hoster included.
    var memberCount: Int { members.count }
    var everyone: [LineParticipantID] { members.keys.sorted() }

    func member(_ participant: LineParticipantID) -> Member? { members[participant] }
    func member(userId: String) -> Member? { members.values.first { $0.userId == userId } }
    func application(of guest: LineParticipantID) -> Application? { applications.first { $0.guest == guest } }
    func cohost(of guest: LineParticipantID) -> Cohost? { cohosts.first { $0.guest == guest } }
    func cohost(pubId: String) -> Cohost? { cohosts.first { $0.pubId == pubId } }

    /// The hoster or a co-host: the line's members, who may know and play co-host streams.
    func isOnLine(_ participant: LineParticipantID) -> Bool { participant == hoster || cohost(of: participant) != nil }

    /// Members in join order.
    var membersInOrder: [Member] { members.values.sorted { $0.sequence < $1.sequence } }

    // MARK: membership

    /// A guest joined: it learns whether the live is on (liveStart) and who is on the
    /// line; the count goes out with the next tick.
    mutating func join(_ member: Member) -> [LineDelivery] {
        members[member.participant] = member
        memberCountChanged = true
        return (isLive ? [.send(LineEvent(.liveStart), to: member.participant)] : [])
            + cohosts.map { .send(opened($0, withPubId: false), to: member.participant) }
            + (share.map { [.send(shareOpened($0), to: member.participant)] } ?? [])
    }

    /// A guest left (by request, disconnect, heartbeat loss or an expired token): its
    /// application or slot ends; the count goes out with the next tick.
    mutating func leave(_ guest: LineParticipantID, reason: String) -> [LineDelivery] {
        var out: [LineDelivery] = []
        if let application = application(of: guest) {
            applications.removeAll { $0.guest == guest }
            out.append(.send(LineEvent(.applicationCancelled, code: .ok, reason: reason, peerId: application.peerId), to: hoster))
        }
        if cohost(of: guest) != nil { out += closeCohost(of: guest, reason: reason, notifyGuest: false) }
        members[guest] = nil
        memberCountChanged = true
        return out
    }

    /// The count to everyone when it changed since the last call (the registry's tick).
    mutating func takeMemberCount() -> [LineDelivery] {
        guard memberCountChanged else { return [] }
        memberCountChanged = false
        return [.send(LineEvent(.memberCount, total: memberCount), to: everyone)]
    }

    /// The hoster's push started or stopped: every guest hears liveStart or liveStop
    /// (nothing when it is no change).
    mutating func setLive(_ live: Bool) -> [LineDelivery] {
        guard live != isLive else { return [] }
        isLive = live
        let guests = everyone.filter { $0 != hoster }
        return guests.isEmpty ? [] : [.send(LineEvent(live ? .liveStart : .liveStop), to: guests)]
    }

    /// The line ends (closed by the hoster, or the hoster is gone): every guest hears
    /// the live stopped (when it was on) and the line left; the co-hosts' streams end.
    func closeAll(code: LiveCode, reason: String) -> [LineDelivery] {
        let guests = everyone.filter { $0 != hoster }
        return (isLive ? [.send(LineEvent(.liveStop), to: guests)] : [])
            + [.send(LineEvent(.lineLeave, code: code, message: code.message, reason: reason), to: guests)]
            + cohosts.map { LineDelivery(to: [], .endStream(pubId: $0.pubId)) }
    }

    // MARK: guest requests

    mutating func apply(_ guest: LineParticipantID, request: LineRequest, nowMicros: UInt64, peerId: String) -> [LineDelivery] {
        if cohost(of: guest) != nil { return [LineRegistry.reply(request, .alreadyOpen, "already on the line", to: guest)] }
        if application(of: guest) != nil { return [LineRegistry.reply(request, .alreadyOpen, "already applied", to: guest)] }
        applications.append(Application(peerId: peerId, guest: guest, appliedAtMicros: nowMicros))
        let member = members[guest]!
        var reply = LineRegistry.reply(request, .ok, to: guest)
        reply.action = .send(changed(reply.event!) { $0.peerId = peerId })
        return [reply, .send(LineEvent(.application, peerId: peerId, userId: member.userId, userData: member.userData), to: hoster)]
    }

    mutating func cancel(_ guest: LineParticipantID, request: LineRequest) -> [LineDelivery] {
        guard let application = application(of: guest) else {
            return [LineRegistry.reply(request, .invalidParams, "no application to cancel", to: guest)]
        }
        applications.removeAll { $0.guest == guest }
        return [LineRegistry.reply(request, .ok, to: guest),
                .send(LineEvent(.applicationCancelled, code: .ok, reason: "withdrawn", peerId: application.peerId), to: hoster)]
    }

    /// hangupRTCLine on the guest side: withdraws an application or leaves the line. A
    /// guest can only hang itself up: a peerId other than its own is refused (104).
    mutating func guestHangup(_ guest: LineParticipantID, request: LineRequest) -> [LineDelivery] {
        let own = application(of: guest)?.peerId ?? cohost(of: guest)?.peerId
        if let peerId = request.peerId, peerId != own {
            return [LineRegistry.reply(request, .unauthorized, "only the hoster may hang up another participant", to: guest)]
        }
        if application(of: guest) != nil { return cancel(guest, request: request) }
        guard cohost(of: guest) != nil else {
            return [LineRegistry.reply(request, .invalidParams, "neither applying nor on the line", to: guest)]
        }
        return [LineRegistry.reply(request, .ok, to: guest)] + closeCohost(of: guest, reason: "hungUpByGuest", notifyGuest: false)
    }

    mutating func setAVStatus(_ participant: LineParticipantID, request: LineRequest) -> [LineDelivery] {
        guard let audio = request.audio, let video = request.video else {
            return [LineRegistry.reply(request, .invalidParams, "setAVStatus needs audio and video", to: participant)]
        }
        let peerId: String
        if participant == hoster {
            peerId = "hoster"
        } else if let index = cohosts.firstIndex(where: { $0.guest == participant }) {
            cohosts[index].audio = audio
            cohosts[index].video = video
            peerId = cohosts[index].peerId
        } else {
            return [LineRegistry.reply(request, .invalidParams, "only the hoster and co-hosts have audio and video", to: participant)]
        }
        return [LineRegistry.reply(request, .ok, to: participant),
                .send(LineEvent(.remoteAVStatus, peerId: peerId, audio: audio, video: video), to: others(than: participant))]
    }

    // MARK: hoster requests

    /// A co-host's voice level as the hoster mixes it: the other guests hear it as
    /// `remoteAudioActive` (the anyRTC SDK's onRTCRemoteAudioActive on the guest side).
    mutating func audioLevel(_ request: LineRequest) -> [LineDelivery] {
        guard let level = request.level, (0...100).contains(level), let showTime = request.showTime, (1...60_000).contains(showTime) else {
            return [LineRegistry.reply(request, .invalidParams, "audioLevel needs a level of 0 to 100 and a showTime of 1 to 60000 ms", to: hoster)]
        }
        guard let cohost = cohosts.first(where: { $0.peerId == request.peerId }) else {
            return [LineRegistry.reply(request, .invalidParams, "no co-host \(request.peerId ?? "(no peerId)")", to: hoster)]
        }
        var event = LineEvent(.remoteAudioActive, peerId: cohost.peerId, userId: member(cohost.guest)?.userId)
        (event.level, event.showTime) = (level, showTime)
        // Everyone but the hoster, who measured it, and the co-host, whose own voice it is.
        return [LineRegistry.reply(request, .ok, to: hoster), .send(event, to: others(than: hoster).filter { $0 != cohost.guest })]
    }

    mutating func accept(_ request: LineRequest, pubId: String, secret: String, hearSecret: String) -> [LineDelivery] {
        guard let peerId = request.peerId, let application = applications.first(where: { $0.peerId == peerId }) else {
            return [LineRegistry.reply(request, .invalidParams, "no application \(request.peerId ?? "(no peerId)")", to: hoster)]
        }
        guard cohosts.count < maxCohosts else {
            // acceptRTCLine fails when the line is full, and every applicant waiting is
            // told so (onRTCCancelLine 602) instead of waiting for the timeout.
            var out = [LineRegistry.reply(request, .lineFull, "the line already holds \(maxCohosts) co-hosts, its most", to: hoster)]
            for pending in applications {
                out.append(.send(LineEvent(.applicationResult, code: .lineFull, message: LiveCode.lineFull.message,
                                           reason: "lineFull", peerId: pending.peerId), to: pending.guest))
                out.append(.send(LineEvent(.applicationCancelled, code: .lineFull, reason: "lineFull", peerId: pending.peerId), to: hoster))
            }
            applications.removeAll()
            return out
        }
        applications.removeAll { $0.peerId == peerId }
        let cohost = Cohost(peerId: peerId, pubId: pubId, secret: secret, hearSecret: hearSecret, guest: application.guest)
        var reply = LineRegistry.reply(request, .ok, to: hoster)
        reply.action = .send(changed(reply.event!) { $0.peerId = peerId; $0.pubId = pubId })
        var accepted = LineEvent(.applicationResult, code: .ok, message: LiveCode.ok.message, peerId: peerId, pubId: pubId,
                                 publishQuery: "line=\(secret)")
        accepted.audioLine = audioLine ? true : nil
        var out = [reply, .send(accepted, to: application.guest)]
        // The hoster's copy carries the hear stream's publish query; the other co-hosts'
        // the pubId; the audience's neither.
        let others = others(than: application.guest).filter { $0 != hoster }
        out.append(.send(openedForHoster(cohost), to: hoster))
        let onLine = others.filter(isOnLine), audience = others.filter { !isOnLine($0) }
        if !onLine.isEmpty { out.append(.send(opened(cohost, withPubId: true), to: onLine)) }
        if !audience.isEmpty { out.append(.send(opened(cohost, withPubId: false), to: audience)) }
        cohosts.append(cohost)
        return out
    }

    mutating func reject(_ request: LineRequest) -> [LineDelivery] {
        guard let peerId = request.peerId, let application = applications.first(where: { $0.peerId == peerId }) else {
            return [LineRegistry.reply(request, .invalidParams, "no application \(request.peerId ?? "(no peerId)")", to: hoster)]
        }
        applications.removeAll { $0.peerId == peerId }
        return [LineRegistry.reply(request, .ok, to: hoster),
                .send(LineEvent(.applicationResult, code: .hosterRejected, message: LiveCode.hosterRejected.message,
                                reason: "rejected", peerId: peerId), to: application.guest)]
    }

    mutating func hosterHangup(_ request: LineRequest) -> [LineDelivery] {
        guard let peerId = request.peerId, let cohost = cohosts.first(where: { $0.peerId == peerId }) else {
            return [LineRegistry.reply(request, .invalidParams, "no co-host \(request.peerId ?? "(no peerId)")", to: hoster)]
        }
        return [LineRegistry.reply(request, .ok, to: hoster)] + closeCohost(of: cohost.guest, reason: "hungUpByHoster", notifyGuest: true)
    }

    // MARK: share (the anyRTC SDK's screen share: onRTCShareOpen / onRTCShareClose)

    /// The hoster shares a picture: everyone else hears shareOpen with its type and info
    /// and the hoster's userId and userData. Opening it again with the same type and info
    /// (a reconnected hoster announcing it again) tells nobody anything new.
    mutating func openShare(_ request: LineRequest) -> [LineDelivery] {
        let opened = (type: request.shareType ?? 0, info: request.shareInfo ?? "")
        let reply = LineRegistry.reply(request, .ok, to: hoster)
        if let share, share == opened { return [reply] }
        share = opened
        return [reply, .send(shareOpened(opened), to: others(than: hoster))]
    }

    /// The hoster's share ended: everyone else hears shareClose. Without an open share it
    /// is refused (4).
    mutating func closeShare(_ request: LineRequest) -> [LineDelivery] {
        guard share != nil else { return [LineRegistry.reply(request, .invalidParams, "no share is open", to: hoster)] }
        share = nil
        return [LineRegistry.reply(request, .ok, to: hoster),
                .send(LineEvent(.shareClose, userId: members[hoster]?.userId), to: others(than: hoster))]
    }

    private func shareOpened(_ share: (type: Int, info: String)) -> LineEvent {
        changed(LineEvent(.shareOpen, userId: members[hoster]?.userId, userData: members[hoster]?.userData)) {
            $0.shareType = share.type
            $0.shareInfo = share.info
        }
    }

    // MARK: messages and timers

    func broadcast(_ event: LineEvent, from sender: LineParticipantID) -> [LineDelivery] {
        [.send(event, to: others(than: sender))]
    }

    /// Cancels applications older than `timeoutMicros` (onRTCCancelLine / onRTCApplyLineResult with 605).
    mutating func expireApplications(nowMicros: UInt64, timeoutMicros: UInt64, timeoutText: String) -> [LineDelivery] {
        var out: [LineDelivery] = []
        applications.removeAll { application in
            guard nowMicros >= application.appliedAtMicros + timeoutMicros else { return false }
            out.append(.send(LineEvent(.applicationResult, code: .isStopped, message: timeoutText, reason: "timeout",
                                       peerId: application.peerId), to: application.guest))
            out.append(.send(LineEvent(.applicationCancelled, code: .isStopped, reason: "timeout", peerId: application.peerId), to: hoster))
            return true
        }
        return out
    }

    // MARK: private

    /// The co-host's slot ends: the others hear it, and the relay ends its stream.
    private mutating func closeCohost(of guest: LineParticipantID, reason: String, notifyGuest: Bool) -> [LineDelivery] {
        guard let cohost = cohost(of: guest) else { return [] }
        cohosts.removeAll { $0.guest == guest }
        var out: [LineDelivery] = []
        if notifyGuest { out.append(.send(LineEvent(.hungUp, reason: reason, peerId: cohost.peerId), to: guest)) }
        let userId = members[guest]?.userId
        out += tellOthers(than: guest) { withPubId in
            var closed = LineEvent(.cohostClosed, reason: reason, peerId: cohost.peerId, pubId: withPubId ? cohost.pubId : nil,
                                   userId: userId)
            closed.audioLine = audioLine ? true : nil
            return closed
        }
        return out + [LineDelivery(to: [], .endStream(pubId: cohost.pubId))]
    }

    /// One event for the line's members (with the pubId) and one for the other guests (without).
    private func tellOthers(than participant: LineParticipantID, _ event: (_ withPubId: Bool) -> LineEvent) -> [LineDelivery] {
        let others = others(than: participant)
        let onLine = others.filter(isOnLine)
        let audience = others.filter { !isOnLine($0) }
        return (onLine.isEmpty ? [] : [.send(event(true), to: onLine)]) + (audience.isEmpty ? [] : [.send(event(false), to: audience)])
    }

    private func opened(_ cohost: Cohost, withPubId: Bool) -> LineEvent {
        let member = members[cohost.guest]
        var event = LineEvent(.cohostOpened, peerId: cohost.peerId, pubId: withPubId ? cohost.pubId : nil, userId: member?.userId,
                              userData: member?.userData)
        event.audioLine = audioLine ? true : nil
        return event
    }

    /// The hoster learns where to publish what the co-host hears (its hear stream).
    private func openedForHoster(_ cohost: Cohost) -> LineEvent {
        changed(opened(cohost, withPubId: true)) { $0.publishQuery = "line=\(cohost.hearSecret)" }
    }

    private func others(than participant: LineParticipantID) -> [LineParticipantID] {
        everyone.filter { $0 != participant }
    }
}

func changed<Value>(_ value: Value, _ change: (inout Value) -> Void) -> Value {
    var copy = value
    change(&copy)
    return copy
}
