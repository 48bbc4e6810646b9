import LiveAuth
import LiveNet

/// The relay's HTTP API with auth on: every route but the open ones needs a token
/// granting `api` on the request's path without its leading slash ("api/streams",
/// "api/live/room1/members"), from `Authorization: Bearer TOKEN` or, for browsers,
/// `?token=TOKEN`. A refusal is 401 with `{"code":104|202|212|213,"message":…}`.
enum HTTPAccess {
    /// Open without a token: health and metrics for probes and scrapers, the line's and
    /// the call's WebSockets, which check their own tokens (`?token=` or the request's), as
    /// do the FLV viewers' paths (`FLVHTTPAPI.checksOwnToken`: a `play` token). The watch
    /// pages (`WatchPage.isPagePath`) are open too: their feed checks the viewer's token;
    /// and the web console's page, which holds no data and asks for a token itself.
    static let openPaths: Set<String> = ["/healthz", "/metrics", "/line", "/call", "/"]

    /// The request's token: the Bearer credentials, else the `token` query parameter.
    static func token(_ request: HTTPRequest) -> String? {
        if let header = request.headers["Authorization"] {
            let parts = header.split(separator: " ", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == "bearer" {
                return parts[1].trimmingCharacters(in: .whitespaces)
            }
        }
        return request.query("token")
    }

    /// The path a token must grant: the request path's segments as the router sees them,
    /// without the leading slash ("//api/streams" → "api/streams").
    static func path(_ request: HTTPRequest) -> String {
        request.path.split(separator: "/").joined(separator: "/")
    }

    private struct Refusal: Encodable {
        var code: Int
        var message: String
    }

    /// 401 with the SDK code and the reason.
    static func refusal(_ error: TokenError) -> HTTPResponse {
        var response = HTTPResponse.json(Refusal(code: error.code.rawValue, message: error.description), status: .unauthorized)
        response.headers.set("WWW-Authenticate", "Bearer")
        return response
    }

    /// `routes` behind the token check: one catch-all route per method that checks the
    /// token, then hands the request to `routes`. Requests `checksOwnToken` names go to
    /// their routes unchecked: those check a viewer's `play` token on the stream themselves
    /// (HLS), and must be the routes such requests reach (added first).
    static func guarded(_ routes: HTTPRouter, verifier: TokenVerifier,
                        checksOwnToken: @escaping @Sendable (HTTPRequest) -> Bool = { _ in false }) -> HTTPRouter {
        var router = HTTPRouter()
        for method in ["GET", "POST", "PUT", "DELETE", "PATCH"] {
            router.add(method, "/*") { request in
                if !openPaths.contains(request.path), !FLVHTTPAPI.checksOwnToken(request.path),
                   !WatchPage.isPagePath(request.path), !checksOwnToken(request) {
                    do throws(TokenError) {
                        _ = try verifier.authorize(token(request), .api, path: path(request),
                                                   nowSeconds: StreamAccess.nowSeconds())
                    } catch {
                        return .response(refusal(error))
                    }
                }
                return dispatch(request, to: routes)
            }
        }
        return router
    }

    /// What `routes` answers `request`, with the HTTP server's own 404 and 405 answers.
    private static func dispatch(_ request: HTTPRequest, to routes: HTTPRouter) -> HTTPReply {
        var request = request
        switch routes.match(method: request.method, path: request.path) {
        case .found(let handler, let parameters):
            request.pathParameters = parameters
            return handler(request)
        case .notFound:
            return .response(.text("no route for \(request.path)\n", status: .notFound))
        case .methodNotAllowed(let allowed):
            var response = HTTPResponse.text("\(request.method) is not allowed on \(request.path)\n", status: .methodNotAllowed)
            response.headers.set("Allow", allowed.joined(separator: ", "))
            return .response(response)
        }
    }
}
