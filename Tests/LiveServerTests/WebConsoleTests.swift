import Foundation
import LiveAuth
import LiveCore
import LiveNet
import Testing
@testable import LiveServer

@Suite("web console page")
struct WebConsoleTests {
    static func answer(_ router: HTTPRouter, _ path: String, headers: HTTPHeaders = HTTPHeaders()) throws -> HTTPResponse {
        let request = try #require(HTTPRequest(method: "GET", target: path, headers: headers))
        guard case .found(let handler, _) = router.match(method: "GET", path: request.path) else {
            Issue.record("no route for \(path)")
            return HTTPResponse(status: .notFound)
        }
        guard case .response(let response) = handler(request) else {
            Issue.record("\(path) did not answer with a response")
            return HTTPResponse(status: .internalServerError)
        }
        return response
    }

    @Test("GET / is one HTML page with its script and style inline; the CSP lets exactly those run and connects to this server only")
    func page() throws {
        var router = HTTPRouter()
        WebConsole.add(to: &router)
        let response = try Self.answer(router, "/")
        #expect(response.status == .ok)
        #expect(response.headers["Content-Type"] == "text/html; charset=utf-8")
        let html = String(decoding: response.body, as: UTF8.self)
        #expect(html.contains("<script>\(WebConsolePage.script)</script>") && html.contains("<style>\(WebConsolePage.style)</style>"))
        let csp = try #require(response.headers["Content-Security-Policy"])
        let scriptHash = "sha256-" + Data(SHA256.digest(Array(WebConsolePage.script.utf8))).base64EncodedString()
        #expect(csp.contains("script-src '\(scriptHash)'") && csp.contains("connect-src 'self'") && csp.hasPrefix("default-src 'none'"))
        // Nothing is fetched from elsewhere: no external URL, no src attribute.
        #expect(!html.contains("://") && !html.contains("src="))
        // What the page asks of the relay.
        for path in ["/api/streams", "/api/live", "/members?size=100", "/watch", ".flv", ".m3u8", "Authorization", "sessionStorage"] {
            #expect(WebConsolePage.script.contains(path), "\(path)")
        }
        #expect(response.headers["Cache-Control"] == "no-store")
    }

    @Test("with auth on, the page is open and the API still needs a token")
    func openWithAuth() throws {
        var routes = HTTPRouter()
        WebConsole.add(to: &routes)
        routes.get("/api/streams") { _ in .response(.json(text: "[]")) }
        let guarded = HTTPAccess.guarded(routes, verifier: TokenVerifier(secret: Array(repeating: 7, count: 32)))
        #expect(try Self.answer(guarded, "/").status == .ok)
        let api = try Self.answer(guarded, "/api/streams")
        #expect(api.status == .unauthorized)
        #expect(String(decoding: api.body, as: UTF8.self).contains("\"code\":213"))
    }
}
