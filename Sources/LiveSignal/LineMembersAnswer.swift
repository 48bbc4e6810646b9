import Foundation
import LiveCore

/// Why a member page could not be had (`LineServer.members` in the kits).
public enum LineMembersError: Error, CustomStringConvertible, Equatable, Sendable {
    /// The signaling URL names no host and port to ask (not ws://HOST:PORT/…).
    case badURL(String)
    /// The server could not be reached, or did not answer in time.
    case unreachable(String)
    /// The server refused: its HTTP status and the SDK code and reason it gave (401
    /// with 104 / 202 / 212 / 213 for the token, 404 with 600 for a line that has not
    /// started, 400 with 4 for a page or size out of range).
    case refused(status: Int, code: LiveCode, message: String)
    /// The answer is not a member page (not HTTP, too large, not the page's JSON).
    case malformed(String)

    public var description: String {
        switch self {
        case .badURL(let url): "'\(url)' is not a ws://HOST:PORT/PATH address to ask for members"
        case .unreachable(let reason): "cannot ask the line's server for its members: \(reason)"
        case .refused(let status, let code, let message): "the server refused the member list (HTTP \(status), code \(code.rawValue)): \(message)"
        case .malformed(let reason): "the server's member list cannot be read: \(reason)"
        }
    }
}

extension LineMemberPage {
    /// The page in a whole HTTP answer (`GET /api/live/{id}/members`), or why there is
    /// none: a refusal with the server's code, or an answer that is no page. Pure; the
    /// caller bounds the answer's size.
    public static func parse(httpAnswer answer: [UInt8]) throws(LineMembersError) -> LineMemberPage {
        guard let (end, lines) = httpHead(answer) else { throw .malformed("no complete HTTP head") }
        let status = lines.first.map { $0.split(separator: " ") }
        guard let status, status.count >= 2, status[0].hasPrefix("HTTP/1."), let code = Int(status[1]) else {
            throw .malformed("not an HTTP status line: \(lines.first?.prefix(80) ?? "")")
        }
        var body = Array(answer[(end + 4)...])
        if let length = contentLength(lines) {
            guard length <= body.count else { throw .malformed("the body ended after \(body.count) of \(length) bytes") }
            body = Array(body.prefix(length))
        }
        guard code == 200 else {
            struct Refusal: Decodable { var code: Int; var message: String }
            let refusal = try? JSONDecoder().decode(Refusal.self, from: Data(body))
            throw .refused(status: code, code: refusal.flatMap { LiveCode(rawValue: $0.code) } ?? .unknown,
                           message: refusal?.message ?? "HTTP \(code)")
        }
        do {
            return try JSONDecoder().decode(LineMemberPage.self, from: Data(body))
        } catch {
            throw .malformed("the body is not a member page")
        }
    }

    /// Where the head ends (the index of its blank line's CR LF CR LF) and its lines;
    /// nil while it is incomplete. Pure.
    public static func httpHead(_ bytes: [UInt8]) -> (end: Int, lines: [String])? {
        let separator: [UInt8] = [13, 10, 13, 10]
        guard let end = bytes.indices.dropLast(3).first(where: { bytes[$0..<$0 + 4].elementsEqual(separator) }) else { return nil }
        return (end, String(decoding: bytes[..<end], as: UTF8.self).components(separatedBy: "\r\n"))
    }

    /// The head's Content-Length (its first line, the status, is skipped); nil without one. Pure.
    public static func contentLength(_ lines: [String]) -> Int? {
        for line in lines.dropFirst() {
            let parts = line.split(separator: ":", maxSplits: 1)
            if parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces).lowercased() == "content-length",
               let length = Int(parts[1].trimmingCharacters(in: .whitespaces)), length >= 0 {
                return length
            }
        }
        return nil
    }
}
