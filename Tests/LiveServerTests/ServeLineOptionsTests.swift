import Foundation
import LiveNet
import LiveSignal
import LiveTestSupport
import Testing
@testable import LiveServer

@Suite("liveline serve: line options")
struct ServeLineOptionsTests {
    @Test("--max-cohosts 1 and --apply-timeout 0.5 shape the line; bad values are usage errors")
    func lineOptions() throws {
        let serve = try ChildProcess(BuildProducts.liveline, ["serve", "--rtmp", "127.0.0.1:0", "--http", "127.0.0.1:0",
                                                           "--max-cohosts", "1", "--apply-timeout", "0.5", "--heartbeat-timeout", "5",
                                                           "--max-members", "3"])
        defer {
            serve.signal(SIGTERM)
            _ = serve.wait(timeout: 10)
        }
        let (rtmpPort, port) = try servePorts(serve)
        let stream = try publishLine("cli", rtmpPort: rtmpPort)
        defer { withExtendedLifetime(stream.publisher) {} }
        let clients = try EventLoopGroup(count: 1, name: "serve-line")
        defer { clients.shutdown() }
        let loop = clients.loops[0]

        let hoster = try LineParticipant(port: port, loop: loop)
        #expect(hoster.reply(hoster.create("cli", userId: "host", lineKey: stream.key))?.liveCode == .ok)
        let first = try LineParticipant(port: port, loop: loop)
        let second = try LineParticipant(port: port, loop: loop)
        #expect(first.reply(first.client.join(liveId: "cli", userId: "a"))?.liveCode == .ok)
        #expect(second.reply(second.client.join(liveId: "cli", userId: "b"))?.liveCode == .ok)
        let peer1 = try #require(first.reply(first.client.apply())?.peerId)
        #expect(hoster.reply(hoster.client.accept(peerId: peer1))?.liveCode == .ok)
        let peer2 = try #require(second.reply(second.client.apply())?.peerId)
        #expect(hoster.reply(hoster.client.accept(peerId: peer2))?.liveCode == .lineFull)
        // --max-members 3: a fourth member is refused with 209.
        let fourth = try LineParticipant(port: port, loop: loop)
        #expect(fourth.reply(fourth.client.join(liveId: "cli", userId: "c"))?.liveCode == .noResources)
        let peer3 = try #require(second.reply(second.client.apply())?.peerId)
        #expect(second.wait(.applicationResult) { $0.peerId == peer3 }?.reason == "timeout")
        for participant in [hoster, first, second, fourth] { participant.client.disconnect() }

        let bad = try ChildProcess(BuildProducts.liveline, ["serve", "--max-cohosts", "many"])
        #expect(bad.wait(timeout: 10) == 2)
        #expect(bad.stderr.contains("--max-cohosts"))
        let help = try ChildProcess(BuildProducts.liveline, ["serve", "--help"])
        #expect(help.wait(timeout: 10) == 0)
        #expect(help.stdout.contains("--heartbeat-timeout S"))
        #expect(help.stdout.contains("--max-members N") && help.stdout.contains("--token-will-expire S"))
        let badMembers = try ChildProcess(BuildProducts.liveline, ["serve", "--max-members", "0"])
        #expect(badMembers.wait(timeout: 10) == 2)
    }

    @Test("liveline serve speaks the call signaling on /call: two users register, a taken id is 604, an offline callee 203; --help tells of it")
    func callRoute() throws {
        let serve = try ChildProcess(BuildProducts.liveline, ["serve", "--rtmp", "127.0.0.1:0", "--http", "127.0.0.1:0"])
        defer {
            serve.signal(SIGTERM)
            _ = serve.wait(timeout: 10)
        }
        let (_, port) = try servePorts(serve)
        let clients = try EventLoopGroup(count: 1, name: "serve-call")
        defer { clients.shutdown() }
        let alice = try CallUser(port: port, loop: clients.loops[0])
        let twin = try CallUser(port: port, loop: clients.loops[0])
        #expect(alice.register("alice") == .ok)
        #expect(twin.register("alice") == .alreadyOpen)
        let invitation = CallMessage(action: .videoCall, fromUserId: "alice", remoteUserId: "bob", callId: "c1",
                                     fromRoomId: CallStreams.newRoomId())
        #expect(alice.send(invitation) == .noSuchUser)
        let help = try ChildProcess(BuildProducts.liveline, ["serve", "--help"])
        #expect(help.wait(timeout: 10) == 0)
        #expect(help.stdout.contains("ws://HOST:PORT/call") && help.stdout.contains("call=SECRET"))
    }
}
