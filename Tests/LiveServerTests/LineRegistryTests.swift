import Foundation
import LiveCore
// Exported so every file of this target sees the shared helpers (`Locked`).
import LiveSignal
import LiveTestSupport
import Testing
@testable import LiveServer

/// The line's room logic as a pure state machine: a registry, a hand-moved clock and
/// numbered participants, checked on the deliveries each step returns.
struct LineHarness {
    var registry: LineRegistry
    var nowMicros: UInt64 = 1_000_000
    let hoster = LineParticipantID(1)
    var last: [LineDelivery] = []
    private var counter = 0

    init(limits: LineLimits = LineLimits()) {
        // Predictable tokens: the tests read them from the events anyway.
        let tokens = Locked(0)
        registry = LineRegistry(limits: limits) { bytes in
            let n = tokens.update { value -> Int in
                value += 1
                return value
            }
            return "t\(n)x\(bytes)"
        }
    }

    static func guest(_ n: UInt64) -> LineParticipantID { LineParticipantID(100 + n) }

    /// Sends `request`; `admission` answers a create, join or renewToken (default: admitted, no user).
    @discardableResult
    mutating func send(_ participant: LineParticipantID, _ request: LineRequest, admission: LineAdmission = .open) -> [LineDelivery] {
        counter += 1
        var request = request
        request.id = counter
        last = registry.handle(request, from: participant, nowMicros: nowMicros) { _, _ in admission }
        return last
    }

    @discardableResult
    mutating func advance(seconds: Double) -> [LineDelivery] {
        nowMicros += UInt64(seconds * 1_000_000)
        last = registry.tick(nowMicros: nowMicros)
        return last
    }

    /// The events `participant` got from the last step.
    func events(_ participant: LineParticipantID) -> [LineEvent] { last.filter { $0.reaches(participant) }.compactMap(\.event) }
    /// The co-host streams the last step asked the relay to end.
    var endedStreams: [String] { last.compactMap { if case .endStream(let pubId) = $0.action { pubId } else { nil } } }
    func event(_ participant: LineParticipantID, _ kind: LineEvent.Kind) -> LineEvent? { events(participant).first { $0.event == kind } }
    func reply(_ participant: LineParticipantID) -> LineEvent? { event(participant, .reply) }

    /// Hoster creates "room"; guests 1...n join.
    mutating func open(guests: Int, liveInfo: String = "{\"liveTopic\":\"t\"}") {
        send(hoster, LineRequest(op: .create, liveId: "room", userId: "host", userData: "h", liveInfo: liveInfo))
        for n in 1...max(1, guests) where guests > 0 {
            send(Self.guest(UInt64(n)), LineRequest(op: .join, liveId: "room", userId: "g\(n)", userData: "d\(n)"))
        }
    }

    /// Guest n applies; returns the peerId the hoster was told.
    mutating func apply(_ n: UInt64) throws -> String {
        send(Self.guest(n), LineRequest(op: .apply))
        return try #require(event(hoster, .application)?.peerId)
    }

    /// Guest n applies and the hoster accepts; returns (peerId, pubId).
    mutating func cohost(_ n: UInt64) throws -> (String, String) {
        let peerId = try apply(n)
        send(hoster, LineRequest(op: .accept, peerId: peerId))
        let result = try #require(event(Self.guest(n), .applicationResult))
        return (peerId, try #require(result.pubId))
    }
}

@Suite("Line rooms (pure)")
struct LineRegistryTests {
    typealias H = LineHarness

    @Test("create and join: line results, live start, member counts to everyone")
    func createAndJoin() throws {
        var h = H()
        h.send(h.hoster, LineRequest(op: .create, liveId: "room", userId: "host", userData: "h"))
        #expect(h.reply(h.hoster)?.liveCode == .ok)
        #expect(h.event(h.hoster, .lineResult)?.liveCode == .ok)
        h.send(H.guest(1), LineRequest(op: .join, liveId: "room", userId: "g1"))
        #expect(h.event(H.guest(1), .lineResult)?.liveCode == .ok)
        #expect(h.event(H.guest(1), .liveStart) != nil)
        // Counts go out with the next tick, once per room.
        #expect(h.event(h.hoster, .memberCount) == nil)
        h.advance(seconds: 0.25)
        #expect(h.event(h.hoster, .memberCount)?.total == 2)
        #expect(h.event(H.guest(1), .memberCount)?.total == 2)
        h.send(H.guest(2), LineRequest(op: .join, liveId: "room", userId: "g2"))
        h.advance(seconds: 0.25)
        #expect(h.event(H.guest(1), .memberCount)?.total == 3)
        #expect(h.advance(seconds: 0.25).isEmpty)
        h.send(H.guest(1), LineRequest(op: .leave))
        #expect(h.reply(H.guest(1))?.liveCode == .ok)
        h.advance(seconds: 0.25)
        #expect(h.event(h.hoster, .memberCount)?.total == 2)
        #expect(h.event(H.guest(2), .memberCount)?.total == 2)
    }

    @Test("the live switch: a line created with live false tells joiners nothing; setLive tells every guest once per change; only the hoster may; closing says liveStop only while live")
    func liveSwitch() throws {
        var h = H()
        h.send(h.hoster, LineRequest(op: .create, liveId: "room", userId: "host", live: false))
        h.send(H.guest(1), LineRequest(op: .join, liveId: "room", userId: "g1"))
        #expect(h.event(H.guest(1), .lineResult)?.liveCode == .ok)
        #expect(h.event(H.guest(1), .liveStart) == nil)
        h.send(h.hoster, LineRequest(op: .setLive, live: true))
        #expect(h.reply(h.hoster)?.liveCode == .ok)
        #expect(h.event(H.guest(1), .liveStart) != nil)
        #expect(h.event(h.hoster, .liveStart) == nil)
        // No change, no event.
        h.send(h.hoster, LineRequest(op: .setLive, live: true))
        #expect(h.event(H.guest(1), .liveStart) == nil)
        h.send(H.guest(2), LineRequest(op: .join, liveId: "room", userId: "g2"))
        #expect(h.event(H.guest(2), .liveStart) != nil)
        h.send(H.guest(1), LineRequest(op: .setLive, live: false))
        #expect(h.reply(H.guest(1))?.liveCode == .unauthorized)
        h.send(h.hoster, LineRequest(op: .setLive))
        #expect(h.reply(h.hoster)?.liveCode == .invalidParams)
        h.send(h.hoster, LineRequest(op: .setLive, live: false))
        #expect(h.event(H.guest(1), .liveStop) != nil && h.event(H.guest(2), .liveStop) != nil)
        // Closed while off: lineLeave alone.
        h.send(h.hoster, LineRequest(op: .close))
        #expect(h.event(H.guest(1), .lineLeave) != nil)
        #expect(h.event(H.guest(1), .liveStop) == nil)
    }

    @Test("wrong-state calls get the anyRTC SDK's codes: 600 no line, 604 already open, 4 wrong role")
    func wrongState() throws {
        var h = H()
        h.send(H.guest(1), LineRequest(op: .join, liveId: "nope", userId: "g1"))
        #expect(h.reply(H.guest(1))?.liveCode == .lineNotStarted)
        #expect(h.event(H.guest(1), .lineResult)?.liveCode == .lineNotStarted)
        h.send(H.guest(1), LineRequest(op: .apply))
        #expect(h.reply(H.guest(1))?.liveCode == .lineNotStarted)
        h.send(h.hoster, LineRequest(op: .accept, peerId: "x"))
        #expect(h.reply(h.hoster)?.liveCode == .lineNotStarted)
        h.open(guests: 1)
        h.send(h.hoster, LineRequest(op: .create, liveId: "room", userId: "host"))
        #expect(h.reply(h.hoster)?.liveCode == .alreadyOpen)
        h.send(H.guest(2), LineRequest(op: .create, liveId: "room", userId: "other"))
        #expect(h.reply(H.guest(2))?.liveCode == .alreadyOpen)
        h.send(H.guest(1), LineRequest(op: .join, liveId: "room", userId: "g1"))
        #expect(h.reply(H.guest(1))?.liveCode == .alreadyOpen)
        h.send(H.guest(1), LineRequest(op: .accept, peerId: "x"))
        #expect(h.reply(H.guest(1))?.liveCode == .unauthorized)
        h.send(h.hoster, LineRequest(op: .apply))
        #expect(h.reply(h.hoster)?.liveCode == .invalidParams)
        h.send(h.hoster, LineRequest(op: .accept, peerId: "unknown"))
        #expect(h.reply(h.hoster)?.liveCode == .invalidParams)
        h.send(H.guest(1), LineRequest(op: .cancel))
        #expect(h.reply(H.guest(1))?.liveCode == .invalidParams)
        _ = try h.apply(1)
        h.send(H.guest(1), LineRequest(op: .apply))
        #expect(h.reply(H.guest(1))?.liveCode == .alreadyOpen)
        // Malformed JSON and unknown ops are answered too, never dropped.
        let garbage = h.registry.receive("{\"op\":\"dance\",\"id\":9}", from: H.guest(1), nowMicros: h.nowMicros)
        #expect(garbage.first?.event?.id == 9)
        #expect(garbage.first?.event?.liveCode == .invalidParams)
        #expect(h.registry.receive("not json", from: H.guest(1), nowMicros: h.nowMicros).first?.event?.liveCode == .invalidParams)
    }

    @Test("apply → accept: the guest gets its pubId and publish secret, everyone else the co-host (the pubId only to the hoster); fresh ids every time")
    func applyAccept() throws {
        var h = H()
        h.open(guests: 2)
        let peerId = try h.apply(1)
        #expect(h.reply(H.guest(1))?.peerId == peerId)
        #expect(h.event(h.hoster, .application)?.userId == "g1")
        #expect(h.event(h.hoster, .application)?.userData == "d1")
        h.send(h.hoster, LineRequest(op: .accept, peerId: peerId))
        #expect(h.reply(h.hoster)?.liveCode == .ok)
        let result = try #require(h.event(H.guest(1), .applicationResult))
        #expect(result.liveCode == .ok)
        let pubId = try #require(result.pubId)
        #expect(pubId.hasPrefix(LineRegistry.pubIdPrefix))
        let query = try #require(result.publishQuery)
        for other in [h.hoster, H.guest(2)] {
            let opened = try #require(h.event(other, .cohostOpened))
            #expect(opened.peerId == peerId && opened.userId == "g1" && opened.userData == "d1")
            #expect(opened.pubId == (other == h.hoster ? pubId : nil))
            // The hoster's copy names the hear stream's own secret, never the co-host's.
            #expect(opened.publishQuery.map { $0 != query && $0.hasPrefix("line=") } ?? (other != h.hoster))
        }
        #expect(h.event(H.guest(1), .cohostOpened) == nil)
        // A late joiner learns who is on the line, not the stream's name.
        h.send(H.guest(3), LineRequest(op: .join, liveId: "room", userId: "g3"))
        #expect(h.event(H.guest(3), .cohostOpened)?.peerId == peerId)
        #expect(h.event(H.guest(3), .cohostOpened)?.pubId == nil)
        // Publishing: only with the co-host's secret.
        #expect(h.registry.publishRefusal(streamName: pubId, query: query) == nil)
        #expect(h.registry.publishRefusal(streamName: pubId, query: nil) != nil)
        #expect(h.registry.publishRefusal(streamName: pubId, query: "line=wrong") != nil)
        #expect(h.registry.publishRefusal(streamName: "line-unknown", query: query) != nil)
        #expect(h.registry.publishRefusal(streamName: "room", query: nil) == nil)
        // A second application by another guest gets a different peerId.
        #expect(try h.apply(2) != peerId)
    }

    @Test("the real token source: peerIds and pubIds are fresh, long and URL-safe")
    func realTokens() throws {
        let a = LineStreams.randomToken(16), b = LineStreams.randomToken(16)
        #expect(a != b)
        #expect(a.count == 22)
        #expect(a.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" })
    }

    @Test("hangup by the guest and by the host; reject; cancel")
    func hangups() throws {
        var h = H()
        h.open(guests: 3)
        let (peer1, pub1) = try h.cohost(1)
        h.send(H.guest(1), LineRequest(op: .hangup))
        #expect(h.reply(H.guest(1))?.liveCode == .ok)
        for other in [h.hoster, H.guest(2), H.guest(3)] {
            #expect(h.event(other, .cohostClosed)?.peerId == peer1)
            #expect(h.event(other, .cohostClosed)?.pubId == (other == h.hoster ? pub1 : nil))
            #expect(h.event(other, .cohostClosed)?.reason == "hungUpByGuest")
        }
        #expect(h.endedStreams == [pub1])
        #expect(h.registry.publishRefusal(streamName: pub1, query: nil) != nil)

        let (peer2, _) = try h.cohost(2)
        h.send(h.hoster, LineRequest(op: .hangup, peerId: peer2))
        #expect(h.event(H.guest(2), .hungUp)?.peerId == peer2)
        #expect(h.event(H.guest(2), .cohostClosed) == nil)
        #expect(h.event(h.hoster, .cohostClosed)?.reason == "hungUpByHoster")
        #expect(h.event(H.guest(3), .cohostClosed)?.peerId == peer2)
        #expect(h.endedStreams.count == 1)

        let peer3 = try h.apply(3)
        h.send(h.hoster, LineRequest(op: .reject, peerId: peer3))
        #expect(h.event(H.guest(3), .applicationResult)?.liveCode == .hosterRejected)
        h.send(h.hoster, LineRequest(op: .accept, peerId: peer3))
        #expect(h.reply(h.hoster)?.liveCode == .invalidParams)

        let peer3b = try h.apply(3)
        h.send(H.guest(3), LineRequest(op: .cancel))
        #expect(h.event(h.hoster, .applicationCancelled)?.peerId == peer3b)
        #expect(h.event(h.hoster, .applicationCancelled)?.liveCode == .ok)
        // hangup before an answer withdraws the application too (hangupRTCLine).
        let peer3c = try h.apply(3)
        h.send(H.guest(3), LineRequest(op: .hangup))
        #expect(h.event(h.hoster, .applicationCancelled)?.peerId == peer3c)
    }

    @Test("three co-hosts fill the line: accepting a fourth fails with 602 and every waiting applicant gets 602")
    func lineFull() throws {
        var h = H()
        h.open(guests: 5)
        for n in 1...3 { _ = try h.cohost(UInt64(n)) }
        let peer4 = try h.apply(4)
        let peer5 = try h.apply(5)
        h.send(h.hoster, LineRequest(op: .accept, peerId: peer4))
        #expect(h.reply(h.hoster)?.liveCode == .lineFull)
        #expect(h.event(H.guest(4), .applicationResult)?.liveCode == .lineFull)
        #expect(h.event(H.guest(5), .applicationResult)?.liveCode == .lineFull)
        let cancelled = h.events(h.hoster).filter { $0.event == .applicationCancelled }
        #expect(Set(cancelled.compactMap(\.peerId)) == [peer4, peer5])
        #expect(cancelled.allSatisfy { $0.liveCode == .lineFull })
        #expect(h.events(H.guest(1)).isEmpty)
        // --max-cohosts 1
        var one = H(limits: LineLimits(maxCohosts: 1))
        one.open(guests: 2)
        _ = try one.cohost(1)
        let second = try one.apply(2)
        one.send(one.hoster, LineRequest(op: .accept, peerId: second))
        #expect(one.reply(one.hoster)?.liveCode == .lineFull)
    }

    @Test("the hoster's mix capacity caps the line: created with maxCohosts 2 under --max-cohosts 6, the third accept gets 602 until setMaxCohosts raises it")
    func mixCapacityCapsTheLine() throws {
        var h = H(limits: LineLimits(maxCohosts: 6))
        h.send(h.hoster, LineRequest(op: .create, liveId: "room", userId: "host", maxCohosts: 2))
        #expect(h.event(h.hoster, .lineResult)?.liveCode == .ok)
        for n in 1...3 { h.send(H.guest(UInt64(n)), LineRequest(op: .join, liveId: "room", userId: "g\(n)")) }
        for n in 1...2 { _ = try h.cohost(UInt64(n)) }
        let third = try h.apply(3)
        h.send(h.hoster, LineRequest(op: .accept, peerId: third))
        #expect(h.reply(h.hoster)?.liveCode == .lineFull)
        #expect(h.event(H.guest(3), .applicationResult)?.liveCode == .lineFull)
        // The hoster's template changes to one showing three: the line takes a third.
        h.send(H.guest(1), LineRequest(op: .setMaxCohosts, maxCohosts: 6))
        #expect(h.reply(H.guest(1))?.liveCode == .unauthorized)
        h.send(h.hoster, LineRequest(op: .setMaxCohosts, maxCohosts: -1))
        #expect(h.reply(h.hoster)?.liveCode == .invalidParams)
        h.send(h.hoster, LineRequest(op: .setMaxCohosts, maxCohosts: 3))
        #expect(h.reply(h.hoster)?.liveCode == .ok)
        _ = try h.cohost(3)
        // A capacity above the server's limit does not raise it; a negative one is refused.
        var capped = H(limits: LineLimits(maxCohosts: 1))
        capped.send(capped.hoster, LineRequest(op: .create, liveId: "room", userId: "host", maxCohosts: 4))
        capped.send(H.guest(1), LineRequest(op: .join, liveId: "room", userId: "g1"))
        capped.send(H.guest(2), LineRequest(op: .join, liveId: "room", userId: "g2"))
        _ = try capped.cohost(1)
        let second = try capped.apply(2)
        capped.send(capped.hoster, LineRequest(op: .accept, peerId: second))
        #expect(capped.reply(capped.hoster)?.liveCode == .lineFull)
        var negative = H()
        negative.send(negative.hoster, LineRequest(op: .create, liveId: "room", userId: "host", maxCohosts: -1))
        #expect(negative.event(negative.hoster, .lineResult)?.liveCode == .invalidParams)
    }

    @Test("a returning hoster reclaims its line on a new connection (same lineKey, or same token user); anyone else gets 604")
    func hosterReclaimsItsLine() throws {
        var h = H()
        h.send(h.hoster, LineRequest(op: .create, liveId: "room", userId: "host", stream: "live/room", lineKey: "K"))
        for n in 1...2 { h.send(H.guest(UInt64(n)), LineRequest(op: .join, liveId: "room", userId: "g\(n)")) }
        let (peer1, pub1) = try h.cohost(1)
        let hearQuery = try #require(h.event(h.hoster, .cohostOpened)?.publishQuery)
        let waiting = try h.apply(2)
        // Someone else naming the line (another key, or none) is refused.
        let stranger = LineParticipantID(50)
        h.send(stranger, LineRequest(op: .create, liveId: "room", userId: "host", stream: "live/room", lineKey: "other"))
        #expect(h.event(stranger, .lineResult)?.liveCode == .alreadyOpen)
        // The hoster, back on a new connection with its key, gets the line as it was.
        let back = LineParticipantID(2)
        h.send(back, LineRequest(op: .create, liveId: "room", userId: "host", stream: "live/room", lineKey: "K"))
        #expect(h.event(back, .lineResult)?.liveCode == .ok)
        #expect(h.event(back, .memberCount)?.total == 3)
        let opened = try #require(h.event(back, .cohostOpened))
        #expect(opened.peerId == peer1 && opened.pubId == pub1 && opened.publishQuery == hearQuery)
        #expect(h.event(back, .application)?.peerId == waiting)
        #expect(h.last.contains { $0.reaches(h.hoster) && $0.action == .disconnect(reason: "the hoster of line room reconnected", code: .forcedExit) })
        // The new connection is the hoster now; the old one's end closes nothing.
        h.send(back, LineRequest(op: .accept, peerId: waiting))
        #expect(h.event(H.guest(2), .applicationResult)?.liveCode == .ok)
        h.last = h.registry.disconnect(h.hoster)
        #expect(h.events(H.guest(1)).isEmpty)
        #expect(h.registry.memberPage(liveId: "room", page: 1)?.members.map(\.role) == ["hoster", "cohost", "cohost"])

        // With tokens: the same user reclaims; another user allowed line:host does not.
        var t = H()
        t.send(t.hoster, LineRequest(op: .create, liveId: "room"), admission: .admitted(userId: "alice", expiresAtMicros: nil))
        t.send(LineParticipantID(3), LineRequest(op: .create, liveId: "room"), admission: .admitted(userId: "mallory", expiresAtMicros: nil))
        #expect(t.event(LineParticipantID(3), .lineResult)?.liveCode == .alreadyOpen)
        t.send(LineParticipantID(4), LineRequest(op: .create, liveId: "room"), admission: .admitted(userId: "alice", expiresAtMicros: nil))
        #expect(t.event(LineParticipantID(4), .lineResult)?.liveCode == .ok)
    }

    @Test("an unanswered application times out with a reason for both sides")
    func applicationTimeout() throws {
        var h = H(limits: LineLimits(applyTimeout: .seconds(30), heartbeatTimeout: .seconds(1000)))
        h.open(guests: 1)
        h.advance(seconds: 0)  // the member count
        let peerId = try h.apply(1)
        #expect(h.advance(seconds: 29).isEmpty)
        h.advance(seconds: 1.5)
        let result = try #require(h.event(H.guest(1), .applicationResult))
        #expect(result.liveCode == .isStopped)
        #expect(result.reason == "timeout")
        #expect(result.message?.contains("30") == true)
        #expect(h.event(h.hoster, .applicationCancelled)?.peerId == peerId)
        #expect(h.event(h.hoster, .applicationCancelled)?.reason == "timeout")
        h.send(h.hoster, LineRequest(op: .accept, peerId: peerId))
        #expect(h.reply(h.hoster)?.liveCode == .invalidParams)
    }

    @Test("heartbeat loss: a silent co-host's slot closes for everyone and its connection is dropped")
    func heartbeatLoss() throws {
        var h = H(limits: LineLimits(applyTimeout: .seconds(1000), heartbeatTimeout: .seconds(10)))
        h.open(guests: 2)
        let (peer1, _) = try h.cohost(1)
        h.nowMicros += 6_000_000
        h.send(h.hoster, LineRequest(op: .heartbeat))
        h.send(H.guest(2), LineRequest(op: .heartbeat))
        #expect(h.reply(H.guest(2))?.liveCode == .ok)
        h.advance(seconds: 5)
        #expect(h.event(h.hoster, .cohostClosed)?.peerId == peer1)
        #expect(h.event(h.hoster, .cohostClosed)?.reason == "heartbeat")
        #expect(h.event(H.guest(2), .cohostClosed)?.peerId == peer1)
        #expect(h.event(H.guest(2), .memberCount)?.total == 2)
        #expect(h.last.contains { $0.reaches(H.guest(1)) && { if case .disconnect = $0.action { true } else { false } }($0) })
        #expect(!h.last.contains { $0.reaches(h.hoster) && $0.event == nil })
        #expect(h.endedStreams.count == 1)
    }

    @Test("the hoster leaving (closing, disconnecting or going silent) closes the line for every guest")
    func hosterLeaves() throws {
        for way in ["close", "disconnect", "heartbeat"] {
            var h = H(limits: LineLimits(applyTimeout: .seconds(1000), heartbeatTimeout: .seconds(10)))
            h.open(guests: 2)
            _ = try h.cohost(1)
            switch way {
            case "close": h.send(h.hoster, LineRequest(op: .close))
            case "disconnect": h.last = h.registry.disconnect(h.hoster)
            default:
                h.nowMicros += 9_000_000
                h.send(H.guest(1), LineRequest(op: .heartbeat))
                h.send(H.guest(2), LineRequest(op: .heartbeat))
                h.advance(seconds: 2)
            }
            for guest in [H.guest(1), H.guest(2)] {
                let leave = try #require(h.event(guest, .lineLeave), "\(way)")
                #expect(leave.liveCode == (way == "close" ? .ok : .networkDisconnected))
                #expect(h.event(guest, .liveStop) != nil)
            }
            #expect(h.registry.livingListJSON() == "{\"LiveList\":[],\"LiveMembers\":[]}")
            h.send(H.guest(1), LineRequest(op: .apply))
            #expect(h.reply(H.guest(1))?.liveCode == .lineNotStarted)
            // The line's id is free again.
            h.send(H.guest(2), LineRequest(op: .create, liveId: "room", userId: "g2"))
            #expect(h.reply(H.guest(2))?.liveCode == .ok)
        }
    }

    @Test("limits: 513-byte userData → 4, 1025-byte liveInfo → 4, message limits and required fields")
    func limits() throws {
        var h = H()
        h.send(h.hoster, LineRequest(op: .create, liveId: "room", userId: "host", userData: String(repeating: "u", count: 513)))
        #expect(h.reply(h.hoster)?.liveCode == .invalidParams)
        #expect(h.event(h.hoster, .lineResult)?.liveCode == .invalidParams)
        h.send(h.hoster, LineRequest(op: .create, liveId: "room", userId: "host", liveInfo: String(repeating: "i", count: 1025)))
        #expect(h.reply(h.hoster)?.liveCode == .invalidParams)
        h.send(h.hoster, LineRequest(op: .create, liveId: "room", userId: "host", userData: String(repeating: "u", count: 512),
                                     liveInfo: String(repeating: "i", count: 1024)))
        #expect(h.reply(h.hoster)?.liveCode == .ok)
        h.send(H.guest(1), LineRequest(op: .join, liveId: "room", userId: "g1", userData: String(repeating: "é", count: 257)))
        #expect(h.reply(H.guest(1))?.liveCode == .invalidParams) // 514 bytes
        h.send(H.guest(1), LineRequest(op: .join, liveId: "room", userId: "g1"))
        h.send(H.guest(2), LineRequest(op: .join, liveId: "room"))

        func message(_ from: LineParticipantID, type: String? = nil, userName: String? = "name", header: String? = nil,
                     content: String? = "hi") -> LiveCode? {
            h.send(from, LineRequest(op: .message, type: type, userName: userName, header: header, content: content))
            return h.reply(from)?.liveCode
        }
        #expect(message(H.guest(1), content: String(repeating: "c", count: 1025)) == .invalidParams)
        #expect(message(H.guest(1), content: String(repeating: "c", count: 1024)) == .ok)
        #expect(message(H.guest(1), userName: "") == .invalidParams)
        #expect(message(H.guest(1), userName: nil) == .invalidParams)
        #expect(message(H.guest(1), content: "") == .invalidParams)
        #expect(message(H.guest(1), userName: String(repeating: "n", count: 257)) == .invalidParams)
        #expect(message(H.guest(1), header: String(repeating: "h", count: 513)) == .invalidParams)
        #expect(message(H.guest(1), type: "shout") == .invalidParams)
        // Without a userId, sendUserMessage fails (the anyRTC SDK's rule).
        #expect(message(H.guest(2)) == .invalidParams)
        #expect(message(h.hoster, type: "barrage", header: "http://x/a.png", content: "弹幕") == .ok)
        for guest in [H.guest(1), H.guest(2)] {
            let got = try #require(h.event(guest, .message))
            #expect(got.type == "barrage" && got.userId == "host" && got.userName == "name" && got.content == "弹幕"
                && got.header == "http://x/a.png")
        }
        #expect(h.event(h.hoster, .message) == nil)
    }

    @Test("remote AV status reaches the others; only co-hosts and the hoster have one")
    func avStatus() throws {
        var h = H()
        h.open(guests: 2)
        h.send(H.guest(2), LineRequest(op: .setAVStatus, audio: false, video: true))
        #expect(h.reply(H.guest(2))?.liveCode == .invalidParams)
        let (peer1, _) = try h.cohost(1)
        h.send(H.guest(1), LineRequest(op: .setAVStatus, audio: false, video: true))
        #expect(h.event(h.hoster, .remoteAVStatus) == LineEvent(.remoteAVStatus, peerId: peer1, audio: false, video: true))
        #expect(h.event(H.guest(2), .remoteAVStatus)?.peerId == peer1)
    }

    @Test("living list in the anyRTC SDK's shape, rooms with empty liveInfo left out; member pages of 15")
    func livingList() throws {
        var h = H()
        h.open(guests: 0, liveInfo: "{\"hosterName\":\"A\",\"isAudioLive\":0}")
        h.send(LineParticipantID(2), LineRequest(op: .create, liveId: "hidden", userId: "b"))
        h.send(LineParticipantID(3), LineRequest(op: .create, liveId: "plain", userId: "c", liveInfo: "just text"))
        for n in 1...31 { h.send(H.guest(UInt64(n)), LineRequest(op: .join, liveId: "room", userId: "g\(n)")) }
        let json = h.registry.livingListJSON()
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        let list = try #require(object["LiveList"] as? [Any])
        #expect(list.count == 2)
        #expect((list[0] as? [String: Any])?["hosterName"] as? String == "A")
        #expect(list[1] as? String == "just text")
        #expect(object["LiveMembers"] as? [Int] == [32, 1])
        let first = try #require(h.registry.memberPage(liveId: "room", page: 1))
        #expect(first.total == 32 && first.members.count == 15 && first.pageSize == 15)
        #expect(first.members[0].role == "hoster" && first.members[1].userId == "g1")
        #expect(h.registry.memberPage(liveId: "room", page: 3)?.members.map(\.userId) == ["g30", "g31"])
        #expect(h.registry.memberPage(liveId: "room", page: 4)?.members.isEmpty == true)
        #expect(h.registry.memberPage(liveId: "nope", page: 1) == nil)
    }
}
