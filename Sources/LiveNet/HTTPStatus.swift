/// An HTTP status code with its reason phrase.
public struct HTTPStatus: Equatable, Hashable, Sendable, CustomStringConvertible {
    public let code: Int
    public let reason: String

    public init(code: Int, reason: String? = nil) {
        self.code = code
        self.reason = reason ?? Self.reasons[code] ?? "Status \(code)"
    }

    public var description: String { "\(code) \(reason)" }

    /// 1xx, 204 and 304 carry no body and no Content-Length (RFC 9110 §8.6).
    public var allowsBody: Bool { !(100..<200).contains(code) && code != 204 && code != 304 }

    public static let switchingProtocols = HTTPStatus(code: 101)
    public static let ok = HTTPStatus(code: 200)
    public static let created = HTTPStatus(code: 201)
    public static let accepted = HTTPStatus(code: 202)
    public static let noContent = HTTPStatus(code: 204)
    public static let badRequest = HTTPStatus(code: 400)
    public static let unauthorized = HTTPStatus(code: 401)
    public static let forbidden = HTTPStatus(code: 403)
    public static let notFound = HTTPStatus(code: 404)
    public static let methodNotAllowed = HTTPStatus(code: 405)
    public static let requestTimeout = HTTPStatus(code: 408)
    public static let conflict = HTTPStatus(code: 409)
    public static let payloadTooLarge = HTTPStatus(code: 413)
    public static let uriTooLong = HTTPStatus(code: 414)
    public static let headerFieldsTooLarge = HTTPStatus(code: 431)
    public static let internalServerError = HTTPStatus(code: 500)
    public static let notImplemented = HTTPStatus(code: 501)
    public static let serviceUnavailable = HTTPStatus(code: 503)
    public static let httpVersionNotSupported = HTTPStatus(code: 505)

    private static let reasons: [Int: String] = [
        101: "Switching Protocols", 200: "OK", 201: "Created", 202: "Accepted", 204: "No Content",
        301: "Moved Permanently", 302: "Found", 304: "Not Modified",
        400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found",
        405: "Method Not Allowed", 408: "Request Timeout", 409: "Conflict", 411: "Length Required",
        413: "Content Too Large", 414: "URI Too Long", 429: "Too Many Requests",
        431: "Request Header Fields Too Large", 500: "Internal Server Error", 501: "Not Implemented",
        502: "Bad Gateway", 503: "Service Unavailable", 505: "HTTP Version Not Supported",
    ]
}
