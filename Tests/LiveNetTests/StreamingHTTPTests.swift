import Foundation
import LiveTestSupport
import Testing
@testable import LiveNet

/// What HTTP-FLV and the WebSocket FLV feed need from LiveNet: `{name}.ext` route
/// segments, responses whose body streams after the head, all-or-nothing writes of
/// several ranges, watermarks changed on an open connection, and frame heads made once.
@Suite("LiveNet for streamed bodies: suffixed route segments, streamed heads, multi-range writes, watermarks, frame heads")
struct StreamingHTTPTests {
    @Test("'{stream}.flv' captures the segment without the suffix and matches nothing else")
    func suffixedSegment() throws {
        var router = HTTPRouter()
        router.get("/api/streams") { _ in .response(.text("api")) }
        router.get("/{app}/{stream}.flv") { _ in .response(.text("flv")) }
        guard case .found(_, let parameters) = router.match(method: "GET", path: "/live/cam.flv") else {
            Issue.record("/live/cam.flv did not match")
            return
        }
        #expect(parameters == ["app": "live", "stream": "cam"])
        guard case .found(_, let dotted) = router.match(method: "HEAD", path: "/live/a.b.flv") else {
            Issue.record("HEAD /live/a.b.flv did not match")
            return
        }
        #expect(dotted["stream"] == "a.b")
        for path in ["/live/cam", "/live/.flv", "/live/cam.flvx", "/live/cam.flv/x", "/cam.flv"] {
            guard case .notFound = router.match(method: "GET", path: path) else {
                Issue.record("\(path) matched")
                continue
            }
        }
        guard case .found(let handler, _) = router.match(method: "GET", path: "/api/streams"),
              case .response(let response) = handler(try #require(HTTPRequest(method: "GET", target: "/api/streams")))
        else {
            Issue.record("/api/streams did not match its own route")
            return
        }
        #expect(String(decoding: response.body, as: UTF8.self) == "api")
    }

    @Test("a response whose body streams has no Content-Length; its Transfer-Encoding stays")
    func streamedHead() {
        var response = HTTPResponse(status: .ok, streamsBody: true)
        response.headers.set("Transfer-Encoding", "chunked")
        response.headers.set("Connection", "close")
        let head = String(decoding: response.encoded(keepAlive: true), as: UTF8.self)
        #expect(head == "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n")
        #expect(String(decoding: HTTPResponse(status: .ok).encoded(keepAlive: false), as: UTF8.self).contains("Content-Length: 0"))
    }

    @Test("a frame head made alone is the head encoded() writes, for every length form")
    func frameHeads() {
        for length in [0, 1, 125, 126, 65535, 65536, 100_000] {
            let payload = [UInt8](repeating: 7, count: length)
            var head: [UInt8] = []
            WebSocketFrame.appendHead(opcode: .binary, payloadLength: length, to: &head)
            #expect(head + payload == WebSocketFrame(opcode: .binary, payload: payload).encoded())
            #expect(head.count <= WebSocketFrame.maxUnmaskedHeadSize)
        }
    }

    @Test("several ranges are queued together or not at all; watermarks changed on an open connection take effect at once")
    func multiRangeWritesAndWatermarks() throws {
        let group = try EventLoopGroup(count: 1, name: "ranges")
        defer { group.shutdown() }
        let buffer = SharedBytes(count: 1000) { bytes in
            for index in 0..<bytes.count { bytes[index] = UInt8(index % 251) }
        }
        let seen = Locked<[String: Int]>([:])
        let listener = try TCPListener.bind(host: "127.0.0.1", port: 0, group: group) { connection in
            connection.handler = EchoHandler()
            connection.setWatermarks(high: 1000, low: 100)
            let first = connection.write(buffer, ranges: [0..<10, 20..<30])
            let second = connection.write(buffer, ranges: [0..<600, 400..<1000])
            let writableAfter = connection.isWritable
            let queued = connection.queuedBytes
            let refused = connection.write(buffer, ranges: [0..<1, 1..<2])
            let queuedAfterRefusal = connection.queuedBytes
            connection.setWatermarks(high: 4096, low: 2048)
            seen.update {
                $0 = ["first": first ? 1 : 0, "second": second ? 1 : 0, "writableAfter": writableAfter ? 1 : 0,
                      "queued": queued, "refused": refused ? 1 : 0, "queuedAfterRefusal": queuedAfterRefusal,
                      "writableAgain": connection.isWritable ? 1 : 0]
            }
        }
        let peer = try RawSocketClient(port: listener.localPort)
        let received = try peer.receive(exactly: 20 + 1200)
        let bytes = buffer.bytes
        #expect(received == Array(bytes[0..<10] + bytes[20..<30] + bytes[0..<600] + bytes[400..<1000]))
        #expect(seen.value == ["first": 1, "second": 1, "writableAfter": 0, "queued": 1220, "refused": 0,
                               "queuedAfterRefusal": 1220, "writableAgain": 1])
    }
}
