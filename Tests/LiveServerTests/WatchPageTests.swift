import Foundation
import LiveCore
import Testing
@testable import LiveServer

/// The watch page as the relay serves it (the browser test plays it: livelineTests'
/// WatchPageBrowserTests).
@Suite("Watch page: GET /watch/{app}/{stream}")
struct WatchPageTests {
    /// The page's one inline script, as the browser hashes it for the policy.
    func inlineScript(_ page: String) throws -> String {
        let start = try #require(page.range(of: "<script>"))
        let end = try #require(page.range(of: "</script>", range: start.upperBound..<page.endIndex))
        return String(page[start.upperBound..<end.lowerBound])
    }

    @Test("the page is HTML with the player inline, and its policy lets exactly that script run")
    func pageAndPolicy() throws {
        let response = WatchPage.response()
        #expect(response.headers["Content-Type"] == "text/html; charset=utf-8")
        let page = String(decoding: response.body, as: UTF8.self)
        #expect(!page.contains("<!-- watch.js -->"))
        let script = try inlineScript(page)
        #expect(script.contains("window.livelineStats"))
        #expect(page.components(separatedBy: "<script").count == 2, "one script only")
        let hash = Data(SHA256.digest(Array(script.utf8))).base64EncodedString()
        let policy = try #require(response.headers["Content-Security-Policy"])
        #expect(policy.contains("script-src 'sha256-\(hash)'"), "\(policy)")
        #expect(policy.contains("default-src 'none'") && policy.contains("connect-src 'self'"), "\(policy)")
        // Nothing from elsewhere: no absolute URL in the page or its script.
        #expect(!page.contains("http://") && !page.contains("https://") && !page.contains("//cdn"))
    }

    @Test("served for any app and stream, the same bytes; other paths under /watch are 404")
    func routes() throws {
        let relay = try startRelay()
        defer { relay.shutdown() }
        let page = try httpGet(port: relay.httpPort, "/watch/live/room1")
        #expect(page.status == 200)
        #expect(page.body == String(decoding: WatchPage.response().body, as: UTF8.self))
        #expect(try httpGet(port: relay.httpPort, "/watch/other/x%3Cb%3E?token=abc").body == page.body)
        #expect(try httpGet(port: relay.httpPort, "/watch/live").status == 404)
        #expect(try httpGet(port: relay.httpPort, "/watch/live/x/y").status == 404)
    }

    @Test("with auth on the page needs no token (its feed checks the viewer's), the API still does")
    func openWithAuth() throws {
        let relay = try startAuthRelay()
        defer { relay.shutdown() }
        #expect(try httpGet(port: relay.httpPort, "/watch/live/x").status == 200)
        #expect(try httpGet(port: relay.httpPort, "/api/streams").status == 401)
        #expect(try httpGet(port: relay.httpPort, "/watch/live").status == 401)
    }
}
