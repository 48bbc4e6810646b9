/// Routes requests by method and path pattern. Patterns are literal segments,
/// `{name}` segments that capture one segment ("/api/live/{id}/members"), `{name}.ext`
/// segments that capture one segment ending in ".ext" without it ("/{app}/{stream}.flv"
/// matches "/live/cam.flv" with stream "cam", never "/api/streams"), and a final `*`
/// that matches the rest of the path (captured as "*"). Routes are tried in the
/// order they were added; HEAD falls back to the GET route. A path that matches only
/// under other methods gives 405 with those methods in Allow.
///
/// A route takes no request body unless added with a `maxBodyBytes`: the server answers
/// a body it would not take (413, or 404/405 when no route takes the request at all) as
/// soon as the head is read, without buffering any of it.
public struct HTTPRouter: Sendable {
    /// Runs on the loop thread of the connection that received the request.
    public typealias Handler = @Sendable (HTTPRequest) -> HTTPReply

    public enum Match {
        case found(Handler, parameters: [String: String])
        case notFound
        case methodNotAllowed(allowed: [String])
    }

    private enum Segment: Sendable {
        case literal(String)
        case parameter(String)
        /// A parameter followed by a literal suffix within the segment ("{stream}.flv").
        case suffixed(String, suffix: String)
        case rest
    }

    private struct Route: Sendable {
        let method: String
        let segments: [Segment]
        let maxBodyBytes: Int
        let handler: Handler
    }

    private var routes: [Route] = []

    public init() {}

    /// Adds a route for `method` ("GET", "POST"...) and `pattern`; its requests may
    /// carry a body of up to `maxBodyBytes` (0: none; the parser's `maxBodyBytes` caps
    /// every route).
    public mutating func add(_ method: String, _ pattern: String, maxBodyBytes: Int = 0, _ handler: @escaping Handler) {
        precondition(maxBodyBytes >= 0, "a body limit cannot be negative")
        let parts = pattern.split(separator: "/").map(String.init)
        let segments: [Segment] = parts.enumerated().map { index, part in
            if part == "*" {
                precondition(index == parts.count - 1, "* must be the last segment of \(pattern)")
                return .rest
            }
            if part.hasPrefix("{"), part.hasSuffix("}"), part.count > 2 {
                return .parameter(String(part.dropFirst().dropLast()))
            }
            if part.hasPrefix("{"), let close = part.firstIndex(of: "}"), part.index(after: close) < part.endIndex,
               part.distance(from: part.startIndex, to: close) > 1 {
                return .suffixed(String(part[part.index(after: part.startIndex)..<close]),
                                 suffix: String(part[part.index(after: close)...]))
            }
            return .literal(part)
        }
        routes.append(Route(method: method, segments: segments, maxBodyBytes: maxBodyBytes, handler: handler))
    }

    public mutating func get(_ pattern: String, _ handler: @escaping Handler) { add("GET", pattern, handler) }
    public mutating func post(_ pattern: String, maxBodyBytes: Int = 0, _ handler: @escaping Handler) {
        add("POST", pattern, maxBodyBytes: maxBodyBytes, handler)
    }
    public mutating func put(_ pattern: String, maxBodyBytes: Int = 0, _ handler: @escaping Handler) {
        add("PUT", pattern, maxBodyBytes: maxBodyBytes, handler)
    }
    public mutating func delete(_ pattern: String, _ handler: @escaping Handler) { add("DELETE", pattern, handler) }

    /// Finds the route for `method` and a decoded `path`.
    public func match(method: String, path: String) -> Match {
        lookup(method: method, path: path).match
    }

    /// Whether a request whose head announced `length` bytes of body may send them:
    /// nil when its route takes that much, else the error to answer before reading any
    /// (413 over the route's limit, 404 / 405 with Allow when no route takes it).
    public func bodyRefusal(method: String, path: String, length: Int) -> HTTPRequestParser.Error? {
        let (match, maxBodyBytes) = lookup(method: method, path: path)
        switch match {
        case .found:
            guard length > maxBodyBytes else { return nil }
            return maxBodyBytes == 0
                ? .init(.payloadTooLarge, "\(method) \(path) takes no request body")
                : .init(.payloadTooLarge, "body of \(length) bytes over the \(maxBodyBytes) that \(method) \(path) takes")
        case .notFound:
            return .init(.notFound, "no route for \(path)")
        case .methodNotAllowed(let allowed):
            return .init(.methodNotAllowed, "\(method) is not allowed on \(path)",
                         headers: ["Allow": allowed.joined(separator: ", ")])
        }
    }

    private func lookup(method: String, path: String) -> (match: Match, maxBodyBytes: Int) {
        let parts = path.split(separator: "/").map(String.init)
        var allowed: [String] = []
        var getFallback: (Handler, [String: String])?
        for route in routes {
            guard let parameters = Self.bind(route.segments, to: parts) else { continue }
            if route.method == method { return (.found(route.handler, parameters: parameters), route.maxBodyBytes) }
            if method == "HEAD", route.method == "GET", getFallback == nil { getFallback = (route.handler, parameters) }
            if !allowed.contains(route.method) { allowed.append(route.method) }
        }
        // HEAD never carries a body the GET route would read.
        if let (handler, parameters) = getFallback { return (.found(handler, parameters: parameters), 0) }
        return (allowed.isEmpty ? .notFound : .methodNotAllowed(allowed: allowed), 0)
    }

    private static func bind(_ segments: [Segment], to parts: [String]) -> [String: String]? {
        var parameters: [String: String] = [:]
        for (index, segment) in segments.enumerated() {
            switch segment {
            case .rest:
                parameters["*"] = parts[min(index, parts.count)...].joined(separator: "/")
                return parameters
            case .literal(let text):
                guard index < parts.count, parts[index] == text else { return nil }
            case .parameter(let name):
                guard index < parts.count else { return nil }
                parameters[name] = parts[index]
            case .suffixed(let name, let suffix):
                guard index < parts.count, parts[index].count > suffix.count, parts[index].hasSuffix(suffix) else { return nil }
                parameters[name] = String(parts[index].dropLast(suffix.count))
            }
        }
        return parts.count == segments.count ? parameters : nil
    }
}
