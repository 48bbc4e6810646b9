import Foundation
import LiveCore
import LiveNet
import LiveTestSupport
import Testing
@testable import LiveRTMP
@testable import LiveServer

/// One LineClient and every event it received.
final class LineParticipant: Sendable {
    let client: LineClient
    let events = Locked<[LineEvent]>([])
    let closed = Locked<UInt16?>(nil)

    init(port: UInt16, loop: EventLoop, heartbeat: Duration = .seconds(10)) throws {
        client = LineClient(url: "ws://127.0.0.1:\(port)/line", loop: loop, heartbeatInterval: heartbeat)
        let events = self.events, closed = self.closed
        client.onEvent = { event in events.update { $0.append(event) } }
        client.onClose = { code, _ in closed.update { $0 = code } }
        let result = Locked<Result<Void, WebSocketError>?>(nil)
        client.connect { outcome in result.update { $0 = outcome } }
        #expect(eventually(5) { result.value != nil })
        try #require(result.value).get()
    }

    /// The first event of `kind` matching `filter`, waiting up to 5 s for it.
    func wait(_ kind: LineEvent.Kind, _ filter: @escaping (LineEvent) -> Bool = { _ in true }) -> LineEvent? {
        var found: LineEvent?
        _ = eventually(5) {
            found = events.value.first { $0.event == kind && filter($0) }
            return found != nil
        }
        return found
    }

    /// The reply to request `id`.
    func reply(_ id: Int) -> LineEvent? { wait(.reply) { $0.id == id } }

    func count(_ kind: LineEvent.Kind) -> Int { events.value.filter { $0.event == kind }.count }
}

@Suite("Line signaling end to end", .serialized)
struct LineEndToEndTests {
    private func startServer(_ line: LineLimits = LineLimits()) throws -> RelayServer {
        var configuration = RelayServer.Configuration(rtmp: RTMPServer.Configuration(port: 0), httpPort: 0, loops: 2)
        configuration.line = line
        return try RelayServer(configuration: configuration)
    }

    @Test("hoster + four guests: create, join, three co-hosts, 602 for the fourth, messages, counts, hangup, close, living list, pubId publish rule")
    func fullLine() throws {
        let server = try startServer()
        defer { server.shutdown() }
        let clients = try EventLoopGroup(count: 1, name: "line-clients")
        defer { clients.shutdown() }
        let loop = clients.loops[0]
        let port = server.httpPort

        let hoster = try LineParticipant(port: port, loop: loop)
        let created = hoster.client.create(liveId: "e2e", userId: "host", userData: "{\"name\":\"H\"}",
                                           liveInfo: "{\"hosterName\":\"H\",\"liveTopic\":\"co-host test\"}")
        #expect(hoster.reply(created)?.liveCode == .ok)
        #expect(hoster.wait(.lineResult)?.liveCode == .ok)

        var guests: [LineParticipant] = []
        for n in 1...4 {
            let guest = try LineParticipant(port: port, loop: loop)
            let joined = guest.client.join(liveId: "e2e", userId: "g\(n)", userData: "data\(n)")
            #expect(guest.reply(joined)?.liveCode == .ok)
            #expect(guest.wait(.liveStart) != nil)
            guests.append(guest)
        }
        for participant in [hoster] + guests {
            #expect(participant.wait(.memberCount) { $0.total == 5 } != nil)
        }

        // The living list shows the room with its member count.
        let (status, body) = try httpGet(port: port, "/api/live")
        #expect(status == 200)
        let list = try #require(try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])
        #expect(list["LiveMembers"] as? [Int] == [5])
        #expect(((list["LiveList"] as? [Any])?.first as? [String: Any])?["hosterName"] as? String == "H")
        let page = try JSONDecoder().decode(LineMemberPage.self, from: Data(try httpGet(port: port, "/api/live/e2e/members?page=1").body.utf8))
        #expect(page.total == 5 && page.members.map(\.userId) == ["host", "g1", "g2", "g3", "g4"])
        #expect(try httpGet(port: port, "/api/live/none/members").status == 404)

        // Three co-hosts.
        var pubIds: [String] = []
        var queries: [String] = []
        for n in 0..<3 {
            let applied = guests[n].client.apply()
            let peerId = try #require(guests[n].reply(applied)?.peerId)
            let application = try #require(hoster.wait(.application) { $0.peerId == peerId })
            #expect(application.userId == "g\(n + 1)" && application.userData == "data\(n + 1)")
            let accepted = hoster.client.accept(peerId: peerId)
            #expect(hoster.reply(accepted)?.liveCode == .ok)
            let result = try #require(guests[n].wait(.applicationResult))
            #expect(result.liveCode == .ok)
            let pubId = try #require(result.pubId)
            pubIds.append(pubId)
            queries.append(try #require(result.publishQuery))
            for (index, other) in ([hoster] + guests).enumerated() where index != n + 1 {
                #expect(other.wait(.cohostOpened) { $0.pubId == pubId && $0.peerId == peerId } != nil)
            }
        }
        #expect(Set(pubIds).count == 3)

        // The fourth applicant: the accept fails with 602 and the applicant hears 602.
        let applied = guests[3].client.apply()
        let peer4 = try #require(guests[3].reply(applied)?.peerId)
        #expect(hoster.wait(.application) { $0.peerId == peer4 } != nil)
        let refused = hoster.client.accept(peerId: peer4)
        #expect(hoster.reply(refused)?.liveCode == .lineFull)
        #expect(guests[3].wait(.applicationResult)?.liveCode == .lineFull)
        #expect(hoster.wait(.applicationCancelled) { $0.peerId == peer4 }?.liveCode == .lineFull)

        // Messages reach everyone else.
        hoster.client.message(type: "barrage", userName: "Host", content: "welcome 连麦")
        for guest in guests { #expect(guest.wait(.message) { $0.content == "welcome 连麦" }?.userId == "host") }
        guests[0].client.message(userName: "G1", header: "http://x/h.png", content: "hi all")
        for other in [hoster, guests[1], guests[2], guests[3]] {
            #expect(other.wait(.message) { $0.content == "hi all" }?.userName == "G1")
        }
        let tooLong = guests[0].client.message(userName: "G1", content: String(repeating: "x", count: 1025))
        #expect(guests[0].reply(tooLong)?.liveCode == .invalidParams)

        // Only the co-host publishes its pubId stream.
        let intruder = try TestRTMPClient(port: server.rtmpPort, path: "live/\(pubIds[0])", mode: .publish)
        guard case .failed(let status) = try intruder.start() else {
            Issue.record("a publish of a co-host's stream without its secret was accepted")
            return
        }
        #expect(status.code == RTMPStatus.Code.publishBadName)
        let wrongSecret = try TestRTMPClient(port: server.rtmpPort, path: "live/\(pubIds[0])?\(queries[1])", mode: .publish)
        #expect(try wrongSecret.start().map { if case .failed = $0 { true } else { false } } == true)
        let cohost = try TestRTMPClient(port: server.rtmpPort, path: "live/\(pubIds[0])?\(queries[0])", mode: .publish)
        #expect(try cohost.start().map { if case .publishing = $0 { true } else { false } } == true)

        // One co-host hangs up: everyone else hears the slot close.
        let hungUp = guests[1].client.hangup()
        #expect(guests[1].reply(hungUp)?.liveCode == .ok)
        for other in [hoster, guests[0], guests[2], guests[3]] {
            #expect(other.wait(.cohostClosed) { $0.pubId == pubIds[1] }?.reason == "hungUpByGuest")
        }

        // The hoster closes the line: every guest gets line leave.
        let closed = hoster.client.closeLine()
        #expect(hoster.reply(closed)?.liveCode == .ok)
        for guest in guests {
            #expect(guest.wait(.liveStop) != nil)
            #expect(guest.wait(.lineLeave)?.liveCode == .ok)
        }
        #expect(try httpGet(port: port, "/api/live").body == "{\"LiveList\":[],\"LiveMembers\":[]}")
        for participant in [hoster] + guests { participant.client.disconnect() }
        #expect(eventually(5) { server.line.connectionCount == 0 })
        // A request on a closed client is answered too (101), never left hanging.
        let late = guests[0].client.apply()
        #expect(guests[0].reply(late)?.liveCode == .networkDisconnected)
    }

    @Test("over real sockets: a silent guest is dropped after the heartbeat timeout, a hoster that disconnects closes the line")
    func heartbeatAndDisconnect() throws {
        let server = try startServer(LineLimits(applyTimeout: .milliseconds(400), heartbeatTimeout: .milliseconds(600)))
        defer { server.shutdown() }
        let clients = try EventLoopGroup(count: 1, name: "line-hb")
        defer { clients.shutdown() }
        let port = server.httpPort
        let hoster = try LineParticipant(port: port, loop: clients.loops[0], heartbeat: .milliseconds(100))
        #expect(hoster.reply(hoster.client.create(liveId: "hb", userId: "host"))?.liveCode == .ok)
        let silent = try LineParticipant(port: port, loop: clients.loops[0], heartbeat: .seconds(60))
        #expect(silent.reply(silent.client.join(liveId: "hb", userId: "quiet"))?.liveCode == .ok)
        let lively = try LineParticipant(port: port, loop: clients.loops[0], heartbeat: .milliseconds(100))
        #expect(lively.reply(lively.client.join(liveId: "hb", userId: "lively"))?.liveCode == .ok)

        // An application nobody answers times out for both sides.
        let applied = lively.client.apply()
        let peerId = try #require(lively.reply(applied)?.peerId)
        #expect(lively.wait(.applicationResult)?.reason == "timeout")
        #expect(hoster.wait(.applicationCancelled) { $0.peerId == peerId }?.reason == "timeout")

        #expect(eventually(5) { silent.closed.value != nil })
        #expect(silent.closed.value == 1008)
        #expect(hoster.wait(.memberCount) { $0.total == 2 } != nil)
        #expect(lively.closed.value == nil)

        hoster.client.disconnect()
        #expect(lively.wait(.lineLeave)?.liveCode == .networkDisconnected)
        lively.client.disconnect()
    }

    @Test("bad input on the line (not JSON, unknown op, binary, wrong types) is answered with code 4; the line keeps going")
    func badInput() throws {
        let server = try startServer()
        defer { server.shutdown() }
        let clients = try EventLoopGroup(count: 1, name: "line-bad")
        defer { clients.shutdown() }
        let loop = clients.loops[0]
        let received = Locked<[LineEvent]>([])
        let opened = Locked<WebSocketConnection?>(nil)
        WebSocketClient.connect(url: "ws://127.0.0.1:\(server.httpPort)/line", on: loop) { result in
            guard case .success(let socket) = result else { return }
            socket.onMessage = { _, message in
                if case .text(let text) = message, let event = LineEvent.parse(text) { received.update { $0.append(event) } }
            }
            opened.update { $0 = socket }
        }
        #expect(eventually(5) { opened.value != nil })
        let socket = try #require(opened.value)
        let inputs = ["not json", "{\"op\":\"dance\",\"id\":1}", "{\"op\":\"join\",\"id\":2,\"liveId\":7}", "[]", "{\"id\":3}"]
        _ = loop.execute {
            for input in inputs { socket.send(text: input) }
            socket.send(binary: [0, 1, 2])
        }
        #expect(eventually(5) { received.value.count == inputs.count + 1 })
        #expect(received.value.allSatisfy { $0.event == .reply && $0.liveCode == .invalidParams })
        #expect(received.value.compactMap(\.id) == [1, 2, 3])
        let hoster = try LineParticipant(port: server.httpPort, loop: loop)
        #expect(hoster.reply(hoster.client.create(liveId: "still", userId: "h"))?.liveCode == .ok)
    }
}
