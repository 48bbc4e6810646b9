import Foundation
import LiveCore
import LiveNet
import LiveSignal

/// The member pages of a line (what the anyRTC SDK's onRTCMemberListNotify(serverId,
/// roomId, totalMember) says to ask for): `GET /api/live/{liveId}/members?page=&size=`
/// of the line's server, on the host and port of its signaling URL.
extension LineServer {
    /// Why a member page could not be had (`LineMembersError`).
    public typealias MembersError = LineMembersError

    /// The most bytes a member page's answer may have (a 100-member page of 512-byte
    /// user data and ids is about 110 KB).
    static let maxMemberAnswer = 1 << 20

    /// Page `page` (from 1) of `liveId`'s members in join order, `size` to a page (the
    /// server's 15 when nil, at most 100): the page says the room's `total` too. `token`:
    /// on a server with tokens, one granting `api` on `api/live/LIVEID/members` (sent as
    /// `Authorization: Bearer`). Does not block: the request runs on a loop of its own.
    public func members(liveId: String, page: Int = 1, size: Int? = nil, token: String? = nil,
                        timeout: Duration = .seconds(5)) async throws(MembersError) -> LineMemberPage {
        guard let (host, port, _) = WebSocketClient.parse(url: signalURL) else { throw .badURL(signalURL) }
        let request = Self.memberRequest(host: host, port: port, liveId: liveId, page: page, size: size, token: token)
        let result: Result<[UInt8], MembersError> = await withCheckedContinuation { continuation in
            HTTPFetch.get(host: host, port: port, request: request, limit: Self.maxMemberAnswer, timeout: timeout) {
                continuation.resume(returning: $0)
            }
        }
        return try Self.memberPage(from: result.get())
    }

    /// The GET request's bytes. Pure.
    static func memberRequest(host: String, port: UInt16, liveId: String, page: Int, size: Int?, token: String?) -> [UInt8] {
        var unreserved = CharacterSet.alphanumerics
        unreserved.insert(charactersIn: "-._~")
        let id = liveId.addingPercentEncoding(withAllowedCharacters: unreserved) ?? liveId
        let query = "page=\(page)" + (size.map { "&size=\($0)" } ?? "")
        let authority = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        var text = "GET /api/live/\(id)/members?\(query) HTTP/1.1\r\nHost: \(authority)\r\nAccept: application/json\r\nConnection: close\r\n"
        if let token { text += "Authorization: Bearer \(token)\r\n" }
        return Array((text + "\r\n").utf8)
    }

    /// The page in a whole HTTP answer, or why there is none. Pure.
    static func memberPage(from answer: [UInt8]) throws(MembersError) -> LineMemberPage {
        try LineMemberPage.parse(httpAnswer: answer)
    }
}

/// One plain HTTP/1.1 exchange with `Connection: close` on a LiveNet loop: the request
/// goes out, the whole answer (to the server's close) comes back, at most `limit` bytes.
enum HTTPFetch {
    /// The loop the fetches share, started on first use and kept for the process.
    private static let loop: EventLoop? = {
        let loop = try? EventLoop(name: "liveline-http")
        loop?.start()
        return loop
    }()

    static func get(host: String, port: UInt16, request: [UInt8], limit: Int, timeout: Duration,
                    completion: @escaping @Sendable (Result<[UInt8], LineServer.MembersError>) -> Void) {
        guard let loop else { return completion(.failure(.unreachable("no event loop for the request"))) }
        TCPConnection.connect(host: host, port: port, on: loop, timeout: timeout) { result in
            switch result {
            case .failure(let error):
                completion(.failure(.unreachable("connecting to \(host):\(port): \(error)")))
            case .success(let connection):
                let reader = AnswerReader(limit: limit, completion: completion)
                connection.handler = reader
                reader.timer = loop.schedule(after: timeout) { [weak connection] in
                    connection?.abort(.timedOut("the member list from \(host):\(port)"))
                }
                _ = connection.write(request)
            }
        }
    }

    /// The length of an answer whose head is complete and names its Content-Length;
    /// nil before, or without one (then the answer ends when the server closes). Pure.
    static func answerLength(_ bytes: [UInt8]) -> Int? {
        guard let (end, lines) = LineMemberPage.httpHead(bytes), let length = LineMemberPage.contentLength(lines) else { return nil }
        return end + 4 + length
    }

    /// Collects the answer until it is whole or the server closes. Loop thread only.
    private final class AnswerReader: TCPConnectionHandler {
        let limit: Int
        var completion: (@Sendable (Result<[UInt8], LineServer.MembersError>) -> Void)?
        var timer: TimerHandle?
        private var received: [UInt8] = []

        init(limit: Int, completion: @escaping @Sendable (Result<[UInt8], LineServer.MembersError>) -> Void) {
            self.limit = limit
            self.completion = completion
        }

        func onRead(_ connection: TCPConnection, _ bytes: UnsafeRawBufferPointer) {
            guard received.count + bytes.count <= limit else {
                finish(.failure(.malformed("the answer is larger than \(limit) bytes")))
                return connection.abort(nil)
            }
            received += bytes
            // Whole once the head and its Content-Length of body are in (a server that keeps
            // the connection open despite `Connection: close` is not waited for).
            if let whole = HTTPFetch.answerLength(received), received.count >= whole {
                timer?.cancel()
                finish(.success(Array(received.prefix(whole))))
                connection.close()
            }
        }

        func onClose(_ connection: TCPConnection, _ error: NetError?) {
            timer?.cancel()
            if let error, received.isEmpty {
                finish(.failure(.unreachable("\(error)")))
            } else {
                finish(.success(received))
            }
        }

        private func finish(_ result: Result<[UInt8], LineServer.MembersError>) {
            let callback = completion
            completion = nil
            callback?(result)
        }
    }
}
