import LiveAuth
import LiveCore
import LiveNet

/// HTTP-FLV and the WebSocket FLV feed on the relay's HTTP port:
///
/// - `GET /{app}/{stream}.flv`: 200, `Content-Type: video/x-flv`, a chunked body
///   (HTTP/1.0: until the connection closes) of FLV: the header, the stream's metadata
///   and sequence headers, its GOP cache, then the live tags.
/// - `GET /ws/{app}/{stream}` (WebSocket, no subprotocol): the same FLV bytes, the FLV
///   header as the first binary message, then one binary message per tag.
///
/// Both are answered 404 for a stream nobody publishes. With auth on they need a `play`
/// token for "app/stream", as an RTMP play does, as `?token=` (browsers) or
/// `Authorization: Bearer` (401 without, counted as a refused play), and co-host and
/// call streams go through the relay's play rule (403). Each viewer is an
/// `FLVRelayPlayer`: counted among the stream's players (`/api/streams` lists it with
/// its transport; `/metrics` counts it in `liveline_players` and by transport in
/// `liveline_flv_players`). Viewers hold upgraded-connection slots of the HTTP server
/// (`HTTPServer.Capacity.maxUpgradedConnections`, shared with the line's and the calls'
/// WebSockets; 503 beyond).
enum FLVHTTPAPI {
    /// The largest message a WebSocket viewer may send (it has nothing to say).
    static let maxViewerMessage = 1024

    /// Adds both routes.
    static func add(_ server: RTMPServer, to router: inout HTTPRouter) {
        router.get("/{app}/{stream}.flv") { request in httpFLV(request, server: server) }
        router.get("/ws/{app}/{stream}") { request in webSocketFLV(request, server: server) }
    }

    /// Paths that check their own `play` token, so the API's token check lets them
    /// through (`HTTPAccess`): "/{app}/{stream}.flv" and "/ws/{app}/{stream}".
    static func checksOwnToken(_ path: String) -> Bool {
        let parts = path.split(separator: "/")
        if parts.count == 2, parts[1].hasSuffix(".flv"), parts[1].count > 4 { return true }
        return parts.count == 3 && parts[0] == "ws"
    }

    /// What a viewer's request was granted.
    enum Admission {
        /// Play `key`; the token's expiry (auth on).
        case play(StreamKey, tokenExpiry: Int64?)
        case refused(HTTPResponse)
    }

    /// The checks every FLV viewer passes, in this order: the names, the token (auth on),
    /// the play rule of co-host and call streams, and a publisher being live. The token
    /// comes first so that a viewer without one learns nothing of which streams exist.
    static func admit(_ request: HTTPRequest, server: RTMPServer) -> Admission {
        let app = request.pathParameters["app"] ?? ""
        let name = request.pathParameters["stream"] ?? ""
        let maxName = server.configuration.maxNameLength
        guard !app.isEmpty, !name.isEmpty, app.utf8.count <= maxName, name.utf8.count <= maxName else {
            return .refused(.text("app and stream names are 1 to \(maxName) bytes\n", status: .badRequest))
        }
        let key = StreamKey(app: app, name: name)
        var claims: AccessClaims?
        if let verifier = server.configuration.auth {
            do throws(TokenError) {
                claims = try verifier.authorize(HTTPAccess.token(request), .play, path: StreamAccess.path(key),
                                                nowSeconds: StreamAccess.nowSeconds())
            } catch {
                RelayCounters.add(server.counters.refusedPlays, 1)
                Log.warning("flv: play of \(key) refused: \(error.statusText)")
                return .refused(HTTPAccess.refusal(error))
            }
        }
        if PlayAuthorizer.guards(key), let rule = server.playAuthorizer.refusal(key, query: query(of: request), claims: claims) {
            RelayCounters.add(server.counters.refusedPlays, 1)
            Log.warning("flv: play of \(key) refused: \(rule)")
            return .refused(.text("\(rule)\n", status: .forbidden))
        }
        guard server.registry.stream(key)?.hasPublisher == true else {
            return .refused(.text("nobody publishes \(key)\n", status: .notFound))
        }
        return .play(key, tokenExpiry: claims?.exp)
    }

    /// The request target's query without the "?" (what an RTMP play's name carries).
    static func query(of request: HTTPRequest) -> String? {
        guard let mark = request.target.firstIndex(of: "?") else { return nil }
        return String(request.target[request.target.index(after: mark)...])
    }

    /// The head of an HTTP-FLV answer: chunked for HTTP/1.1, until close for HTTP/1.0.
    static func head(chunked: Bool) -> HTTPResponse {
        var response = HTTPResponse(status: .ok, streamsBody: true)
        response.headers.set("Content-Type", "video/x-flv")
        response.headers.set("Cache-Control", "no-cache, no-store")
        // Players on other origins (flv.js, a page served elsewhere) may read it.
        response.headers.set("Access-Control-Allow-Origin", "*")
        if chunked { response.headers.set("Transfer-Encoding", "chunked") }
        response.headers.set("Connection", "close")
        return response
    }

    static func httpFLV(_ request: HTTPRequest, server: RTMPServer) -> HTTPReply {
        let (key, expiry): (StreamKey, Int64?)
        switch admit(request, server: server) {
        case .refused(let response): return .response(response)
        case .play(let granted, let tokenExpiry): (key, expiry) = (granted, tokenExpiry)
        }
        let chunked = request.minorVersion >= 1
        let response = head(chunked: chunked)
        if request.method == "HEAD" { return .response(response) }
        return .upgrade(response) { connection, _ in
            let player = FLVRelayPlayer(connection: connection, framing: chunked ? .chunked : .untilClose, key: key,
                                        server: server, tokenExpiry: expiry)
            player.begin()
            return player
        }
    }

    static func webSocketFLV(_ request: HTTPRequest, server: RTMPServer) -> HTTPReply {
        let (key, expiry): (StreamKey, Int64?)
        switch admit(request, server: server) {
        case .refused(let response): return .response(response)
        case .play(let granted, let tokenExpiry): (key, expiry) = (granted, tokenExpiry)
        }
        let upgrade = WebSocketUpgrade.handler(maxMessage: maxViewerMessage, idleTimeout: nil) { socket, _ in
            let player = FLVRelayPlayer(connection: socket.connection, framing: .webSocket(socket), key: key,
                                        server: server, tokenExpiry: expiry)
            // The socket holds the player until it closes (then it lets go of its callbacks).
            socket.onClose = { _, code, reason in player.connectionClosed("\(code) \(reason)") }
            player.begin()
        }
        return upgrade(request)
    }

    /// `liveline_flv_players`'s samples: the FLV players of all streams, by transport.
    static func playerCounts(_ streams: [StreamStats]) -> [(labels: String, value: String)] {
        [PlayerTransport.httpFLV, .webSocketFLV].map { transport in
            let count = streams.reduce(0) { $0 + $1.playerDetails.filter { $0.transport == transport }.count }
            return ("{transport=\"\(transport.rawValue)\"}", String(count))
        }
    }
}
