/// Reads one HTTP/1.1 response (RFC 9112) as it arrives, for a client that streams the
/// body: the head, then the body in pieces as they come, framed by chunked transfer
/// coding, Content-Length, or the connection's close. Pure and bounded: the head is at
/// most `maxHeadBytes`, a chunk-size line at most 1 KiB, and body bytes are handed out
/// as they come, never collected, so a live stream's endless body costs no memory here.
///
///     var reader = HTTPResponseReader()
///     reader.append(contentsOf: bytes)
///     loop: while true {
///         switch try reader.next() {
///         case .head(let head): …
///         case .body(let bytes): …
///         case .end: …            // the whole body has come
///         case .needMore: break loop
///         }
///     }
///     try reader.finish()         // the connection closed: a close-delimited body ends
///
/// Interim 1xx heads (100 Continue) are skipped. After an error the reader is spent.
public struct HTTPResponseReader: Sendable {
    public struct Error: Swift.Error, Equatable, Sendable, CustomStringConvertible {
        public var reason: String
        public init(_ reason: String) { self.reason = reason }
        public var description: String { reason }
    }

    /// The status line and header fields.
    public struct Head: Equatable, Sendable {
        public var status: HTTPStatus
        public var headers: HTTPHeaders
    }

    public enum Event: Equatable, Sendable {
        case head(Head)
        /// Body bytes (chunked coding removed).
        case body([UInt8])
        /// The body is complete (the last chunk, the Content-Length reached, or `finish()`
        /// of a close-delimited body).
        case end
        case needMore
    }

    /// How the body is delimited (RFC 9112 §6.3).
    public enum Framing: Equatable, Sendable {
        case chunked
        case length(Int)
        case close
    }

    public let maxHeadBytes: Int
    static let maxChunkLineBytes = 1024

    private enum State: Equatable {
        case head
        case length(remaining: Int)
        case chunkSize
        case chunkData(remaining: Int)
        case chunkDataEnd
        case trailers
        case close
        /// The body is complete; `.end` is yet to be returned.
        case ending
        case done
    }

    private var state = State.head
    private var buffer: [UInt8] = []
    private var position = 0
    private var failure: Error?
    /// The head's framing, once read.
    public private(set) var framing: Framing?
    /// True when the request was HEAD: the answer has no body whatever its headers say.
    private let headRequest: Bool

    public init(maxHeadBytes: Int = 16 * 1024, headRequest: Bool = false) {
        self.maxHeadBytes = maxHeadBytes
        self.headRequest = headRequest
    }

    /// Bytes held and not yet returned.
    public var bufferedByteCount: Int { buffer.count - position }

    /// True once the body has ended.
    public var isComplete: Bool { state == .done || state == .ending }

    public mutating func append<Bytes: Sequence>(contentsOf bytes: Bytes) where Bytes.Element == UInt8 {
        guard failure == nil else { return }
        if position > 0 {
            buffer.removeFirst(position)
            position = 0
        }
        buffer.append(contentsOf: bytes)
    }

    public mutating func next() throws(Error) -> Event {
        if let failure { throw failure }
        do throws(Error) {
            return try decode()
        } catch {
            fail(error)
            throw error
        }
    }

    /// The connection closed: the end of a close-delimited body (`.end`); an error when
    /// the head or a chunked or sized body was cut short.
    public mutating func finish() throws(Error) -> Event {
        if let failure { throw failure }
        switch state {
        case .close, .ending, .done:
            state = .done
            return .end
        case .head:
            let error = Error(bufferedByteCount == 0 ? "the server closed the connection without answering"
                                                     : "the server closed the connection in the middle of the response head")
            fail(error)
            throw error
        default:
            let error = Error("the server closed the connection before the end of the body")
            fail(error)
            throw error
        }
    }

    private mutating func fail(_ error: Error) {
        failure = error
        buffer = []
        position = 0
    }

    private mutating func decode() throws(Error) -> Event {
        switch state {
        case .head:
            return try decodeHead()
        case .length(let remaining):
            guard bufferedByteCount > 0 else { return .needMore }
            let count = min(remaining, bufferedByteCount)
            let bytes = take(count)
            state = remaining == count ? .ending : .length(remaining: remaining - count)
            return .body(bytes)
        case .close:
            guard bufferedByteCount > 0 else { return .needMore }
            return .body(take(bufferedByteCount))
        case .chunkSize:
            guard let line = try readLine(limit: Self.maxChunkLineBytes, what: "chunk-size line") else { return .needMore }
            // chunk-size [; extensions]
            let sizeText = line.prefix { $0 != UInt8(ascii: ";") }.filter { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\t") }
            // Hex digits only: Int(_:radix:) would take a sign ("-64").
            guard !sizeText.isEmpty, sizeText.count <= 15, sizeText.allSatisfy({ Character(UnicodeScalar($0)).isHexDigit }),
                  let size = Int(String(decoding: sizeText, as: UTF8.self), radix: 16) else {
                throw Error("malformed chunk size '\(String(decoding: line.prefix(40), as: UTF8.self))'")
            }
            state = size == 0 ? .trailers : .chunkData(remaining: size)
            return try decode()
        case .chunkData(let remaining):
            guard bufferedByteCount > 0 else { return .needMore }
            let count = min(remaining, bufferedByteCount)
            let bytes = take(count)
            state = remaining == count ? .chunkDataEnd : .chunkData(remaining: remaining - count)
            return .body(bytes)
        case .chunkDataEnd:
            guard let line = try readLine(limit: 2, what: "chunk end") else { return .needMore }
            guard line.isEmpty else { throw Error("a chunk is longer than its size") }
            state = .chunkSize
            return try decode()
        case .trailers:
            // Trailer fields are read and ignored, up to the blank line.
            while true {
                guard let line = try readLine(limit: maxHeadBytes, what: "trailer") else { return .needMore }
                if line.isEmpty {
                    state = .done
                    return .end
                }
            }
        case .ending:
            state = .done
            return .end
        case .done:
            return .needMore
        }
    }

    private mutating func decodeHead() throws(Error) -> Event {
        let terminator: [UInt8] = [13, 10, 13, 10]
        let available = buffer[position...]
        guard let end = available.firstRange(of: terminator)?.upperBound else {
            // A bare-LF head is not accepted: its absence only costs the budget.
            if bufferedByteCount > maxHeadBytes { throw Error("the response head is longer than \(maxHeadBytes) bytes") }
            return .needMore
        }
        guard end - position <= maxHeadBytes else { throw Error("the response head is longer than \(maxHeadBytes) bytes") }
        let text = String(decoding: buffer[position..<end - 4], as: UTF8.self)
        position = end
        let lines = text.components(separatedBy: "\r\n")
        let parts = lines[0].split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count >= 2, parts[0] == "HTTP/1.1" || parts[0] == "HTTP/1.0",
              parts[1].count == 3, let code = Int(parts[1]), (100...599).contains(code) else {
            throw Error("malformed status line '\(lines[0].prefix(80))'")
        }
        var headers = HTTPHeaders()
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":"), colon != line.startIndex else {
                throw Error("malformed header line '\(line.prefix(80))'")
            }
            headers.add(String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: [" ", "\t"]))
        }
        let status = HTTPStatus(code: code, reason: parts.count == 3 ? String(parts[2]) : nil)
        if (100..<200).contains(code) {
            guard code != 101 else { throw Error("the server switched protocols (101), which this client does not ask for") }
            return try decode()
        }
        let framing = try Self.framing(status: status, headers: headers, headRequest: headRequest)
        self.framing = framing
        switch framing {
        case .chunked: state = .chunkSize
        case .length(let length): state = length == 0 ? .ending : .length(remaining: length)
        case .close: state = .close
        }
        return .head(Head(status: status, headers: headers))
    }

    /// RFC 9112 §6.3: no body for HEAD, 1xx, 204, 304; chunked when the last transfer
    /// coding is chunked; else Content-Length (one value); else until the close.
    static func framing(status: HTTPStatus, headers: HTTPHeaders, headRequest: Bool) throws(Error) -> Framing {
        if headRequest || !status.allowsBody { return .length(0) }
        let codings = headers.tokens("Transfer-Encoding")
        if let last = codings.last {
            // Any other last coding means the body runs to the close (§6.3 point 4).
            return last == "chunked" ? .chunked : .close
        }
        let lengths = Set(headers.values("Content-Length").flatMap { $0.split(separator: ",") }.map {
            $0.trimmingCharacters(in: [" ", "\t"])
        })
        guard let text = lengths.first else { return .close }
        guard lengths.count == 1, !text.isEmpty, text.count <= 18, text.allSatisfy({ $0.isASCII && $0.isNumber }),
              let length = Int(text) else {
            throw Error("bad Content-Length '\(headers.values("Content-Length").joined(separator: ", ").prefix(40))'")
        }
        return .length(length)
    }

    /// The next CRLF-ended line without its CRLF, nil while incomplete; an error past `limit`.
    private mutating func readLine(limit: Int, what: String) throws(Error) -> ArraySlice<UInt8>? {
        let available = buffer[position...]
        guard let crlf = available.firstRange(of: [13, 10] as [UInt8]) else {
            if bufferedByteCount > limit + 1 { throw Error("the \(what) is longer than \(limit) bytes") }
            return nil
        }
        guard crlf.lowerBound - position <= limit else { throw Error("the \(what) is longer than \(limit) bytes") }
        let line = buffer[position..<crlf.lowerBound]
        position = crlf.upperBound
        return line
    }

    private mutating func take(_ count: Int) -> [UInt8] {
        let bytes = Array(buffer[position..<position + count])
        position += count
        return bytes
    }
}
