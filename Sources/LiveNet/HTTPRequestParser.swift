/// HTTP/1.1 request decoding, pure (bytes in → a request, "need more data", or an
/// error with the status to answer), in swift-nio's decoder style: feed whatever the
/// socket delivered with `append`, then call `next()` until it says `.needMoreData`.
/// Pipelined requests come out one by one. Request bodies need Content-Length; chunked
/// request bodies are answered 501 (nothing LiveLine serves takes one).
///
/// A body is buffered only when `bodyPolicy` lets the request have it: the server asks
/// its router, so a body sent to a route that takes none is refused (413, 404, 405) as
/// soon as the head is read, and no byte of it is kept. Once the parser has failed it
/// keeps nothing more, so a connection holds at most one head (`maxHeadBytes`) plus the
/// body its route allows, plus whatever arrived in the same read.
public struct HTTPRequestParser: Sendable {
    /// Decides whether a request may carry the `length` bytes of body its head
    /// announced (called only when `length` > 0): nil to read them, or the error to
    /// answer at once.
    public typealias BodyPolicy = @Sendable (_ request: HTTPRequest, _ length: Int) -> Error?

    /// Size limits, each answered with its own status.
    public struct Limits: Sendable {
        /// Request line plus header fields (431 beyond, 414 when the request line alone is).
        public var maxHeadBytes: Int
        /// Header fields (431 beyond).
        public var maxHeaderCount: Int
        /// Content-Length (413 beyond).
        public var maxBodyBytes: Int

        public init(maxHeadBytes: Int = 8 * 1024, maxHeaderCount: Int = 100, maxBodyBytes: Int = 1 << 20) {
            self.maxHeadBytes = maxHeadBytes
            self.maxHeaderCount = maxHeaderCount
            self.maxBodyBytes = maxBodyBytes
        }
    }

    /// Why a request was rejected, with the status to answer before closing.
    public struct Error: Swift.Error, Equatable, Sendable, CustomStringConvertible {
        public let status: HTTPStatus
        public let reason: String
        /// Header fields the answer needs ("Allow" with a 405).
        public let headers: HTTPHeaders

        public init(_ status: HTTPStatus, _ reason: String, headers: HTTPHeaders = HTTPHeaders()) {
            self.status = status
            self.reason = reason
            self.headers = headers
        }

        public var description: String { "HTTP \(status): \(reason)" }
    }

    public enum Decoded: Equatable, Sendable {
        case request(HTTPRequest)
        case needMoreData
    }

    public let limits: Limits
    private let bodyPolicy: BodyPolicy?
    private var buffer: [UInt8] = []
    /// Where the unparsed bytes start: requests are consumed by moving this forward and
    /// the buffer is compacted only once the consumed part is large, so a segment of
    /// thousands of pipelined requests costs linear, not quadratic, copying.
    private var consumed = 0
    /// Where the search for the blank line resumes (an index into `buffer`), so bytes
    /// arriving one at a time do not rescan the whole head.
    private var scanned = 0
    /// Empty lines skipped before the request line (RFC 9112 §2.2), counted against
    /// `maxHeadBytes` so a client cannot hold a connection sending only line ends.
    private var skippedEmptyBytes = 0
    /// Bytes moved forward by compaction so far (tests check it stays linear).
    private(set) var bytesMoved = 0
    /// A parsed head waiting for `bodyLength` bytes of body.
    private var pending: (request: HTTPRequest, bodyLength: Int)?
    private var failure: Error?

    /// `bodyPolicy` nil: any body up to `limits.maxBodyBytes` is read.
    public init(limits: Limits = Limits(), bodyPolicy: BodyPolicy? = nil) {
        self.limits = limits
        self.bodyPolicy = bodyPolicy
    }

    /// Bytes received and not yet returned as part of a request.
    public var bufferedByteCount: Int { buffer.count - consumed }

    /// True while part of a request (a head, or a body, or empty lines before it) has
    /// arrived and the rest has not.
    public var isInsideRequest: Bool {
        failure == nil && (pending != nil || bufferedByteCount > 0 || skippedEmptyBytes > 0)
    }

    /// Keeps `bytes` for decoding; after a failure they are dropped (the connection is
    /// being answered and closed).
    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard failure == nil else { return }
        compact()
        buffer.append(contentsOf: bytes)
    }

    public mutating func append<Bytes: Sequence>(contentsOf bytes: Bytes) where Bytes.Element == UInt8 {
        guard failure == nil else { return }
        compact()
        buffer.append(contentsOf: bytes)
    }

    /// Hands over what is buffered past the last request (the first bytes of another
    /// protocol after an upgrade) and empties the buffer.
    public mutating func takeBufferedBytes() -> [UInt8] {
        defer { reset() }
        return Array(buffer[consumed...])
    }

    /// The next complete request, or `.needMoreData`. Once it has thrown, it throws the
    /// same error again: the connection is to be answered and closed.
    public mutating func next() throws(Error) -> Decoded {
        if let failure { throw failure }
        do {
            return try decode()
        } catch {
            failure = error
            reset()
            throw error
        }
    }

    private mutating func reset() {
        buffer = []
        consumed = 0
        scanned = 0
        skippedEmptyBytes = 0
        pending = nil
    }

    private mutating func compact() {
        if consumed == buffer.count {
            buffer.removeAll(keepingCapacity: true)
        } else if consumed >= 4096, consumed * 2 >= buffer.count {
            bytesMoved += buffer.count - consumed
            buffer.removeFirst(consumed)
        } else {
            return
        }
        scanned -= consumed
        consumed = 0
    }

    private mutating func decode() throws(Error) -> Decoded {
        if pending == nil {
            try skipLeadingEmptyLines()
            guard let (headEnd, bodyStart) = findEndOfHead() else {
                if bufferedByteCount + skippedEmptyBytes > limits.maxHeadBytes {
                    throw buffer[consumed...].contains(lf)
                        ? Error(.headerFieldsTooLarge, "request head over \(limits.maxHeadBytes) bytes")
                        : Error(.uriTooLong, "request line over \(limits.maxHeadBytes) bytes")
                }
                return .needMoreData
            }
            if headEnd - consumed + skippedEmptyBytes > limits.maxHeadBytes {
                throw Error(.headerFieldsTooLarge, "request head over \(limits.maxHeadBytes) bytes")
            }
            let head = try parseHead(buffer[consumed..<headEnd])
            if head.1 > 0, let refusal = bodyPolicy?(head.0, head.1) { throw refusal }
            consumed = bodyStart
            scanned = bodyStart
            pending = head
        }
        guard let (request, bodyLength) = pending, bufferedByteCount >= bodyLength else { return .needMoreData }
        var complete = request
        complete.body = Array(buffer[consumed..<(consumed + bodyLength)])
        consumed += bodyLength
        scanned = consumed
        skippedEmptyBytes = 0
        pending = nil
        return .request(complete)
    }

    /// RFC 9112 §2.2: a server should ignore empty lines before a request line (some
    /// clients send an extra CRLF after a body); they count against `maxHeadBytes`.
    private mutating func skipLeadingEmptyLines() throws(Error) {
        var start = consumed
        while start < buffer.count {
            if buffer[start] == lf {
                start += 1
            } else if buffer[start] == cr, start + 1 < buffer.count, buffer[start + 1] == lf {
                start += 2
            } else {
                break
            }
        }
        guard start > consumed else { return }
        skippedEmptyBytes += start - consumed
        consumed = start
        scanned = max(scanned, consumed)
        if skippedEmptyBytes > limits.maxHeadBytes {
            throw Error(.badRequest, "over \(limits.maxHeadBytes) bytes of empty lines before a request")
        }
    }

    /// Finds the blank line ending the head: returns where the head's last line ends
    /// and where the body starts (indices into `buffer`). Accepts CRLF and bare LF
    /// line ends.
    private mutating func findEndOfHead() -> (headEnd: Int, bodyStart: Int)? {
        var index = scanned
        while index < buffer.count {
            if buffer[index] == lf {
                if index + 1 < buffer.count, buffer[index + 1] == lf { return (index + 1, index + 2) }
                if index + 2 < buffer.count, buffer[index + 1] == cr, buffer[index + 2] == lf { return (index + 1, index + 3) }
                if index + 2 >= buffer.count { break }  // the blank line may still be arriving
            }
            index += 1
        }
        scanned = index
        return nil
    }

    private func parseHead(_ head: ArraySlice<UInt8>) throws(Error) -> (HTTPRequest, Int) {
        var lines: [ArraySlice<UInt8>] = []
        var lineStart = head.startIndex
        for index in head.indices where head[index] == lf {
            var line = head[lineStart..<index]
            if line.last == cr { line = line.dropLast() }
            lines.append(line)
            lineStart = index + 1
        }
        guard let requestLine = lines.first else { throw Error(.badRequest, "empty request") }
        let (method, target, minor) = try parseRequestLine(requestLine)

        if lines.count - 1 > limits.maxHeaderCount {
            throw Error(.headerFieldsTooLarge, "more than \(limits.maxHeaderCount) header fields")
        }
        var headers = HTTPHeaders()
        for line in lines.dropFirst() {
            let (name, value) = try parseField(line)
            headers.add(name, value)
        }

        if headers.contains("Transfer-Encoding") {
            throw Error(.notImplemented, "Transfer-Encoding is not supported; send Content-Length")
        }
        if minor >= 1, headers.values("Host").count != 1 {
            throw Error(.badRequest, "an HTTP/1.1 request needs exactly one Host header")
        }
        let bodyLength = try contentLength(headers)
        guard let request = HTTPRequest(method: method, target: target, minorVersion: minor, headers: headers) else {
            throw Error(.badRequest, "malformed percent-encoding in the request target")
        }
        return (request, bodyLength)
    }

    private func parseRequestLine(_ line: ArraySlice<UInt8>) throws(Error) -> (String, String, Int) {
        let parts = line.split(separator: space, omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw Error(.badRequest, "malformed request line") }
        let method = parts[0]
        let target = parts[1]
        let version = parts[2]
        guard !method.isEmpty, method.allSatisfy(isTokenByte) else {
            throw Error(.badRequest, "malformed method")
        }
        guard let first = target.first, first == slash || first == asterisk || target.starts(with: "http".utf8),
              target.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw Error(.badRequest, "malformed request target")
        }
        let versionText = String(decoding: version, as: UTF8.self)
        let minor: Int
        switch versionText {
        case "HTTP/1.1": minor = 1
        case "HTTP/1.0": minor = 0
        default:
            if versionText.count == 8, versionText.hasPrefix("HTTP/"),
               versionText.dropFirst(5).enumerated().allSatisfy({ $0.offset == 1 ? $0.element == "." : $0.element.isASCII && $0.element.isNumber }) {
                throw Error(.httpVersionNotSupported, "\(versionText) is not supported")
            }
            throw Error(.badRequest, "malformed HTTP version")
        }
        return (String(decoding: method, as: UTF8.self), String(decoding: target, as: UTF8.self), minor)
    }

    private func parseField(_ line: ArraySlice<UInt8>) throws(Error) -> (String, String) {
        if let first = line.first, first == space || first == tab {
            throw Error(.badRequest, "obsolete header line folding")
        }
        guard let colon = line.firstIndex(of: colon) else { throw Error(.badRequest, "header line without a colon") }
        let name = line[line.startIndex..<colon]
        guard !name.isEmpty, name.allSatisfy(isTokenByte) else { throw Error(.badRequest, "malformed header name") }
        var value = line[(colon + 1)...]
        while let first = value.first, first == space || first == tab { value = value.dropFirst() }
        while let last = value.last, last == space || last == tab { value = value.dropLast() }
        guard value.allSatisfy({ $0 == tab || ($0 >= 0x20 && $0 != 0x7F) }) else {
            throw Error(.badRequest, "control character in header \(String(decoding: name, as: UTF8.self))")
        }
        return (String(decoding: name, as: UTF8.self), String(decoding: value, as: UTF8.self))
    }

    private func contentLength(_ headers: HTTPHeaders) throws(Error) -> Int {
        let values = headers.tokens("Content-Length")
        guard let first = values.first else { return 0 }
        // Repeated lengths must agree, or two parsers could split the stream differently.
        guard values.allSatisfy({ $0 == first }), first.count <= 18, first.allSatisfy({ $0.isASCII && $0.isNumber }),
              let length = Int(first) else {
            throw Error(.badRequest, "malformed Content-Length")
        }
        if length > limits.maxBodyBytes {
            throw Error(.payloadTooLarge, "body of \(length) bytes over \(limits.maxBodyBytes)")
        }
        return length
    }
}

private let cr: UInt8 = 0x0D
private let lf: UInt8 = 0x0A
private let space: UInt8 = 0x20
private let tab: UInt8 = 0x09
private let colon: UInt8 = 0x3A
private let slash: UInt8 = 0x2F
private let asterisk: UInt8 = 0x2A

/// tchar (RFC 9110 §5.6.2): letters, digits and !#$%&'*+-.^_`|~
private func isTokenByte(_ byte: UInt8) -> Bool {
    switch byte {
    case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: true
    case 0x21, 0x23, 0x24, 0x25, 0x26, 0x27, 0x2A, 0x2B, 0x2D, 0x2E, 0x5E, 0x5F, 0x60, 0x7C, 0x7E: true
    default: false
    }
}
