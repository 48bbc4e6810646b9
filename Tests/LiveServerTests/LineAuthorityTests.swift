import Foundation
import LiveCore
import LiveSignal
import Testing
@testable import LiveServer

/// Issue 11's line authority and signaling budgets, on the pure registry: who may do
/// what, how much a participant may send, what a room sends how often, and what reaches
/// the living list and the member pages.
@Suite("Line authority and budgets (pure)")
struct LineAuthorityTests {
    typealias H = LineHarness

    /// The members of `delivery`'s `kind` events, summed over deliveries.
    private static func sends(_ deliveries: [LineDelivery], _ kind: LineEvent.Kind) -> Int {
        deliveries.filter { $0.event?.event == kind }.reduce(0) { $0 + $1.recipients.count }
    }

    @Test("member pages: any page number, Int.max included, is answered without arithmetic overflow")
    func pageOverflow() throws {
        var h = H()
        h.open(guests: 20)
        // Before: max(0, page - 1) * size trapped (checked) or read before the array (-Ounchecked).
        for page in [Int.max, 1_229_782_938_247_303_442, Int.max / 15 + 2, 3, Int.min, 0, -1] {
            let members = try #require(h.registry.memberPage(liveId: "room", page: page))
            #expect(members.members.isEmpty == (page > 2), "page \(page)")
            #expect(members.total == 21)
        }
        #expect(h.registry.memberPage(liveId: "room", page: 2)?.members.map(\.userId) == (15...20).map { "g\($0)" })
        var zero = H(limits: changed(LineLimits()) { $0.membersPerPage = 0 })
        zero.open(guests: 2)
        #expect(zero.registry.memberPage(liveId: "room", page: Int.max)?.members.isEmpty == true)
    }

    @Test("a user id already in the room cannot join again: a guest joining as the hoster's user is refused (604)")
    func userIdTaken() throws {
        var h = H()
        h.open(guests: 1)
        h.send(H.guest(2), LineRequest(op: .join, liveId: "room", userId: "host"))
        #expect(h.reply(H.guest(2))?.liveCode == .alreadyOpen)
        #expect(h.event(H.guest(2), .lineResult)?.liveCode == .alreadyOpen)
        h.send(H.guest(3), LineRequest(op: .join, liveId: "room", userId: "g1"))
        #expect(h.reply(H.guest(3))?.liveCode == .alreadyOpen)
        // The impostor is in no room: it cannot speak at all, let alone as the hoster.
        h.send(H.guest(2), LineRequest(op: .message, userName: "Host", content: "I am the host"))
        #expect(h.reply(H.guest(2))?.liveCode == .lineNotStarted)
        #expect(h.registry.roomSummaries.first?.members == 2)
        // A token's user counts, not the request's userId.
        h.send(H.guest(4), LineRequest(op: .join, liveId: "room", userId: nil), admission: .admitted(userId: "g1", expiresAtMicros: nil))
        #expect(h.reply(H.guest(4))?.liveCode == .alreadyOpen)
        // Anonymous guests (no user id) may be many.
        h.send(H.guest(5), LineRequest(op: .join, liveId: "room"))
        h.send(H.guest(6), LineRequest(op: .join, liveId: "room"))
        #expect(h.reply(H.guest(6))?.liveCode == .ok)
    }

    @Test("a non-hoster's accept, reject, hangup of another and close are refused with 104, and nothing changes")
    func nonHosterRefused() throws {
        var h = H()
        h.open(guests: 3)
        let (peer1, pub1) = try h.cohost(1)
        let peer2 = try h.apply(2)
        for (guest, request) in [(H.guest(3), LineRequest(op: .accept, peerId: peer2)),
                                 (H.guest(3), LineRequest(op: .reject, peerId: peer2)),
                                 (H.guest(3), LineRequest(op: .hangup, peerId: peer1)),
                                 (H.guest(2), LineRequest(op: .hangup, peerId: peer1)),
                                 (H.guest(1), LineRequest(op: .close)),
                                 (H.guest(1), LineRequest(op: .accept, peerId: peer2))] {
            h.send(guest, request)
            #expect(h.reply(guest)?.liveCode == .unauthorized, "\(request.op) by \(guest)")
            #expect(h.last.count == 1, "\(request.op) by \(guest) did more than answer: \(h.last)")
        }
        // Still: guest 1 co-hosts (its stream publishable), guest 2's application waits, the room stands.
        #expect(h.registry.publishRefusal(streamName: pub1, query: nil) != nil)
        #expect(h.registry.playRefusal(streamName: pub1, query: nil, userId: "host", checksUsers: true) == nil)
        h.send(h.hoster, LineRequest(op: .accept, peerId: peer2))
        #expect(h.reply(h.hoster)?.liveCode == .ok)
        #expect(h.registry.roomSummaries.first?.members == 4)
        // A guest may still hang up itself, naming its own peerId or none.
        h.send(H.guest(1), LineRequest(op: .hangup, peerId: peer1))
        #expect(h.reply(H.guest(1))?.liveCode == .ok)
    }

    @Test("requests over 20/s (burst 40) are answered with 201; a client that keeps going is disconnected; the budget refills")
    func rateLimit() throws {
        var h = H()
        h.open(guests: 1)
        h.advance(seconds: 0)
        for _ in 0..<39 {
            h.send(H.guest(1), LineRequest(op: .heartbeat))
            #expect(h.reply(H.guest(1))?.liveCode == .ok)
        }
        h.send(H.guest(1), LineRequest(op: .heartbeat))
        #expect(h.reply(H.guest(1))?.liveCode == .badRequest)
        // A second later, 20 more tokens: 19 go through (the refused request is owed).
        h.nowMicros += 1_000_000
        for _ in 0..<19 {
            h.send(H.guest(1), LineRequest(op: .heartbeat))
            #expect(h.reply(H.guest(1))?.liveCode == .ok)
        }
        var refused = 0
        var dropped = false
        for _ in 0..<100 where !dropped {
            h.send(H.guest(1), LineRequest(op: .message, userName: "spam", content: "spam"))
            if h.reply(H.guest(1))?.liveCode == .badRequest { refused += 1 }
            dropped = h.last.contains { $0.reaches(H.guest(1)) && $0.action == .disconnect(reason: "far more than 20.0 requests per second", code: .badRequest) }
        }
        #expect(dropped)
        #expect(refused == 39)
        #expect(h.registry.roomSummaries.first?.members == 1)
        // Pings count too.
        var pinger = H()
        pinger.open(guests: 1)
        let drops = (0..<100).flatMap { _ in pinger.registry.touch(H.guest(1), nowMicros: pinger.nowMicros) }
        #expect(drops.contains { $0.reaches(H.guest(1)) && $0.event == nil })
    }

    @Test("1000 members joining: one memberCount event per tick for the room, not one per member per change")
    func memberCountCoalesced() throws {
        var h = H(limits: changed(LineLimits()) { $0.maxMembers = 1001 })
        h.open(guests: 0)
        var counted = 0
        for n in 1...1000 {
            h.send(H.guest(UInt64(n)), LineRequest(op: .join, liveId: "room", userId: "g\(n)"))
            counted += Self.sends(h.last, .memberCount)
            if n % 100 == 0 { counted += Self.sends(h.advance(seconds: 0.25), .memberCount) }
        }
        // Ten ticks, each one event to everyone then in the room: Σ 101+…+1001 ≈ 5.5k
        // recipients (before: one event to everyone per join, ≈ 500k).
        #expect(counted == stride(from: 101, through: 1001, by: 100).reduce(0, +))
        #expect(h.advance(seconds: 0.25).isEmpty)
        // One delivery per event: a message to 1000 others is encoded once.
        h.send(H.guest(1), LineRequest(op: .message, userName: "g1", content: "hello"))
        let messages = h.last.filter { $0.event?.event == .message }
        #expect(messages.count == 1)
        #expect(messages.first?.recipients.count == 1000)
    }

    @Test("a live id over 256 bytes is refused (4) for create and join")
    func liveIdBudget() throws {
        var h = H()
        let long = String(repeating: "r", count: 257)
        h.send(h.hoster, LineRequest(op: .create, liveId: long, userId: "host"))
        #expect(h.reply(h.hoster)?.liveCode == .invalidParams)
        #expect(h.registry.roomSummaries.isEmpty)
        h.send(H.guest(1), LineRequest(op: .join, liveId: long, userId: "g"))
        #expect(h.reply(H.guest(1))?.liveCode == .invalidParams)
        h.send(h.hoster, LineRequest(op: .create, liveId: String(repeating: "r", count: 256), userId: "host"))
        #expect(h.reply(h.hoster)?.liveCode == .ok)
    }

    @Test("the room cap: a join beyond maxMembers is refused with 209")
    func roomCap() throws {
        var h = H(limits: changed(LineLimits()) { $0.maxMembers = 3 })
        h.open(guests: 2)
        h.send(H.guest(3), LineRequest(op: .join, liveId: "room", userId: "g3"))
        #expect(h.reply(H.guest(3))?.liveCode == .noResources)
        h.send(H.guest(1), LineRequest(op: .leave))
        h.send(H.guest(3), LineRequest(op: .join, liveId: "room", userId: "g3"))
        #expect(h.reply(H.guest(3))?.liveCode == .ok)
    }

    @Test("liveInfo: JSON-looking text must be strict JSON ([1,] and a BOM refused); the living list stays strict JSON",
          arguments: ["[1,]", "\u{FEFF}{\"a\":1}", "{\"a\":1,}", "{'a':1}", "[01]", "{\"a\":NaN}", "[1] [2]", "{\"a\":\"\u{01}\"}",
                      String(repeating: "[", count: 40) + String(repeating: "]", count: 40)])
    func liveInfoRefused(_ liveInfo: String) throws {
        var h = H()
        h.send(h.hoster, LineRequest(op: .create, liveId: "room", userId: "host", liveInfo: liveInfo))
        #expect(h.reply(h.hoster)?.liveCode == .invalidParams)
        #expect(h.registry.livingListJSON() == "{\"LiveList\":[],\"LiveMembers\":[]}")
    }

    @Test("liveInfo accepted: strict JSON appears as JSON, other text as a string; the list is strict JSON either way")
    func liveInfoAccepted() throws {
        var h = H()
        let infos = [" {\"t\":\"x\",\"n\":-1.5e3,\"l\":[true,false,null],\"u\":\"\\u00e9\"} ", "[]", "plain [1,] text", "1,]"]
        for (n, info) in infos.enumerated() {
            h.send(LineParticipantID(UInt64(n + 1)), LineRequest(op: .create, liveId: "r\(n)", userId: "h\(n)", liveInfo: info))
            #expect(h.reply(LineParticipantID(UInt64(n + 1)))?.liveCode == .ok, "\(info)")
        }
        let json = h.registry.livingListJSON()
        #expect(LineJSONValidator.isStrict(json), "\(json)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        let list = try #require(object["LiveList"] as? [Any])
        #expect((list[0] as? [String: Any])?["t"] as? String == "x")
        #expect(list[2] as? String == "plain [1,] text")
        #expect(list[3] as? String == "1,]")
    }

    @Test("co-host stream names: only the hoster and co-hosts see them in events and may play them")
    func pubIdsToMembersOnly() throws {
        var h = H()
        h.open(guests: 3)
        let (peer1, pub1) = try h.cohost(1)
        let peer2 = try h.apply(2)
        h.send(h.hoster, LineRequest(op: .accept, peerId: peer2))
        let pub2 = try #require(h.event(H.guest(2), .applicationResult)?.pubId)
        // Co-host 1 (on the line) hears co-host 2's stream name; guest 3 (audience) does not.
        #expect(h.event(h.hoster, .cohostOpened)?.pubId == pub2)
        #expect(h.event(H.guest(1), .cohostOpened)?.pubId == pub2)
        #expect(h.event(H.guest(3), .cohostOpened)?.pubId == nil)
        #expect(h.event(H.guest(3), .cohostOpened)?.peerId == peer2)
        for delivery in h.last where delivery.reaches(H.guest(3)) {
            #expect(!(delivery.event?.jsonText.contains(LineRegistry.pubIdPrefix) ?? false), "\(delivery)")
        }
        // Playing: the line's members by user id; not the audience, not someone unknown, not nobody.
        #expect(h.registry.playRefusal(streamName: pub1, query: nil, userId: "host", checksUsers: true) == nil)
        #expect(h.registry.playRefusal(streamName: pub1, query: nil, userId: "g2", checksUsers: true) == nil)
        #expect(h.registry.playRefusal(streamName: pub1, query: nil, userId: "g3", checksUsers: true) != nil)
        #expect(h.registry.playRefusal(streamName: pub1, query: nil, userId: "stranger", checksUsers: true) != nil)
        #expect(h.registry.playRefusal(streamName: pub1, query: nil, userId: nil, checksUsers: true) != nil)
        #expect(h.registry.playRefusal(streamName: "line-gone", query: nil, userId: "host", checksUsers: true) != nil)
        #expect(h.registry.playRefusal(streamName: "room", query: nil, userId: nil, checksUsers: true) == nil)
        // The hoster hangs co-host 1 up: its stream ends, and it may no longer be played.
        h.send(h.hoster, LineRequest(op: .hangup, peerId: peer1))
        #expect(h.endedStreams == [pub1])
        #expect(h.event(H.guest(3), .cohostClosed)?.pubId == nil)
        #expect(h.event(H.guest(2), .cohostClosed)?.pubId == pub1)
        #expect(h.registry.playRefusal(streamName: pub1, query: nil, userId: "host", checksUsers: true) != nil)
        // The line closes: every remaining co-host stream ends.
        h.send(h.hoster, LineRequest(op: .close))
        #expect(h.endedStreams == [pub2])
    }

    @Test("a co-host's hear stream: published only by the hoster with the secret it alone is given, played only by that co-host, ended with it")
    func hearStreams() throws {
        var h = H()
        h.open(guests: 3)
        let (peer1, pub1) = try h.cohost(1)
        let hearQuery = try #require(h.event(h.hoster, .cohostOpened)?.publishQuery)
        let cohostQuery = try #require(h.event(H.guest(1), .applicationResult)?.publishQuery)
        #expect(hearQuery.hasPrefix("line=") && hearQuery != cohostQuery)
        let peer2 = try h.apply(2)
        h.send(h.hoster, LineRequest(op: .accept, peerId: peer2))
        // Co-host 1 hears of co-host 2 with its pubId, but not the hear secret; the audience neither.
        #expect(h.event(h.hoster, .cohostOpened)?.publishQuery != nil)
        #expect(h.event(H.guest(1), .cohostOpened)?.pubId != nil)
        #expect(h.event(H.guest(1), .cohostOpened)?.publishQuery == nil)
        #expect(h.event(H.guest(3), .cohostOpened)?.publishQuery == nil)
        let hear1 = pub1 + LineStreams.hearSuffix
        #expect(h.registry.publishRefusal(streamName: hear1, query: hearQuery) == nil)
        #expect(h.registry.publishRefusal(streamName: hear1, query: cohostQuery) != nil)
        #expect(h.registry.publishRefusal(streamName: hear1, query: nil) != nil)
        #expect(h.registry.publishRefusal(streamName: pub1, query: hearQuery) != nil)
        // Without tokens: the co-host's own secret plays it; nothing else does.
        #expect(h.registry.playRefusal(streamName: hear1, query: cohostQuery, userId: nil, checksUsers: false) == nil)
        #expect(h.registry.playRefusal(streamName: hear1, query: hearQuery, userId: nil, checksUsers: false) != nil)
        #expect(h.registry.playRefusal(streamName: hear1, query: nil, userId: nil, checksUsers: false) != nil)
        #expect(h.registry.playRefusal(streamName: pub1, query: nil, userId: nil, checksUsers: false) == nil)
        // With tokens: only the co-host's user, not the hoster, another co-host or nobody.
        #expect(h.registry.playRefusal(streamName: hear1, query: nil, userId: "g1", checksUsers: true) == nil)
        for user in ["host", "g2", "g3", ""] as [String] {
            #expect(h.registry.playRefusal(streamName: hear1, query: nil, userId: user, checksUsers: true) != nil, "\(user)")
        }
        // Hung up: nothing about its hear stream is allowed any more.
        h.send(h.hoster, LineRequest(op: .hangup, peerId: peer1))
        #expect(h.registry.publishRefusal(streamName: hear1, query: hearQuery) != nil)
        #expect(h.registry.playRefusal(streamName: hear1, query: cohostQuery, userId: nil, checksUsers: false) != nil)
    }

    @Test("an audio line: the create's audioLine reaches the accepted co-host, every cohostOpened and cohostClosed; a video line's events carry none")
    func audioLine() throws {
        let request = try LineRequest.parse(#"{"op":"create","liveId":"room","userId":"host","audioLine":true}"#).get()
        #expect(request.audioLine == true)
        #expect((try? LineRequest.parse(#"{"op":"create","liveId":"room","audioLine":"yes"}"#).get()) == nil)
        var h = H()
        h.send(h.hoster, request)
        for n in 1...3 { h.send(H.guest(UInt64(n)), LineRequest(op: .join, liveId: "room", userId: "g\(n)")) }
        let (peer1, _) = try h.cohost(1)
        #expect(h.event(H.guest(1), .applicationResult)?.audioLine == true)
        let peer2 = try h.apply(2)
        h.send(h.hoster, LineRequest(op: .accept, peerId: peer2))
        for who in [h.hoster, H.guest(1), H.guest(3)] { #expect(h.event(who, .cohostOpened)?.audioLine == true, "\(who)") }
        h.send(h.hoster, LineRequest(op: .hangup, peerId: peer1))
        for who in [h.hoster, H.guest(2), H.guest(3)] { #expect(h.event(who, .cohostClosed)?.audioLine == true, "\(who)") }

        var video = H()
        video.open(guests: 2)
        _ = try video.cohost(1)
        #expect(video.event(H.guest(1), .applicationResult)?.audioLine == nil)
        #expect(video.event(video.hoster, .cohostOpened)?.audioLine == nil)
        #expect(!(video.event(video.hoster, .cohostOpened)?.jsonText.contains("audioLine") ?? true))
    }

    @Test("a co-host that leaves or disconnects has its stream ended")
    func cohostStreamEnded() throws {
        var h = H()
        h.open(guests: 2)
        let (_, pub1) = try h.cohost(1)
        h.send(H.guest(1), LineRequest(op: .leave))
        #expect(h.endedStreams == [pub1])
        let (_, pub2) = try h.cohost(2)
        h.last = h.registry.disconnect(H.guest(2))
        #expect(h.endedStreams == [pub2])
    }

    @Test("tokens: tokenWillExpire ahead of expiry, renewToken moves it, an unrenewed token ends the session with 212")
    func tokenExpiry() throws {
        var limits = LineLimits(applyTimeout: .seconds(1000), heartbeatTimeout: .seconds(1000))
        limits.tokenWillExpireSeconds = 5
        var h = H(limits: limits)
        let expiry = { (seconds: UInt64, h: H) in h.nowMicros + seconds * 1_000_000 }
        h.send(h.hoster, LineRequest(op: .create, liveId: "room"), admission: .admitted(userId: "host", expiresAtMicros: expiry(100, h)))
        h.send(H.guest(1), LineRequest(op: .join, liveId: "room", userId: "g1"), admission: .admitted(userId: "g1", expiresAtMicros: expiry(20, h)))
        h.send(H.guest(2), LineRequest(op: .join, liveId: "room", userId: "g2"), admission: .admitted(userId: "g2", expiresAtMicros: expiry(20, h)))
        h.advance(seconds: 14)
        #expect(h.event(H.guest(1), .tokenWillExpire) == nil)
        h.advance(seconds: 1.5)
        #expect(h.event(H.guest(1), .tokenWillExpire)?.seconds == 5)
        #expect(h.event(H.guest(2), .tokenWillExpire)?.seconds == 5)
        #expect(h.advance(seconds: 0.5).isEmpty)  // once per token
        // Guest 1 renews (same user); a token for another user is refused and changes nothing.
        h.send(H.guest(1), LineRequest(op: .renewToken, token: "t"), admission: .admitted(userId: "g2", expiresAtMicros: expiry(20, h)))
        #expect(h.reply(H.guest(1))?.liveCode == .unauthorized)
        h.send(H.guest(1), LineRequest(op: .renewToken, token: "t"), admission: .refused(code: .authFailed, message: "bad signature"))
        #expect(h.reply(H.guest(1))?.liveCode == .authFailed)
        h.send(H.guest(1), LineRequest(op: .renewToken, token: "t"), admission: .admitted(userId: "g1", expiresAtMicros: expiry(20, h)))
        #expect(h.reply(H.guest(1))?.liveCode == .ok)
        h.advance(seconds: 4.5)
        let expired = try #require(h.event(H.guest(2), .tokenExpired))
        #expect(expired.liveCode == .authTimeout)
        #expect(h.last.contains { $0.reaches(H.guest(2)) && $0.event == nil })
        #expect(h.event(H.guest(1), .tokenExpired) == nil)
        #expect(h.event(H.guest(1), .memberCount)?.total == 2)
        // The renewed one is warned again before its new expiry.
        h.advance(seconds: 11)
        #expect(h.event(H.guest(1), .tokenWillExpire) != nil)
        // A token shorter than twice the warning is warned half-way, not at once.
        var short = H(limits: changed(LineLimits()) { $0.tokenWillExpireSeconds = 300 })
        short.send(short.hoster, LineRequest(op: .create, liveId: "room"), admission: .admitted(userId: "h", expiresAtMicros: expiry(20, short)))
        #expect(short.advance(seconds: 9.5).allSatisfy { $0.event?.event != .tokenWillExpire })
        #expect(short.advance(seconds: 1).contains { $0.event?.event == .tokenWillExpire && $0.event?.seconds == 10 })
    }

    @Test("with tokens checked, a connection without a verified token is closed with 212 after admissionTimeout")
    func admissionTimeout() throws {
        var limits = LineLimits(applyTimeout: .seconds(1000), heartbeatTimeout: .seconds(1000))
        limits.admissionTimeout = .seconds(10)
        var h = H(limits: limits)
        h.registry.requiresAdmission = true
        h.registry.connect(H.guest(1), nowMicros: h.nowMicros)
        h.send(h.hoster, LineRequest(op: .create, liveId: "room"), admission: .admitted(userId: "host", expiresAtMicros: h.nowMicros + 600_000_000))
        h.send(H.guest(2), LineRequest(op: .join, liveId: "room"), admission: .refused(code: .authFailed, message: "bad"))
        h.advance(seconds: 9)
        #expect(h.event(H.guest(1), .tokenExpired) == nil)
        h.advance(seconds: 1.5)
        for waiting in [H.guest(1), H.guest(2)] {
            #expect(h.event(waiting, .tokenExpired)?.liveCode == .authTimeout)
            #expect(h.last.contains { $0.reaches(waiting) && $0.event == nil })
        }
        #expect(h.events(h.hoster).isEmpty)
        // Without tokens nobody is timed out for it.
        var open = H(limits: limits)
        open.registry.connect(H.guest(1), nowMicros: open.nowMicros)
        #expect(open.advance(seconds: 20).isEmpty)
    }

    @Test("admission refusals reach the line result with their code; the token's user is the member's user id")
    func admissionRefused() throws {
        var h = H()
        h.send(h.hoster, LineRequest(op: .create, liveId: "room", userId: "host"),
               admission: .refused(code: .unauthorized, message: "nobody publishes live/room"))
        #expect(h.reply(h.hoster)?.liveCode == .unauthorized)
        #expect(h.event(h.hoster, .lineResult)?.message == "nobody publishes live/room")
        #expect(h.registry.roomSummaries.isEmpty)
        h.send(h.hoster, LineRequest(op: .create, liveId: "room"), admission: .admitted(userId: "alice", expiresAtMicros: nil))
        h.send(H.guest(1), LineRequest(op: .join, liveId: "room"), admission: .refused(code: .tokenMustBeVerified, message: "no token"))
        #expect(h.event(H.guest(1), .lineResult)?.liveCode == .tokenMustBeVerified)
        h.send(H.guest(1), LineRequest(op: .join, liveId: "room"), admission: .admitted(userId: "bob", expiresAtMicros: nil))
        #expect(h.registry.memberPage(liveId: "room", page: 1)?.members.map(\.userId) == ["alice", "bob"])
    }
}
