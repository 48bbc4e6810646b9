import Foundation
import LiveAuth
import LiveNet
import Synchronization

/// The HLS routes of the relay's HTTP port:
/// - `GET /{app}/{stream}.m3u8`: the live media playlist (the newest segments); the first
///   request of a stream starts its segmenting and waits for its first segment;
/// - `GET /{app}/{stream}/{N}.ts`: segment N (MPEG-TS), 404 once it left the window.
///
/// With auth on, both need a token granting `play` on "app/stream" (as RTMP play does),
/// `?token=` or `Authorization: Bearer`; the playlist repeats the `?token=` on its segment
/// URIs, since HLS players do not carry a playlist's query over. Co-host and call streams
/// (whose plays have their own rules) are not served.
enum HLSHTTPRoutes {
    static let playlistSuffix = ".m3u8"
    static let segmentSuffix = ".ts"

    /// Adds the routes for `hls` to `router`.
    static func add(_ hls: HLSService, to router: inout HTTPRouter) {
        router.get("/{app}/{stream}\(playlistSuffix)") { request in playlist(hls, request) }
        router.get("/{app}/{stream}/{segment}\(segmentSuffix)") { request in segment(hls, request) }
    }

    /// Requests these routes answer, which check a viewer's `play` token themselves (not
    /// the API's): GET or HEAD of a path their patterns match.
    static func checksOwnToken(_ request: HTTPRequest) -> Bool {
        guard request.method == "GET" || request.method == "HEAD" else { return false }
        let parts = request.path.split(separator: "/")
        return (parts.count == 2 && request.path.hasSuffix(playlistSuffix) && parts[1].count > playlistSuffix.count)
            || (parts.count == 3 && request.path.hasSuffix(segmentSuffix) && parts[2].count > segmentSuffix.count)
    }

    private static func playlist(_ hls: HLSService, _ request: HTTPRequest) -> HTTPReply {
        let key: StreamKey
        switch admit(hls, request) {
        case .success(let admitted): key = admitted
        case .failure(let refusal): return .response(refusal.response)
        }
        let query = HTTPAccess.token(request).flatMap { token in
            request.query("token") == nil ? nil : token.addingPercentEncoding(withAllowedCharacters: tokenCharacters)
        }.map { "?token=" + $0 } ?? ""
        let target = hls.limits.segmentTargetMilliseconds
        // Segment URIs relative to the playlist's URL: "cam/N.ts".
        let render: @Sendable (HLSWindow) -> HTTPResponse = { window in
            var response = HTTPResponse(body: Array(window.playlist(targetMilliseconds: target, uriPrefix: key.name + "/",
                                                                     uriQuery: query).utf8))
            response.headers.set("Content-Type", "application/vnd.apple.mpegurl")
            response.headers.set("Cache-Control", "no-cache")
            response.headers.set("Access-Control-Allow-Origin", "*")
            return response
        }
        let answered = Answer()
        switch hls.playlist(key, answer: { window in answered.give(window.map(render) ?? notReady(key)) }) {
        case .ready(let window):
            return .response(render(window))
        case .waiting:
            return .deferred { respond in answered.wait(respond) }
        case .notFound(let reason):
            return .response(.text("\(reason)\n", status: .notFound))
        case .busy:
            return .response(.text("too many streams are served over HLS now; try again later\n", status: .serviceUnavailable))
        }
    }

    private static func segment(_ hls: HLSService, _ request: HTTPRequest) -> HTTPReply {
        let key: StreamKey
        switch admit(hls, request) {
        case .success(let admitted): key = admitted
        case .failure(let refusal): return .response(refusal.response)
        }
        guard let text = request.pathParameters["segment"], text.count <= 20, let sequence = UInt64(text),
              let bytes = hls.segment(key, sequence: sequence)
        else {
            return .response(.text("no segment \(request.pathParameters["segment"] ?? "") of \(key) (it is gone or not cut yet)\n",
                                   status: .notFound))
        }
        var response = HTTPResponse(body: bytes)
        response.headers.set("Content-Type", "video/mp2t")
        // A segment never changes once listed.
        response.headers.set("Cache-Control", "max-age=60")
        response.headers.set("Access-Control-Allow-Origin", "*")
        return .response(response)
    }

    /// What a token may keep unescaped in a URI's query (RFC 3986 unreserved; LiveLine's
    /// tokens are base64url and dots, so they pass unchanged).
    private static let tokenCharacters = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~")

    private static func notReady(_ key: StreamKey) -> HTTPResponse {
        .text("\(key) has no HLS segment yet (or it ended)\n", status: .notFound)
    }

    /// Why a request is not served, as its response.
    struct Refusal: Error {
        let response: HTTPResponse
    }

    /// The request's stream, once its names are within the relay's limits, it is no
    /// co-host or call stream, and (with auth on) its token grants `play` on it.
    private static func admit(_ hls: HLSService, _ request: HTTPRequest) -> Result<StreamKey, Refusal> {
        guard let app = request.pathParameters["app"], let name = request.pathParameters["stream"] else {
            return .failure(Refusal(response: .text("no stream in \(request.path)\n", status: .notFound)))
        }
        let configuration = hls.server.configuration
        guard app.utf8.count <= configuration.maxNameLength, name.utf8.count <= configuration.maxNameLength else {
            return .failure(Refusal(response: .text("stream name too long\n", status: .notFound)))
        }
        let key = StreamKey(app: app, name: name)
        guard !PlayAuthorizer.guards(key) else {
            return .failure(Refusal(response: .text("\(key) is not served over HLS\n", status: .notFound)))
        }
        if let verifier = configuration.auth {
            do throws(TokenError) {
                _ = try verifier.authorize(HTTPAccess.token(request), .play, path: StreamAccess.path(key),
                                           nowSeconds: StreamAccess.nowSeconds())
            } catch {
                RelayCounters.add(hls.server.counters.refusedPlays, 1)
                return .failure(Refusal(response: HTTPAccess.refusal(error)))
            }
        }
        return .success(key)
    }

    /// The answer of a playlist request that waits, whichever comes first: the
    /// connection's `respond` or the answer for it.
    final class Answer: Sendable {
        private let state = Mutex<(respond: (@Sendable (HTTPResponse) -> Void)?, response: HTTPResponse?)>((nil, nil))

        func give(_ response: HTTPResponse) {
            let respond: (@Sendable (HTTPResponse) -> Void)? = state.withLock { s in
                guard let respond = s.respond else {
                    s.response = response
                    return nil
                }
                s.respond = nil
                return respond
            }
            respond?(response)
        }

        func wait(_ respond: @escaping @Sendable (HTTPResponse) -> Void) {
            let ready: HTTPResponse? = state.withLock { s in
                guard let response = s.response else {
                    s.respond = respond
                    return nil
                }
                s.response = nil
                return response
            }
            if let ready { respond(ready) }
        }
    }
}
