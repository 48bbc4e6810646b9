import Foundation

/// An HTTP response: status, header fields and a body. `encoded` adds Content-Length
/// and Connection for the wire.
public struct HTTPResponse: Equatable, Sendable {
    public var status: HTTPStatus
    public var headers: HTTPHeaders
    public var body: [UInt8]
    /// The body is not in `body`: it follows the head as a stream (chunked when the
    /// headers say "Transfer-Encoding: chunked", else until the connection closes), as
    /// HTTP-FLV's is. No Content-Length is sent.
    public var streamsBody: Bool

    public init(status: HTTPStatus = .ok, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = [], streamsBody: Bool = false) {
        self.status = status
        self.headers = headers
        self.body = body
        self.streamsBody = streamsBody
    }

    /// A text/plain response.
    public static func text(_ text: String, status: HTTPStatus = .ok) -> HTTPResponse {
        HTTPResponse(status: status, headers: ["Content-Type": "text/plain; charset=utf-8"], body: Array(text.utf8))
    }

    /// An application/json response from JSON text that is already encoded.
    public static func json(text: String, status: HTTPStatus = .ok) -> HTTPResponse {
        HTTPResponse(status: status, headers: ["Content-Type": "application/json"], body: Array(text.utf8))
    }

    /// An application/json response encoding `value` (keys sorted, so output is stable);
    /// a value that fails to encode gives a 500 naming the failure.
    public static func json<Value: Encodable>(_ value: Value, status: HTTPStatus = .ok) -> HTTPResponse {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        do {
            let data = try encoder.encode(value)
            return HTTPResponse(status: status, headers: ["Content-Type": "application/json"], body: Array(data))
        } catch {
            return .text("JSON encoding failed: \(error)\n", status: .internalServerError)
        }
    }

    /// The response as bytes for the wire. Content-Length is set from the body (unless
    /// the status allows none or the body `streamsBody`), and "Connection: keep-alive"/"close" is added unless
    /// the headers already say (an upgrade's "Connection: Upgrade"). A HEAD request
    /// (`headOnly`) gets the head alone, with the length the body would have had.
    public func encoded(keepAlive: Bool, headOnly: Bool = false) -> [UInt8] {
        var text = "HTTP/1.1 \(status.code) \(status.reason)\r\n"
        for field in headers where !(status.allowsBody == false && HTTPHeaders.same(field.name, "Content-Length")) {
            text += "\(field.name): \(field.value)\r\n"
        }
        if status.allowsBody, !streamsBody, !headers.contains("Content-Length") {
            text += "Content-Length: \(body.count)\r\n"
        }
        if !headers.contains("Connection") {
            text += keepAlive ? "Connection: keep-alive\r\n" : "Connection: close\r\n"
        }
        text += "\r\n"
        var bytes = Array(text.utf8)
        if status.allowsBody, !headOnly { bytes += body }
        return bytes
    }
}
