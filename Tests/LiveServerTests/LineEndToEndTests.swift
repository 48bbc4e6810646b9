import Foundation
import LiveAuth
import LiveCore
import LiveNet
import LiveSignal
import LiveTestSupport
import Testing
@testable import LiveRTMP
@testable import LiveServer

/// One LineClient and every event it received.
final class LineParticipant: Sendable {
    let client: LineClient
    let events = Locked<[LineEvent]>([])
    let closed = Locked<UInt16?>(nil)

    convenience init(port: UInt16, loop: EventLoop, heartbeat: Duration = .seconds(10)) throws {
        try self.init(url: "ws://127.0.0.1:\(port)/line", loop: loop, heartbeat: heartbeat)
    }

    init(url: String, loop: EventLoop, heartbeat: Duration = .seconds(10)) throws {
        client = LineClient(url: url, loop: loop, heartbeatInterval: heartbeat)
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

    /// createRTCLine as the publisher of live/LIVEID holding `lineKey` (see `publishLine`).
    @discardableResult
    func create(_ liveId: String, userId: String, userData: String = "", liveInfo: String = "", lineKey: String) -> Int {
        client.create(liveId: liveId, userId: userId, userData: userData, liveInfo: liveInfo, stream: "live/\(liveId)",
                      lineKey: lineKey)
    }
}

/// Publishes live/LIVEID with `?lineKey=KEY`, as `liveline host --line` does: on a server
/// without tokens only this publisher may create the line LIVEID. Keep it while the line lives.
func publishLine(_ liveId: String, on server: RelayServer, key: String = "key-\(UInt32.random(in: 0...UInt32.max))") throws
    -> (publisher: TestRTMPClient, key: String)
{
    try publishLine(liveId, rtmpPort: server.rtmpPort, key: key)
}

func publishLine(_ liveId: String, rtmpPort: UInt16, key: String = "key-\(UInt32.random(in: 0...UInt32.max))") throws
    -> (publisher: TestRTMPClient, key: String)
{
    let publisher = try TestRTMPClient(port: rtmpPort, path: "live/\(liveId)?lineKey=\(key)", mode: .publish)
    guard case .publishing = try publisher.start() else { throw TestSocket.Failure(description: "publishing live/\(liveId) failed") }
    return (publisher, key)
}

/// A WebSocket to `/line` (or `path`) over a blocking socket that reads only when asked:
/// a participant that stops reading, or one that floods the server.
final class RawLineSocket {
    let socket: TestSocket

    init(port: UInt16, path: String = "/line", receiveBufferSize: Int32? = nil) throws {
        socket = try TestSocket(port: port, receiveBufferSize: receiveBufferSize)
        let key = WebSocketHandshake.makeKey()
        socket.send(WebSocketHandshake.clientRequest(host: "127.0.0.1", port: port, path: path, key: key))
        var bytes: [UInt8] = []
        while try WebSocketHandshake.parseServerResponse(bytes, key: key) == nil {
            guard case .bytes(let more) = socket.receive(timeout: 5) else { throw TestSocket.Failure(description: "no WebSocket handshake") }
            bytes += more
        }
    }

    /// One masked text frame.
    @discardableResult
    func send(_ text: String) -> Bool {
        socket.send(WebSocketFrame(opcode: .text, payload: Array(text.utf8)).encoded(maskingKey: [1, 2, 3, 4]))
    }

    /// Reads everything until the server closes the connection (true, with what was
    /// read) or `timeout` passes (false).
    func readUntilClosed(timeout: Double) -> (closed: Bool, text: String) {
        var bytes: [UInt8] = []
        let deadline = Date().addingTimeInterval(timeout)
        while deadline.timeIntervalSinceNow > 0 {
            switch socket.receive(timeout: deadline.timeIntervalSinceNow) {
            case .bytes(let more): bytes += more
            case .closed: return (true, String(decoding: bytes, as: UTF8.self))
            case .timedOut: break
            }
        }
        return (false, String(decoding: bytes, as: UTF8.self))
    }
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
        let stream = try publishLine("e2e", on: server)
        defer { withExtendedLifetime(stream.publisher) {} }
        let created = hoster.create("e2e", userId: "host", userData: "{\"name\":\"H\"}",
                                    liveInfo: "{\"hosterName\":\"H\",\"liveTopic\":\"co-host test\"}", lineKey: stream.key)
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
        var peerIds: [String: String] = [:]
        func peerIdOf(_ pubId: String) -> String { peerIds[pubId] ?? "?" }
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
            peerIds[pubId] = peerId
            queries.append(try #require(result.publishQuery))
            // The hoster and the co-hosts hear the stream's name, the other guests only that a co-host opened.
            for (index, other) in ([hoster] + guests).enumerated() where index != n + 1 {
                let opened = other.wait(.cohostOpened) { $0.peerId == peerId }
                #expect(opened != nil)
                #expect(opened?.pubId == (index <= n ? pubId : nil), "participant \(index)")
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

        // No pubId ever reached the audience (guest 4 never co-hosted).
        #expect(!guests[3].events.value.contains { $0.pubId != nil })

        // One co-host hangs up: everyone else hears the slot close.
        let hungUp = guests[1].client.hangup()
        #expect(guests[1].reply(hungUp)?.liveCode == .ok)
        for other in [hoster, guests[0], guests[2], guests[3]] {
            #expect(other.wait(.cohostClosed) { $0.peerId == peerIdOf(pubIds[1]) }?.reason == "hungUpByGuest")
        }

        // The hoster hangs up the co-host that publishes: the server ends its publish.
        let peer1 = peerIdOf(pubIds[0])
        #expect(hoster.reply(hoster.client.hangup(peerId: peer1))?.liveCode == .ok)
        #expect(guests[0].wait(.hungUp)?.peerId == peer1)
        _ = try cohost.pump(timeout: 5) { _ in false }
        #expect(cohost.closedByServer, "the hung-up co-host still publishes")
        #expect(try eventually(5) { try apiStreams(server).first { $0.name == pubIds[0] }?.publisher == nil })

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
        let stream = try publishLine("hb", on: server)
        defer { withExtendedLifetime(stream.publisher) {} }
        #expect(hoster.reply(hoster.create("hb", userId: "host", lineKey: stream.key))?.liveCode == .ok)
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
        #expect(silent.closed.value == 4101) // 4000 + 101: network disconnected (heartbeat)
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
        let stream = try publishLine("still", on: server)
        defer { withExtendedLifetime(stream.publisher) {} }
        #expect(hoster.reply(hoster.create("still", userId: "h", lineKey: stream.key))?.liveCode == .ok)
    }

    @Test("a squatter cannot open a line before (or instead of) its hoster: only the stream's publisher with its lineKey can")
    func squatter() throws {
        let server = try startServer()
        defer { server.shutdown() }
        let clients = try EventLoopGroup(count: 1, name: "line-squat")
        defer { clients.shutdown() }
        let squatter = try LineParticipant(port: server.httpPort, loop: clients.loops[0])
        // Before the hoster publishes: neither a bare create nor one naming the stream.
        #expect(squatter.reply(squatter.client.create(liveId: "sq", userId: "squatter"))?.liveCode == .unauthorized)
        #expect(squatter.reply(squatter.create("sq", userId: "squatter", lineKey: "guess"))?.liveCode == .unauthorized)
        #expect(squatter.wait(.lineResult)?.liveCode == .unauthorized)
        let stream = try publishLine("sq", on: server)
        defer { withExtendedLifetime(stream.publisher) {} }
        // While it publishes: a wrong key is still refused; the hoster's own key opens the line.
        #expect(squatter.reply(squatter.create("sq", userId: "squatter", lineKey: "guess"))?.liveCode == .unauthorized)
        let hoster = try LineParticipant(port: server.httpPort, loop: clients.loops[0])
        #expect(hoster.reply(hoster.create("sq", userId: "host", liveInfo: "{\"hosterName\":\"H\"}", lineKey: stream.key))?.liveCode == .ok)
        #expect(try httpGet(port: server.httpPort, "/api/live").body.contains("\"hosterName\":\"H\""))
        // And nobody joins as the hoster.
        let impostor = try LineParticipant(port: server.httpPort, loop: clients.loops[0])
        #expect(impostor.reply(impostor.client.join(liveId: "sq", userId: "host"))?.liveCode == .alreadyOpen)
    }

    @Test("HTTP: page=9223372036854775807 and other huge pages answer 200 with no members; the server stays up")
    func hugePage() throws {
        let server = try startServer()
        defer { server.shutdown() }
        let clients = try EventLoopGroup(count: 1, name: "line-page")
        defer { clients.shutdown() }
        let hoster = try LineParticipant(port: server.httpPort, loop: clients.loops[0])
        let stream = try publishLine("pg", on: server)
        defer { withExtendedLifetime(stream.publisher) {} }
        #expect(hoster.reply(hoster.create("pg", userId: "host", lineKey: stream.key))?.liveCode == .ok)
        for page in ["9223372036854775807", "1229782938247303442", "614891469123651721"] {
            let (status, body) = try httpGet(port: server.httpPort, "/api/live/pg/members?page=\(page)")
            #expect(status == 200)
            #expect(try JSONDecoder().decode(LineMemberPage.self, from: Data(body.utf8)).members.isEmpty)
        }
        #expect(try httpGet(port: server.httpPort, "/api/live/pg/members?page=9223372036854775808").status == 400)
        #expect(try httpGet(port: server.httpPort, "/api/live/pg/members?page=1").body.contains("\"host\""))
    }

    @Test("liveInfo [1,] and a BOM are refused at create; /api/live stays strict JSON")
    func liveInfoOverTheWire() throws {
        let server = try startServer()
        defer { server.shutdown() }
        let clients = try EventLoopGroup(count: 1, name: "line-info")
        defer { clients.shutdown() }
        var publishers: [TestRTMPClient] = []
        defer { withExtendedLifetime(publishers) {} }
        for (n, info) in ["[1,]", "\u{FEFF}{\"a\":1}", "{\"ok\":true}"].enumerated() {
            let stream = try publishLine("info\(n)", on: server)
            publishers.append(stream.publisher)
            let hoster = try LineParticipant(port: server.httpPort, loop: clients.loops[0])
            let expected: LiveCode = n < 2 ? .invalidParams : .ok
            #expect(hoster.reply(hoster.create("info\(n)", userId: "h", liveInfo: info, lineKey: stream.key))?.liveCode == expected)
        }
        let body = try httpGet(port: server.httpPort, "/api/live").body
        #expect(body == "{\"LiveList\":[{\"ok\":true}],\"LiveMembers\":[1]}")
        #expect(LineJSONValidator.isStrict(body))
    }

    @Test("a participant spamming requests far over the rate limit is answered 201 and then disconnected; a normal one is not")
    func spamClosed() throws {
        let server = try startServer()
        defer { server.shutdown() }
        let spammer = try RawLineSocket(port: server.httpPort)
        for n in 0..<200 { spammer.send("{\"op\":\"heartbeat\",\"id\":\(n)}") }
        let (closed, text) = spammer.readUntilClosed(timeout: 5)
        #expect(closed)
        #expect(text.contains("\"code\":201"))
        #expect(text.contains("\"code\":0"))
        let calm = try RawLineSocket(port: server.httpPort)
        for n in 0..<10 {
            calm.send("{\"op\":\"heartbeat\",\"id\":\(n)}")
            usleep(60_000)
        }
        #expect(!calm.readUntilClosed(timeout: 0.5).closed)
    }

    @Test("a member that stops reading is closed once its unread events pass the budget; the others get everything")
    func slowReaderClosed() throws {
        var limits = LineLimits()
        limits.requestsPerSecond = 1_000_000
        limits.requestBurst = 1_000_000
        limits.maxQueuedBytes = 128 << 10
        let server = try startServer(limits)
        defer { server.shutdown() }
        let clients = try EventLoopGroup(count: 1, name: "line-slow")
        defer { clients.shutdown() }
        let stream = try publishLine("slow", on: server)
        defer { withExtendedLifetime(stream.publisher) {} }
        let hoster = try LineParticipant(port: server.httpPort, loop: clients.loops[0])
        #expect(hoster.reply(hoster.create("slow", userId: "host", lineKey: stream.key))?.liveCode == .ok)
        let reader = try LineParticipant(port: server.httpPort, loop: clients.loops[0])
        #expect(reader.reply(reader.client.join(liveId: "slow", userId: "reader"))?.liveCode == .ok)
        let sleeper = try RawLineSocket(port: server.httpPort, receiveBufferSize: 4096)
        sleeper.send(LineRequest(op: .join, id: 1, liveId: "slow", userId: "sleeper").jsonText)
        #expect(hoster.wait(.memberCount) { $0.total == 3 } != nil)
        let content = String(repeating: "x", count: 1000)
        var sent = 0
        var closed = false
        // Batches of 50 (55 KB) stay well inside the budget of a member that reads.
        for batch in 0..<200 where !closed {
            for n in 0..<50 { hoster.client.message(userName: "host", header: "\(batch)-\(n)", content: content) }
            sent += 50
            #expect(eventually(10) { reader.count(.message) == sent }, "the reader got \(reader.count(.message)) of \(sent), closed \(String(describing: reader.closed.value))")
            closed = server.line.memberPage(liveId: "slow", page: 1)?.total == 2
        }
        #expect(closed, "the sleeping member was never closed")
        let sleeperClosed = sleeper.readUntilClosed(timeout: 5).closed
        #expect(sleeperClosed)
        #expect(hoster.wait(.memberCount) { $0.total == 2 } != nil)
        #expect(reader.closed.value == nil && hoster.closed.value == nil)
        #expect(server.line.memberPage(liveId: "slow", page: 1)?.members.map(\.userId) == ["host", "reader"])
    }

    @Test("with tokens: ?token= on /line opens and joins; a wrong-scope token, none, or a renewal for another user are refused")
    func tokensOverTheWire() throws {
        let secret = Array("line-e2e-token-secret-0123456789".utf8)
        var configuration = RelayServer.Configuration(rtmp: RTMPServer.Configuration(port: 0), httpPort: 0, loops: 2)
        configuration.auth = TokenVerifier(secret: secret)
        let server = try RelayServer(configuration: configuration)
        defer { server.shutdown() }
        let clients = try EventLoopGroup(count: 1, name: "line-tokens")
        defer { clients.shutdown() }
        func token(_ sub: String, _ action: AccessAction) -> String {
            AccessToken.mint(AccessClaims(sub: sub, exp: Int64(Date().timeIntervalSince1970) + 60,
                                          perm: [AccessPermission(action: action, path: "tk")]), secret: secret)
        }
        func participant(_ query: String = "") throws -> LineParticipant {
            try LineParticipant(url: "ws://127.0.0.1:\(server.httpPort)/line\(query)", loop: clients.loops[0])
        }
        // No publisher is needed with tokens: the token is the authority.
        let hoster = try participant("?token=" + token("alice", .lineHost))
        #expect(hoster.reply(hoster.client.create(liveId: "tk", userId: "alice"))?.liveCode == .ok)
        let guest = try participant("?token=" + token("bob", .lineGuest))
        #expect(guest.reply(guest.client.join(liveId: "tk", userId: "bob"))?.liveCode == .ok)
        let wrong = try participant("?token=" + token("carl", .lineGuest))
        #expect(wrong.reply(wrong.client.create(liveId: "tk2", userId: "carl"))?.liveCode == .unauthorized)
        let none = try participant()
        #expect(none.reply(none.client.join(liveId: "tk", userId: "dan"))?.liveCode == .tokenMustBeVerified)
        #expect(guest.reply(guest.client.renewToken(token("eve", .lineGuest)))?.liveCode == .unauthorized)
        #expect(guest.reply(guest.client.renewToken(token("bob", .lineGuest)))?.liveCode == .ok)
        // A guest's token does not make it the hoster.
        #expect(guest.reply(guest.client.closeLine())?.liveCode == .unauthorized)
        #expect(server.line.memberPage(liveId: "tk", page: 1)?.members.map(\.userId) == ["alice", "bob"])
    }
}
