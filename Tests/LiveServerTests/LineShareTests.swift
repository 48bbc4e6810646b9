import LiveCore
import LiveSignal
import Testing
@testable import LiveServer

/// The share on the line (the anyRTC SDK's onRTCShareOpen / onRTCShareClose), as the
/// pure room logic sees it.
@Suite("Line rooms: the hoster's share (pure)")
struct LineShareTests {
    typealias H = LineHarness

    static func shareOpen(type: Int? = 1, info: String? = "slides") -> LineRequest {
        var request = LineRequest(op: .shareOpen)
        request.shareType = type
        request.shareInfo = info
        return request
    }

    @Test("shareOpen reaches every guest with type, info and the hoster's userId and userData; a guest joining later hears it; shareClose ends it")
    func openAndClose() throws {
        var h = H()
        h.open(guests: 2)
        _ = try h.cohost(1)  // a co-host hears it as the audience does
        h.send(h.hoster, Self.shareOpen())
        #expect(h.reply(h.hoster)?.liveCode == .ok)
        #expect(h.event(h.hoster, .shareOpen) == nil, "the sharer is not told its own share")
        for guest in [H.guest(1), H.guest(2)] {
            let open = try #require(h.event(guest, .shareOpen))
            #expect(open.shareType == 1 && open.shareInfo == "slides" && open.userId == "host" && open.userData == "h")
        }
        // A JSON round trip keeps the share's fields.
        let wire = try #require(h.event(H.guest(2), .shareOpen)).jsonText
        #expect(wire.contains("\"shareInfo\":\"slides\"") && wire.contains("\"shareType\":1"))
        #expect(LineEvent.parse(wire) == h.event(H.guest(2), .shareOpen))
        #expect(LineRequest.parse(Self.shareOpen().jsonText) == .success(Self.shareOpen()))

        // Announced again unchanged (a reconnected hoster): nobody hears it twice.
        h.send(h.hoster, Self.shareOpen())
        #expect(h.reply(h.hoster)?.liveCode == .ok)
        #expect(h.events(H.guest(1)).isEmpty)
        // Someone who joins while it is on learns it with the live start.
        h.send(H.guest(3), LineRequest(op: .join, liveId: "room", userId: "g3"))
        #expect(h.event(H.guest(3), .liveStart) != nil)
        #expect(h.event(H.guest(3), .shareOpen)?.shareInfo == "slides")

        h.send(h.hoster, LineRequest(op: .shareClose))
        #expect(h.reply(h.hoster)?.liveCode == .ok)
        for guest in [H.guest(1), H.guest(2), H.guest(3)] {
            #expect(h.event(guest, .shareClose)?.userId == "host")
        }
        // Closed: a newcomer hears nothing of it, and closing again is refused.
        h.send(H.guest(4), LineRequest(op: .join, liveId: "room", userId: "g4"))
        #expect(h.event(H.guest(4), .shareOpen) == nil)
        h.send(h.hoster, LineRequest(op: .shareClose))
        #expect(h.reply(h.hoster)?.liveCode == .invalidParams)
        #expect(h.events(H.guest(1)).isEmpty)
    }

    @Test("only the hoster shares (104), a shareInfo over 1024 bytes is refused (4), and a new share replaces the one on")
    func refusals() throws {
        var h = H()
        h.open(guests: 1)
        h.send(H.guest(1), Self.shareOpen())
        #expect(h.reply(H.guest(1))?.liveCode == .unauthorized)
        #expect(h.event(h.hoster, .shareOpen) == nil)
        h.send(H.guest(1), LineRequest(op: .shareClose))
        #expect(h.reply(H.guest(1))?.liveCode == .unauthorized)
        h.send(h.hoster, Self.shareOpen(info: String(repeating: "i", count: 1025)))
        #expect(h.reply(h.hoster)?.liveCode == .invalidParams)
        #expect(h.event(H.guest(1), .shareOpen) == nil)
        h.send(h.hoster, Self.shareOpen(type: nil, info: String(repeating: "i", count: 1024)))
        #expect(h.event(H.guest(1), .shareOpen)?.shareType == 0)
        h.send(h.hoster, Self.shareOpen(type: 2, info: "camera 2"))
        #expect(h.event(H.guest(1), .shareOpen)?.shareInfo == "camera 2")
        // Outside a line: 600, as every line request.
        var lone = H()
        lone.send(H.guest(9), Self.shareOpen())
        #expect(lone.reply(H.guest(9))?.liveCode == .lineNotStarted)
    }
}

/// A co-host's voice level, from the hoster to the room (the guests' onRTCRemoteAudioActive).
@Suite("Line rooms: co-host levels (pure)")
struct LineAudioLevelTests {
    typealias H = LineHarness

    static func level(_ peerId: String?, _ level: Int?, showTime: Int? = 500) -> LineRequest {
        var request = LineRequest(op: .audioLevel, peerId: peerId)
        (request.level, request.showTime) = (level, showTime)
        return request
    }

    @Test("the hoster's audioLevel reaches the other guests as remoteAudioActive with the co-host's userId, not the co-host itself; only the hoster sends it (104), for a co-host (4), a level of 0 to 100 (4)")
    func levelsToTheRoom() throws {
        var h = H()
        h.open(guests: 2)
        let (peerId, _) = try h.cohost(1)
        h.send(h.hoster, Self.level(peerId, 63))
        #expect(h.reply(h.hoster)?.liveCode == .ok)
        let heard = try #require(h.event(H.guest(2), .remoteAudioActive))
        #expect(heard.peerId == peerId && heard.userId == "g1" && heard.level == 63 && heard.showTime == 500)
        #expect(h.event(H.guest(1), .remoteAudioActive) == nil, "the co-host is not told its own level")
        #expect(LineEvent.parse(heard.jsonText) == heard)
        #expect(LineRequest.parse(Self.level(peerId, 63).jsonText) == .success(Self.level(peerId, 63)))

        h.send(H.guest(2), Self.level(peerId, 10))
        #expect(h.reply(H.guest(2))?.liveCode == .unauthorized)
        for bad in [Self.level("nobody", 10), Self.level(nil, 10), Self.level(peerId, 101), Self.level(peerId, -1), Self.level(peerId, nil),
                    Self.level(peerId, 10, showTime: 0)] {
            h.send(h.hoster, bad)
            #expect(h.reply(h.hoster)?.liveCode == .invalidParams)
            #expect(h.event(H.guest(2), .remoteAudioActive) == nil)
        }
    }
}
