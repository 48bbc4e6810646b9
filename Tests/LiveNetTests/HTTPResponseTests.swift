import Testing
@testable import LiveNet

@Suite("HTTPResponse")
struct HTTPResponseTests {
    @Test("a text response encodes status, headers, length, connection and body")
    func encodesText() {
        let bytes = HTTPResponse.text("ok\n").encoded(keepAlive: true)
        #expect(String(decoding: bytes, as: UTF8.self) ==
            "HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 3\r\nConnection: keep-alive\r\n\r\nok\n")
    }

    @Test("HEAD gets the length without the body; 204 gets neither")
    func headAndNoContent() {
        let head = String(decoding: HTTPResponse.text("hello").encoded(keepAlive: false, headOnly: true), as: UTF8.self)
        #expect(head.hasSuffix("Content-Length: 5\r\nConnection: close\r\n\r\n"))
        let empty = String(decoding: HTTPResponse(status: .noContent).encoded(keepAlive: true), as: UTF8.self)
        #expect(empty == "HTTP/1.1 204 No Content\r\nConnection: keep-alive\r\n\r\n")
    }

    @Test("JSON responses are encoded with sorted keys")
    func json() {
        struct Room: Encodable {
            let name: String
            let members: Int
        }
        let response = HTTPResponse.json(Room(name: "r/1", members: 2))
        #expect(response.headers["Content-Type"] == "application/json")
        #expect(String(decoding: response.body, as: UTF8.self) == #"{"members":2,"name":"r/1"}"#)
    }
}
