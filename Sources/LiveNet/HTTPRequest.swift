import Foundation

/// A query string parameter, decoded ("a+b%21" → "a b!").
public struct HTTPQueryItem: Equatable, Sendable {
    public var name: String
    public var value: String

    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}

/// A parsed HTTP/1.x request.
public struct HTTPRequest: Equatable, Sendable {
    /// "GET", "POST"... exactly as sent (methods are case-sensitive).
    public var method: String
    /// The request target as sent ("/api/streams?app=live").
    public var target: String
    /// 0 for HTTP/1.0, 1 for HTTP/1.1.
    public var minorVersion: Int
    public var headers: HTTPHeaders
    public var body: [UInt8]
    /// The target's path, percent-decoded ("/api/live/room 1/members").
    public var path: String
    /// The query string's parameters in order.
    public var queryItems: [HTTPQueryItem]
    /// Values the router captured from `{name}` segments (and "*" for a trailing `*`).
    public var pathParameters: [String: String] = [:]

    /// Builds a request from its parts; `path` and `queryItems` come from `target`.
    /// Returns nil when the target's percent-encoding is malformed.
    public init?(method: String, target: String, minorVersion: Int = 1, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = []) {
        self.method = method
        self.target = target
        self.minorVersion = minorVersion
        self.headers = headers
        self.body = body
        var pathPart = Substring(target)
        var queryPart: Substring = ""
        if let question = target.firstIndex(of: "?") {
            pathPart = target[..<question]
            queryPart = target[target.index(after: question)...]
        }
        if pathPart.hasPrefix("http://") || pathPart.hasPrefix("https://") {
            // absolute-form (RFC 9112 §3.2.2): keep the path after the authority.
            let afterScheme = pathPart[pathPart.range(of: "://")!.upperBound...]
            pathPart = afterScheme.firstIndex(of: "/").map { afterScheme[$0...] } ?? "/"
        }
        guard let path = String(pathPart).removingPercentEncoding else { return nil }
        self.path = path
        var items: [HTTPQueryItem] = []
        for pair in queryPart.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = Self.decodeQueryComponent(parts[0]),
                  let value = Self.decodeQueryComponent(parts.count > 1 ? parts[1] : "") else { return nil }
            items.append(HTTPQueryItem(name: name, value: value))
        }
        queryItems = items
    }

    /// The first value of the query parameter `name`.
    public func query(_ name: String) -> String? {
        queryItems.first { $0.name == name }?.value
    }

    /// Whether the connection stays open after the response: HTTP/1.1 unless
    /// "Connection: close", HTTP/1.0 only with "Connection: keep-alive".
    public var keepAlive: Bool {
        let tokens = headers.tokens("Connection")
        return minorVersion >= 1 ? !tokens.contains("close") : tokens.contains("keep-alive")
    }

    /// The body as UTF-8 text.
    public var bodyText: String { String(decoding: body, as: UTF8.self) }

    private static func decodeQueryComponent(_ text: Substring) -> String? {
        String(text).replacingOccurrences(of: "+", with: " ").removingPercentEncoding
    }
}
