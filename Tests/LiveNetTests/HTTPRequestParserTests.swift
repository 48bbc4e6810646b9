import Foundation
import Testing
@testable import LiveNet

@Suite("HTTPRequestParser")
struct HTTPRequestParserTests {
    static let post = Array("""
        POST /api/live/room%201/members?role=guest&name=a+b%21&flag HTTP/1.1\r
        Host: 127.0.0.1:8080\r
        Content-Type: application/json\r
        X-Empty:\r
        Content-Length: 14\r
        \r
        {"apply":true}
        """.utf8)

    static func parseAll(_ chunks: [ArraySlice<UInt8>]) throws -> [HTTPRequest] {
        var parser = HTTPRequestParser()
        var requests: [HTTPRequest] = []
        for chunk in chunks {
            parser.append(contentsOf: chunk)
            while case .request(let request) = try parser.next() { requests.append(request) }
        }
        return requests
    }

    @Test("a request with headers, query and body parses to its parts")
    func parsesParts() throws {
        let requests = try Self.parseAll([Self.post[...]])
        let request = try #require(requests.first)
        #expect(requests.count == 1)
        #expect(request.method == "POST")
        #expect(request.path == "/api/live/room 1/members")
        #expect(request.queryItems == [
            HTTPQueryItem(name: "role", value: "guest"),
            HTTPQueryItem(name: "name", value: "a b!"),
            HTTPQueryItem(name: "flag", value: ""),
        ])
        #expect(request.query("role") == "guest")
        #expect(request.headers["content-type"] == "application/json")
        #expect(request.headers["X-Empty"] == "")
        #expect(request.bodyText == #"{"apply":true}"#)
        #expect(request.minorVersion == 1)
        #expect(request.keepAlive)
    }

    @Test("fed split at every offset (and byte by byte) it gives the same request")
    func splitAtEveryOffset() throws {
        let whole = try Self.parseAll([Self.post[...]])
        for offset in 0...Self.post.count {
            let split = try Self.parseAll([Self.post[..<offset], Self.post[offset...]])
            #expect(split == whole, "split at \(offset)")
        }
        let byteByByte = try Self.parseAll(Self.post.indices.map { Self.post[$0...$0] })
        #expect(byteByByte == whole)
    }

    @Test("one byte short is need-more-data; the last byte completes the request")
    func oneByteShort() throws {
        var parser = HTTPRequestParser()
        parser.append(contentsOf: Self.post.dropLast())
        #expect(try parser.next() == .needMoreData)
        parser.append(contentsOf: Self.post.suffix(1))
        guard case .request(let request) = try parser.next() else {
            Issue.record("no request after the last byte")
            return
        }
        #expect(request.body.count == 14)
        #expect(try parser.next() == .needMoreData)
    }

    @Test("pipelined requests come out one by one, in order; leading blank lines are skipped")
    func pipelined() throws {
        let bytes = Array("GET /a HTTP/1.1\r\nHost: x\r\n\r\n\r\nGET /b?x=1 HTTP/1.1\nHost: x\nConnection: close\n\n".utf8)
        let requests = try Self.parseAll([bytes[...]])
        #expect(requests.map(\.path) == ["/a", "/b"])
        #expect(requests.map(\.keepAlive) == [true, false])
    }

    @Test("keep-alive follows the version and the Connection header")
    func keepAlive() throws {
        func request(_ text: String) throws -> HTTPRequest {
            try #require(Self.parseAll([Array(text.utf8)[...]]).first)
        }
        #expect(try request("GET / HTTP/1.1\r\nHost: x\r\n\r\n").keepAlive)
        #expect(try !request("GET / HTTP/1.1\r\nHost: x\r\nConnection: Close\r\n\r\n").keepAlive)
        #expect(try !request("GET / HTTP/1.0\r\n\r\n").keepAlive)
        #expect(try request("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n").keepAlive)
    }

    @Test("bad requests are rejected with the status to answer", arguments: [
        ("GARBAGE\r\n\r\n", 400),
        ("\u{01}\u{02}\u{03}\r\n\r\n", 400),
        ("GET  / HTTP/1.1\r\nHost: x\r\n\r\n", 400),
        ("GET / HTTP/1.1 extra\r\nHost: x\r\n\r\n", 400),
        ("GET noslash HTTP/1.1\r\nHost: x\r\n\r\n", 400),
        ("G(T / HTTP/1.1\r\nHost: x\r\n\r\n", 400),
        ("GET / HTTX/1.1\r\nHost: x\r\n\r\n", 400),
        ("GET / HTTP/2.0\r\nHost: x\r\n\r\n", 505),
        ("GET / HTTP/1.1\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\nHost x\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\nHost : x\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\nHost: x\r\n folded\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\nHost: x\u{7F}\r\n\r\n", 400),
        ("GET /%zz HTTP/1.1\r\nHost: x\r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n", 501),
        ("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2000000\r\n\r\n", 413),
    ])
    func rejects(text: String, status: Int) throws {
        var parser = HTTPRequestParser()
        parser.append(contentsOf: Array(text.utf8))
        let error = #expect(throws: HTTPRequestParser.Error.self) { try parser.next() }
        #expect(error?.status.code == status, "\(error?.reason ?? "no error")")
        // The parser stays failed: the connection is answered and closed.
        #expect(throws: HTTPRequestParser.Error.self) { try parser.next() }
    }

    @Test("an oversized head is 431, an endless request line 414, before the end arrives")
    func sizeLimits() throws {
        let limits = HTTPRequestParser.Limits(maxHeadBytes: 1024, maxHeaderCount: 10, maxBodyBytes: 100)

        var bigHeaders = HTTPRequestParser(limits: limits)
        bigHeaders.append(contentsOf: Array("GET / HTTP/1.1\r\nHost: x\r\nX-Big: \(String(repeating: "a", count: 2000))".utf8))
        #expect(throws: HTTPRequestParser.Error(.headerFieldsTooLarge, "request head over 1024 bytes")) { try bigHeaders.next() }

        var manyHeaders = HTTPRequestParser(limits: limits)
        let fields = (0..<11).map { "X-\($0): 1\r\n" }.joined()
        manyHeaders.append(contentsOf: Array("GET / HTTP/1.1\r\nHost: x\r\n\(fields)\r\n".utf8))
        #expect(throws: HTTPRequestParser.Error.self) { try manyHeaders.next() }

        var longLine = HTTPRequestParser(limits: limits)
        longLine.append(contentsOf: Array("GET /\(String(repeating: "a", count: 2000))".utf8))
        let error = #expect(throws: HTTPRequestParser.Error.self) { try longLine.next() }
        #expect(error?.status == .uriTooLong)

        var bigBody = HTTPRequestParser(limits: limits)
        bigBody.append(contentsOf: Array("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 101\r\n\r\n".utf8))
        let bodyError = #expect(throws: HTTPRequestParser.Error.self) { try bigBody.next() }
        #expect(bodyError?.status == .payloadTooLarge)
    }

    @Test("bytes after a request stay buffered for an upgraded protocol")
    func leftoverBytes() throws {
        var parser = HTTPRequestParser()
        parser.append(contentsOf: Array("GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: test\r\n\r\nhello".utf8))
        guard case .request(let request) = try parser.next() else {
            Issue.record("no request")
            return
        }
        #expect(request.path == "/ws")
        #expect(parser.takeBufferedBytes() == Array("hello".utf8))
        #expect(parser.bufferedByteCount == 0)
    }

    @Test("arbitrary bytes end in a request, need-more-data or a 4xx/5xx answer, never a crash")
    func noise() throws {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("GET /?=&%: \r\n\tHTP1.0a".utf8) + [0, 0x7F, 0xFF]
        var statuses = Set<Int>()
        for _ in 0..<500 {
            var parser = HTTPRequestParser(limits: .init(maxHeadBytes: 512))
            let bytes = (0..<Int.random(in: 0..<700, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! }
            parser.append(contentsOf: bytes)
            if case .failure(let error) = Result(catching: { () throws(HTTPRequestParser.Error) in try parser.next() }) {
                statuses.insert(error.status.code)
            }
        }
        #expect(statuses.isSubset(of: [400, 413, 414, 431, 501, 505]))
    }

    @Test("a body the policy refuses is answered at the head and none of it is kept, however much follows")
    func refusedBodyIsNotBuffered() throws {
        var parser = HTTPRequestParser { request, length in
            request.method == "POST" && length <= 16 ? nil : HTTPRequestParser.Error(.payloadTooLarge, "no body here")
        }
        parser.append(contentsOf: Array("PUT /x HTTP/1.1\r\nHost: t\r\nContent-Length: 1000000\r\n\r\n".utf8))
        parser.append(contentsOf: [UInt8](repeating: 0x61, count: 1000))
        #expect(throws: HTTPRequestParser.Error(.payloadTooLarge, "no body here")) { try parser.next() }
        #expect(parser.bufferedByteCount == 0)
        parser.append(contentsOf: [UInt8](repeating: 0x61, count: 100_000))
        #expect(parser.bufferedByteCount == 0)
        #expect(!parser.isInsideRequest)

        // Allowed: the body is read; no Content-Length: the policy is not asked.
        var allowed = HTTPRequestParser { _, _ in HTTPRequestParser.Error(.payloadTooLarge, "never") }
        allowed.append(contentsOf: Array("GET /x HTTP/1.1\r\nHost: t\r\n\r\n".utf8))
        guard case .request = try allowed.next() else {
            Issue.record("a request without a body was refused")
            return
        }
        var small = HTTPRequestParser { request, length in request.method == "POST" && length <= 16 ? nil : .init(.payloadTooLarge, "") }
        small.append(contentsOf: Array("POST /x HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\n\r\nabc".utf8))
        guard case .request(let request) = try small.next() else {
            Issue.record("an allowed body was refused")
            return
        }
        #expect(request.body == Array("abc".utf8))
    }

    @Test("isInsideRequest is true from a request's first byte until it is complete")
    func insideRequest() throws {
        var parser = HTTPRequestParser()
        #expect(!parser.isInsideRequest)
        parser.append(contentsOf: Array("GET / HTTP/1.1\r\nHo".utf8))
        #expect(try parser.next() == .needMoreData)
        #expect(parser.isInsideRequest)
        parser.append(contentsOf: Array("st: t\r\nContent-Length: 2\r\n\r\n".utf8))
        #expect(try parser.next() == .needMoreData)
        #expect(parser.isInsideRequest)
        parser.append(contentsOf: Array("ok".utf8))
        guard case .request = try parser.next() else {
            Issue.record("no request")
            return
        }
        #expect(!parser.isInsideRequest)
    }

    @Test("thousands of pipelined requests cost copying linear in their size, not quadratic")
    func pipelinedFlood() throws {
        let one = Array("GET / HTTP/1.1\r\nHost: t\r\n\r\n".utf8)
        let count = 40_000
        let all = Array([[UInt8]](repeating: one, count: count).joined())
        var parser = HTTPRequestParser()
        var parsed = 0
        // As a socket delivers them: 64 KiB reads, each parsed before the next arrives.
        for offset in stride(from: 0, to: all.count, by: 65536) {
            parser.append(contentsOf: all[offset..<min(offset + 65536, all.count)])
            while case .request = try parser.next() { parsed += 1 }
        }
        #expect(parsed == count)
        #expect(parser.bufferedByteCount == 0)
        // Moving the rest of the buffer forward after each request (the old way) moves
        // ~40 GB here; consuming by index moves at most what arrived.
        #expect(parser.bytesMoved <= all.count)

        var whole = HTTPRequestParser()
        whole.append(contentsOf: all)
        parsed = 0
        while case .request = try whole.next() { parsed += 1 }
        #expect(parsed == count)
        #expect(whole.bytesMoved == 0)
    }

    @Test("empty lines before a request count against the head limit, so line ends alone cannot hold a connection")
    func endlessEmptyLines() throws {
        var parser = HTTPRequestParser(limits: .init(maxHeadBytes: 64))
        for _ in 0..<32 {
            parser.append(contentsOf: Array("\r\n".utf8))
            #expect(try parser.next() == .needMoreData)
            #expect(parser.isInsideRequest)
        }
        parser.append(contentsOf: Array("\r\n".utf8))
        #expect(throws: HTTPRequestParser.Error(.badRequest, "over 64 bytes of empty lines before a request")) { try parser.next() }

        // A few are fine, and forgotten once the request is complete.
        var polite = HTTPRequestParser(limits: .init(maxHeadBytes: 64))
        polite.append(contentsOf: Array("\r\n\nGET / HTTP/1.1\r\nHost: t\r\n\r\n".utf8))
        guard case .request = try polite.next() else {
            Issue.record("no request after empty lines")
            return
        }
        #expect(!polite.isInsideRequest)
    }
}
