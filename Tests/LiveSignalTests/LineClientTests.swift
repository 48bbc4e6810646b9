import LiveCore
import LiveNet
import LiveTestSupport
import Testing
@testable import LiveSignal

/// `LineClient` against a stand-in line server (a bare WebSocket route, no relay) that
/// answers every request but heartbeats with a `reply` of code 0, and can push events.
@Suite("Line client against a stand-in server", .serialized)
struct LineClientTests {
    /// The stand-in: what it received, and the sockets it holds.
    final class StandIn: Sendable {
        let requests = Locked<[LineRequest]>([])
        let sockets = Locked<[WebSocketConnection]>([])
        let server: HTTPServer
        var url: String { "ws://127.0.0.1:\(server.localPort)/line" }

        init(group: EventLoopGroup) throws {
            var router = HTTPRouter()
            let requests = self.requests, sockets = self.sockets
            router.get("/line", WebSocketUpgrade.handler { socket, _ in
                sockets.update { $0.append(socket) }
                socket.onMessage = { socket, message in
                    guard case .text(let text) = message, let request = try? LineRequest.parse(text).get() else { return }
                    requests.update { $0.append(request) }
                    if request.op != .heartbeat {
                        socket.send(text: LineEvent(.reply, id: request.id, op: request.op.rawValue, code: .ok, message: "ok").jsonText)
                    }
                }
            })
            server = try HTTPServer(host: "127.0.0.1", port: 0, group: group, router: router)
        }

        /// Sends `event` to every connected client, on its loop.
        func push(_ event: LineEvent) {
            for socket in sockets.value { _ = socket.loop.execute { socket.send(text: event.jsonText) } }
        }
    }

    @Test("requests made before the socket opens go out once it does; ids are fresh; each reply reaches its own callback and onEvent")
    func repliesAndEvents() throws {
        let group = try EventLoopGroup(count: 2, name: "line-client")
        defer { group.shutdown() }
        let standIn = try StandIn(group: group)
        let client = LineClient(url: standIn.url, loop: group.loops[1])
        let events = Locked<[LineEvent]>([])
        let replies = Locked<[Int: LineEvent]>([:])
        client.onEvent = { event in events.update { $0.append(event) } }
        let join = client.join(liveId: "room", userId: "u1", reply: { event in replies.update { $0[1] = event } })
        let connected = Locked<Result<Void, WebSocketError>?>(nil)
        client.connect { result in connected.update { $0 = result } }
        let apply = client.apply(reply: { event in replies.update { $0[2] = event } })
        #expect(join != apply)
        #expect(eventually { replies.value.count == 2 })
        #expect(replies.value[1]?.id == join)
        #expect(replies.value[1]?.op == "join")
        #expect(replies.value[2]?.id == apply)
        #expect(replies.value[2]?.liveCode == .ok)
        #expect(standIn.requests.value.map(\.op) == [.join, .apply])
        #expect(standIn.requests.value.first?.liveId == "room")
        standIn.push(LineEvent(.memberCount, total: 4))
        #expect(eventually { events.value.contains(LineEvent(.memberCount, total: 4)) })
        #expect(events.value.filter { $0.event == .reply }.count == 2)
        if case .failure(let error) = try #require(connected.value) { Issue.record("connect failed: \(error)") }
        client.disconnect()
    }

    @Test("heartbeats go out at the interval while the connection is open")
    func heartbeats() throws {
        let group = try EventLoopGroup(count: 2, name: "line-heartbeat")
        defer { group.shutdown() }
        let standIn = try StandIn(group: group)
        let client = LineClient(url: standIn.url, loop: group.loops[1], heartbeatInterval: .milliseconds(50))
        client.connect()
        #expect(eventually { standIn.requests.value.filter { $0.op == .heartbeat }.count >= 3 })
        client.disconnect()
    }

    @Test("the server closing is reported on onClose; a request after that is answered at once with 101")
    func closedConnection() throws {
        let group = try EventLoopGroup(count: 2, name: "line-closed")
        defer { group.shutdown() }
        let standIn = try StandIn(group: group)
        let client = LineClient(url: standIn.url, loop: group.loops[1])
        let closed = Locked<UInt16?>(nil)
        let events = Locked<[LineEvent]>([])
        client.onClose = { code, _ in closed.update { $0 = code } }
        client.onEvent = { event in events.update { $0.append(event) } }
        client.connect()
        #expect(eventually { standIn.sockets.value.count == 1 })
        for socket in standIn.sockets.value { _ = socket.loop.execute { socket.close(code: 4000, reason: "bye") } }
        #expect(eventually { closed.value == 4000 })
        let reply = Locked<LineEvent?>(nil)
        let id = client.message(userName: "u", content: "hello", reply: { event in reply.update { $0 = event } })
        #expect(eventually { reply.value != nil })
        #expect(reply.value?.id == id)
        #expect(reply.value?.liveCode == .networkDisconnected)
        #expect(events.value.last == reply.value)
        #expect(standIn.requests.value.allSatisfy { $0.op != .message })
    }
}
