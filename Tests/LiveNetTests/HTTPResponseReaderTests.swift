import Testing
@testable import LiveNet

@Suite("HTTP response reader")
struct HTTPResponseReaderTests {
    /// Every event of `pieces`, then `finish()` when `close` (the connection closed).
    static func events(_ pieces: [ArraySlice<UInt8>], close: Bool = false, maxHeadBytes: Int = 16 * 1024) throws
        -> (head: HTTPResponseReader.Head?, body: [UInt8], ended: Bool)
    {
        var reader = HTTPResponseReader(maxHeadBytes: maxHeadBytes)
        var head: HTTPResponseReader.Head?
        var body: [UInt8] = []
        var ended = false
        func drain() throws {
            while true {
                switch try reader.next() {
                case .head(let h): head = h
                case .body(let bytes): body += bytes
                case .end: ended = true
                case .needMore: return
                }
            }
        }
        for piece in pieces {
            reader.append(contentsOf: piece)
            try drain()
        }
        if close, try reader.finish() == .end { ended = true }
        return (head, body, ended)
    }

    static let chunked = Array(("HTTP/1.1 200 OK\r\nContent-Type: video/x-flv\r\nTransfer-Encoding: chunked\r\n\r\n"
        + "5\r\nhello\r\n7;ext=1\r\n, world\r\n0\r\nX-Trailer: 1\r\n\r\n").utf8)

    @Test("chunked: the head, the chunks' bytes without their framing, the end at the last chunk")
    func chunked() throws {
        let result = try Self.events([Self.chunked[...]])
        #expect(result.head?.status.code == 200)
        #expect(result.head?.headers["content-type"] == "video/x-flv")
        #expect(result.body == Array("hello, world".utf8))
        #expect(result.ended)
    }

    @Test("split at every offset, the same body and end")
    func splitAnywhere() throws {
        let bytes = Self.chunked[...]
        for split in 0...bytes.count {
            let result = try Self.events([bytes.prefix(split), bytes.dropFirst(split)])
            #expect(result.body == Array("hello, world".utf8) && result.ended, "split at \(split)")
        }
        let single = try Self.events(bytes.indices.map { bytes[$0...$0] })
        #expect(single.body == Array("hello, world".utf8) && single.ended)
    }

    @Test("close-delimited (ffmpeg's -listen server, HTTP/1.0): the body runs until the close")
    func closeDelimited() throws {
        let bytes = Array("HTTP/1.0 200 OK\r\nContent-Type: application/octet-stream\r\n\r\nFLV...".utf8)
        let open = try Self.events([bytes[...]])
        #expect(open.body == Array("FLV...".utf8) && !open.ended)
        let closed = try Self.events([bytes[...]], close: true)
        #expect(closed.ended)
    }

    @Test("Content-Length: the body ends at its length; bytes past it are not body")
    func sized() throws {
        let result = try Self.events([Array("HTTP/1.1 404 Not Found\r\nContent-Length: 3\r\n\r\nabcEXTRA".utf8)[...]])
        #expect(result.head?.status == HTTPStatus(code: 404, reason: "Not Found"))
        #expect(result.body == Array("abc".utf8) && result.ended)
    }

    @Test("a 100 Continue head is skipped; 204 has no body")
    func interim() throws {
        let result = try Self.events([Array("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n".utf8)[...]])
        #expect(result.head?.status.code == 204 && result.ended && result.body.isEmpty)
    }

    @Test("cut short: a chunked or sized body, or a head, ended by the close is an error")
    func cutShort() {
        let cut = Self.chunked.prefix(Self.chunked.count - 8)
        #expect(throws: HTTPResponseReader.Error("the server closed the connection before the end of the body")) {
            try Self.events([cut], close: true)
        }
        #expect(throws: HTTPResponseReader.Error("the server closed the connection without answering")) {
            try Self.events([], close: true)
        }
    }

    @Test("hostile answers are refused within their budgets", arguments: [
        ("HTTP/1.1 200 OK\r\n" + String(repeating: "X-Pad: 0123456789\r\n", count: 100), "longer than 1024 bytes"),
        ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + String(repeating: "1", count: 1100), "chunk-size line is longer"),
        ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "malformed chunk size"),
        // Found by the flv fuzz target: a signed size read as a negative count.
        ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n-64\r\nabc", "malformed chunk size"),
        ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n+4\r\nabcd\r\n", "malformed chunk size"),
        ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nfffffffffffffffff\r\n", "malformed chunk size"),
        ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n", "longer than its size"),
        ("HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", "bad Content-Length"),
        ("HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", "bad Content-Length"),
        ("RTSP/1.0 200 OK\r\n\r\n", "malformed status line"),
        ("HTTP/1.1 2000 OK\r\n\r\n", "malformed status line"),
        ("HTTP/1.1 200 OK\r\nno colon\r\n\r\n", "malformed header line"),
        ("HTTP/1.1 101 Switching Protocols\r\n\r\n", "switched protocols"),
    ])
    func hostile(text: String, message: String) {
        #expect {
            _ = try Self.events([Array(text.utf8)[...]], maxHeadBytes: 1024)
        } throws: { error in
            "\(error)".contains(message)
        }
    }

    @Test("a live body's bytes are handed out as they come: nothing is collected")
    func streaming() throws {
        var reader = HTTPResponseReader()
        reader.append(contentsOf: Array("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n100000\r\n".utf8))
        #expect(try reader.next() != .needMore)
        for _ in 0..<16 {
            reader.append(contentsOf: [UInt8](repeating: 7, count: 65536))
            #expect(try reader.next() == .body([UInt8](repeating: 7, count: 65536)))
            #expect(reader.bufferedByteCount == 0)
        }
        #expect(try reader.next() == .needMore)
    }
}
