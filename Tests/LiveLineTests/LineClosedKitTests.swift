import LiveSignal
import Foundation
import LiveAuth
import LiveTestSupport
import LiveCore
@testable import LiveLine
import LiveRTMP
import LiveServer
import Testing

/// A relay with tokens on loopback, and tokens for it: no push is needed to open a line.
struct TokenRelay {
    static let secret = Array("line-closed-kit-test-secret-0123456789".utf8)
    let relay: RelayServer
    let server: LineServer

    init(liveId: String, signalPort: Int? = nil) throws {
        var configuration = RelayServer.Configuration(rtmp: RTMPServer.Configuration(port: 0), httpPort: 0, loops: 2)
        configuration.auth = TokenVerifier(secret: Self.secret, leewaySeconds: 0)
        relay = try RelayServer(configuration: configuration)
        server = LineServer(signalURL: "ws://127.0.0.1:\(signalPort ?? Int(relay.httpPort))/line",
                            rtmp: try RTMPURL(parsing: "rtmp://127.0.0.1:\(relay.rtmpPort)/live/\(liveId)"))
    }

    /// The same relay's line, its signaling reached through `port` (a proxy in front).
    func server(signalPort: Int) -> LineServer {
        LineServer(signalURL: "ws://127.0.0.1:\(signalPort)/line", rtmp: server.rtmp)
    }

    static func token(_ sub: String, _ action: AccessAction, _ path: String, seconds: Int64 = 60) -> String {
        AccessToken.mint(AccessClaims(sub: sub, exp: Int64(Date().timeIntervalSince1970) + seconds,
                                      perm: [AccessPermission(action: action, path: path)]), secret: secret)
    }
}

/// A hoster kit with its event log, line opened with a token.
func openLine(_ relay: TokenRelay, liveId: String, user: String = "host", server: LineServer? = nil,
              backoff: ReconnectBackoff = ReconnectBackoff(), seconds: Int64 = 60) throws -> (Hoster, LineEventLog) {
    var options = Hoster.Options()
    options.push.backoff = backoff
    let hoster = try Hoster(options: options)
    let log = LineEventLog()
    hoster.onLineEvent = { log.append($0) }
    try hoster.createLine(server: server ?? relay.server, liveId: liveId, userId: user,
                          token: TokenRelay.token(user, .lineHost, liveId, seconds: seconds))
    #expect(log.wait { event -> LiveCode? in if case .lineResult(let code, _) = event { return code }; return nil } == .ok)
    return (hoster, log)
}

/// A guest kit in the line with its event log.
func joinLine(_ relay: TokenRelay, liveId: String, user: String, options: Guest.Options = Guest.Options(),
              seconds: Int64 = 60) throws -> (Guest, LineEventLog) {
    let guest = Guest(options: options)
    let log = LineEventLog()
    guest.onLineEvent = { log.append($0) }
    try guest.joinLine(server: relay.server, liveId: liveId, userId: user, token: TokenRelay.token(user, .lineGuest, liveId, seconds: seconds))
    #expect(log.wait { event -> LiveCode? in if case .lineResult(let code, _) = event { return code }; return nil } == .ok)
    return (guest, log)
}

extension LineEventLog {
    /// The codes of every `lineClosed` so far.
    var closedCodes: [LiveCode] { all.compactMap { if case .lineClosed(let code, _) = $0 { code } else { nil } } }

    /// The code of the first `lineClosed`, waiting up to `timeout` seconds.
    func waitClosed(timeout: Double = 5) -> LiveCode? {
        wait(timeout: timeout) { event -> LiveCode? in if case .lineClosed(let code, _) = event { return code }; return nil }
    }

    /// The code of the first `.refused` of `op`.
    func waitRefused(_ op: String) -> LiveCode? {
        wait { event -> LiveCode? in if case .refused(op, let code, _) = event { return code }; return nil }
    }
}

@Suite("onRTCLineClosed: every way a line ends reaches both kits with its code, once, last", .serialized)
struct LineClosedKitTests {
    static let quick = ReconnectBackoff(baseSeconds: 0.1, factor: 1, capSeconds: 0.1, jitter: 0, maxTries: 2)

    @Test("the hoster closes the line: lineClosed 0 before closeLine returns; the guest hears lineLeave 0 then lineClosed 0 as its last event; a guest that leaves hears lineClosed 0; line calls are then refused with 600")
    func closedByTheKits() throws {
        let relay = try TokenRelay(liveId: "shut")
        defer { relay.relay.shutdown() }
        let (hoster, hosterLog) = try openLine(relay, liveId: "shut")
        let (stayer, stayerLog) = try joinLine(relay, liveId: "shut", user: "stayer")
        let (leaver, leaverLog) = try joinLine(relay, liveId: "shut", user: "leaver")

        leaver.leaveLine()
        #expect(leaverLog.closedCodes == [.ok])
        if case .lineClosed(_, let reason)? = leaverLog.all.last { #expect(reason == "left the line") } else { Issue.record("not last: \(leaverLog.all)") }

        hoster.closeLine()
        #expect(hosterLog.closedCodes == [.ok])
        #expect(stayerLog.waitClosed() == .ok)
        Thread.sleep(forTimeInterval: 0.3)
        let names = stayerLog.all.map(\.name)
        #expect(names.suffix(2) == ["lineLeave", "lineClosed"], "\(names)")
        #expect(stayerLog.closedCodes == [.ok] && hosterLog.closedCodes == [.ok])

        // The line is gone for both kits: their calls are answered, with 600.
        hoster.acceptLine(peerId: "nobody")
        #expect(hosterLog.waitRefused("accept") == .lineNotStarted)
        stayer.applyLine()
        #expect(stayerLog.waitRefused("apply") == .lineNotStarted)
        stayer.leaveLine()
        #expect(stayerLog.closedCodes == [.ok])
    }

    @Test("the server drops the line when its token expires unrenewed: authFailed 212, then lineClosed 212")
    func tokenExpiry() throws {
        let relay = try TokenRelay(liveId: "short")
        defer { relay.relay.shutdown() }
        let (hoster, log) = try openLine(relay, liveId: "short", seconds: 2)
        defer { hoster.closeLine() }
        #expect(log.waitClosed(timeout: 6) == .authTimeout)
        let names = log.all.map(\.name)
        #expect(names.firstIndex(of: "authFailed").map { $0 < names.firstIndex(of: "lineClosed")! } == true, "\(names)")
        // No reconnect after an end the server chose.
        Thread.sleep(forTimeInterval: 0.3)
        #expect(!names.contains("lineReconnecting") && log.closedCodes == [.authTimeout])
    }

    @Test("kick: the same hoster creates the line on another connection: the first kit hears lineClosed 211 (forced exit), the second holds the line")
    func forcedExit() throws {
        let relay = try TokenRelay(liveId: "twice")
        defer { relay.relay.shutdown() }
        let (first, firstLog) = try openLine(relay, liveId: "twice")
        let (second, secondLog) = try openLine(relay, liveId: "twice")
        defer { second.closeLine() }
        #expect(firstLog.waitClosed() == .forcedExit)
        first.acceptLine(peerId: "nobody")
        #expect(firstLog.waitRefused("accept") == .lineNotStarted)
        #expect(relay.relay.line.memberPage(liveId: "twice", page: 1)?.members.map(\.userId) == ["host"])
        #expect(secondLog.closedCodes.isEmpty)
        first.closeLine()
        #expect(firstLog.closedCodes == [.forcedExit])
    }

    @Test("connections lost for good: the hoster's and a guest's kits end with lineClosed 101 after their reconnect tries; a guest still connected hears lineLeave 101, tries to join again and ends with lineClosed 101")
    func connectionLost() throws {
        let relay = try TokenRelay(liveId: "cut")
        defer { relay.relay.shutdown() }
        let proxy = try CutProxy(upstreamPort: Int(relay.relay.httpPort), cutFirstAfter: Int.max)
        let (hoster, hosterLog) = try openLine(relay, liveId: "cut", server: relay.server(signalPort: proxy.port), backoff: Self.quick)
        defer { hoster.closeLine() }
        var options = Guest.Options()
        options.reconnect = Self.quick
        let (guest, guestLog) = try joinLine(relay, liveId: "cut", user: "g", options: options)
        defer { guest.leaveLine() }
        // A guest whose own connection goes through the proxy loses it with the hoster's.
        let cutGuest = Guest(options: options)
        let cutLog = LineEventLog()
        cutGuest.onLineEvent = { cutLog.append($0) }
        try cutGuest.joinLine(server: relay.server(signalPort: proxy.port), liveId: "cut", userId: "h",
                              token: TokenRelay.token("h", .lineGuest, "cut"))
        defer { cutGuest.leaveLine() }
        #expect(cutLog.wait { event -> LiveCode? in if case .lineResult(let code, _) = event { return code }; return nil } == .ok)

        proxy.stop()
        #expect(cutLog.waitClosed(timeout: 5) == .networkDisconnected)
        #expect(hosterLog.waitClosed(timeout: 5) == .networkDisconnected)
        #expect(hosterLog.all.filter { $0.name == "lineReconnecting" }.count == 2)
        #expect(guestLog.waitClosed(timeout: 5) == .networkDisconnected)
        let names = guestLog.all.map(\.name)
        #expect(names.contains("lineLeave") && names.contains("lineReconnecting") && names.last == "lineClosed", "\(names)")
        Thread.sleep(forTimeInterval: 0.3)
        #expect(hosterLog.closedCodes == [.networkDisconnected] && guestLog.closedCodes == [.networkDisconnected])
    }
}

extension LineClosedKitTests {
    @Test("the server drops a kit that floods it: some requests are refused with 201, then the line ends with lineClosed 201")
    func flooding() throws {
        let relay = try TokenRelay(liveId: "loud")
        defer { relay.relay.shutdown() }
        let (hoster, hosterLog) = try openLine(relay, liveId: "loud")
        defer { hoster.closeLine() }
        let (guest, log) = try joinLine(relay, liveId: "loud", user: "loud")
        defer { guest.leaveLine() }
        for n in 0..<200 { guest.sendMessage(userName: "loud", content: "\(n)") }
        #expect(log.waitClosed() == .badRequest)
        #expect(log.waitRefused("message") == .badRequest)
        #expect(hosterLog.closedCodes.isEmpty)
    }
}

@Suite("onRTCMemberListNotify and the member pages", .serialized)
struct LineMembersKitTests {
    @Test("five in the room: memberCount names the server, the room and 5; LineServer.members pages them by 2 with an api token; no token 401/213, no line 404/600, size 0 400/4")
    func memberPages() async throws {
        let relay = try TokenRelay(liveId: "crowd")
        defer { relay.relay.shutdown() }
        // Tokens that outlive the test however loaded the machine (a 60 s one expired once).
        let (hoster, hosterLog) = try openLine(relay, liveId: "crowd", seconds: 600)
        defer { hoster.closeLine() }
        var guests: [(Guest, LineEventLog)] = []
        for n in 1...4 { guests.append(try joinLine(relay, liveId: "crowd", user: "g\(n)", seconds: 600)) }
        defer { guests.forEach { $0.0.leaveLine() } }
        // Both kits hear it: the hoster and a guest.
        for log in [hosterLog, guests[0].1] {
            let notified = log.wait { event -> (String, String)? in
                if case .memberCount(let serverId, let roomId, 5) = event { return (serverId, roomId) }; return nil
            }
            #expect(notified?.0 == relay.server.signalURL && notified?.1 == "crowd")
        }

        // Long-lived: four joins before its first use may take a while on a loaded machine.
        let token = TokenRelay.token("app", .api, "api/live/crowd/members", seconds: 600)
        let first = try await relay.server.members(liveId: "crowd", page: 1, size: 2, token: token)
        #expect(first.total == 5 && first.pageSize == 2 && first.page == 1)
        #expect(first.members.map(\.userId) == ["host", "g1"] && first.members.map(\.role) == ["hoster", "guest"])
        #expect(try await relay.server.members(liveId: "crowd", page: 3, size: 2, token: token).members.map(\.userId) == ["g4"])
        #expect(try await relay.server.members(liveId: "crowd", page: 4, size: 2, token: token).members.isEmpty)
        #expect(try await relay.server.members(liveId: "crowd", token: token).members.count == 5)

        await #expect(throws: LineServer.MembersError.refused(status: 401, code: .tokenMustBeVerified, message: "no token given")) {
            try await relay.server.members(liveId: "crowd")
        }
        let elsewhere = TokenRelay.token("app", .api, "api/live/nowhere/members", seconds: 600)
        await #expect(throws: LineServer.MembersError.refused(status: 404, code: .lineNotStarted, message: "line nowhere has not started")) {
            try await relay.server.members(liveId: "nowhere", token: elsewhere)
        }
        await #expect(throws: LineServer.MembersError.refused(status: 400, code: .invalidParams, message: "size must be a number from 1 to 100, not '0'")) {
            try await relay.server.members(liveId: "crowd", size: 0, token: token)
        }
        let nobody = LineServer(signalURL: "ws://127.0.0.1:1/line", rtmp: relay.server.rtmp)
        await #expect(throws: LineServer.MembersError.self) { try await nobody.members(liveId: "crowd") }
    }
}

extension LineMembersKitTests {
    @Test("a member page answer is checked before use: no head, a status line that is not HTTP, a short body, a body that is no page")
    func answerParsing() throws {
        func page(_ text: String) throws(LineServer.MembersError) -> LineMemberPage { try LineServer.memberPage(from: Array(text.utf8)) }
        let body = #"{"liveId":"r","page":1,"pageSize":15,"total":1,"members":[{"userId":"h","userData":"","role":"hoster"}]}"#
        #expect(try page("HTTP/1.1 200 OK\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)trailing").members.map(\.userId) == ["h"])
        #expect(throws: LineServer.MembersError.malformed("no complete HTTP head")) { try page("HTTP/1.1 200 OK\r\n") }
        #expect(throws: LineServer.MembersError.self) { try page("SSH-2.0 hello\r\n\r\n") }
        #expect(throws: LineServer.MembersError.malformed("the body ended after 2 of 10 bytes")) { try page("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n{}") }
        #expect(throws: LineServer.MembersError.malformed("the body is not a member page")) { try page("HTTP/1.1 200 OK\r\n\r\n[1,2]") }
        #expect(throws: LineServer.MembersError.refused(status: 503, code: .unknown, message: "HTTP 503")) { try page("HTTP/1.1 503 Busy\r\n\r\n") }
    }
}

extension LineClosedKitTests {
    @Test("closeLine(completion:) and leaveLine(completion:) return at once, even on the line's own thread; lineClosed 0 comes before the completion")
    func closingWithoutBlocking() throws {
        let relay = try TokenRelay(liveId: "async")
        defer { relay.relay.shutdown() }
        let (hoster, hosterLog) = try openLine(relay, liveId: "async")
        let (guest, guestLog) = try joinLine(relay, liveId: "async", user: "g")
        // From inside a line event, on the line's loop thread: nothing blocks it.
        let left = Locked<[LiveCode]?>(nil)
        guest.onLineEvent = { event in
            guestLog.append(event)
            if case .message = event {
                guest.leaveLine { left.update { $0 = guestLog.closedCodes } }
            }
        }
        hoster.sendMessage(userName: "host", content: "bye")
        #expect(eventually(5) { left.value != nil })
        #expect(left.value == [.ok])
        let closed = Locked<[LiveCode]?>(nil)
        let started = Date()
        hoster.closeLine { closed.update { $0 = hosterLog.closedCodes } }
        #expect(Date().timeIntervalSince(started) < 0.1)
        #expect(eventually(5) { closed.value != nil })
        #expect(closed.value == [.ok])
    }

    @Test("a close code says whether the server ended the session on purpose, and with which SDK code")
    func closeCodes() {
        #expect(LineSession.endCode(closeCode: 4211) == .forcedExit)
        #expect(LineSession.endCode(closeCode: 4212) == .authTimeout)
        #expect(LineSession.endCode(closeCode: 4201) == .badRequest)
        #expect(LineSession.endCode(closeCode: 4101) == .networkDisconnected)
        #expect(LineSession.endCode(closeCode: 4999) == .unknown)
        #expect(LineSession.endCode(closeCode: 1008) == .unknown)
        // Losses worth a reconnect: going away (a restart), abnormal, normal.
        #expect(LineSession.endCode(closeCode: 1001) == nil && LineSession.endCode(closeCode: 1006) == nil && LineSession.endCode(closeCode: 1000) == nil)
    }
}
