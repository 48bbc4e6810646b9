import Foundation
import LiveCore
import LiveNet

/// The relay's web console, `GET /`: one page (HTML with its script and style inline,
/// served from the binary; nothing fetched from elsewhere) that lists the living list's
/// lines (`/api/live`, and each line's members for its hoster and co-hosts) and the live
/// streams with their figures (`/api/streams`), refreshed every second, with a link to
/// each stream's watch page and its `.flv` and `.m3u8` URLs.
///
/// With auth on, the page itself is open (it holds no data); the API answers 401 and the
/// page asks for a token, keeps it in the tab's sessionStorage and sends it as
/// `Authorization: Bearer` (a token with `--api 'api/*'`; its links carry it as
/// `?token=`, so one that also grants `--play` opens them).
///
/// The answer's Content-Security-Policy allows exactly the page's own script and style
/// (by their SHA-256) and connections to this server only, so the page cannot load or
/// send anything elsewhere even if a stream or line name tried to inject markup (the
/// script builds the page with text nodes, never HTML from data).
public enum WebConsole {
    /// Adds `GET /` to `router`.
    public static func add(to router: inout HTTPRouter) {
        let response = page
        router.get("/") { _ in .response(response) }
    }

    /// The page's answer, built once.
    static let page: HTTPResponse = {
        let html = WebConsolePage.html
            .replacingOccurrences(of: "/*STYLE*/", with: WebConsolePage.style)
            .replacingOccurrences(of: "/*SCRIPT*/", with: WebConsolePage.script)
        var response = HTTPResponse(status: .ok, headers: ["Content-Type": "text/html; charset=utf-8"], body: Array(html.utf8))
        response.headers.set("Cache-Control", "no-store")
        response.headers.set("X-Content-Type-Options", "nosniff")
        response.headers.set("Referrer-Policy", "no-referrer")
        response.headers.set("Content-Security-Policy", contentSecurityPolicy)
        return response
    }()

    /// Only this page's inline script and style run; fetches go to this origin only.
    static var contentSecurityPolicy: String {
        "default-src 'none'; script-src '\(hash(WebConsolePage.script))'; style-src '\(hash(WebConsolePage.style))'; "
            + "connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    }

    /// The CSP source of an inline block: `sha256-` and its digest in base64.
    static func hash(_ text: String) -> String {
        "sha256-" + Data(SHA256.digest(Array(text.utf8))).base64EncodedString()
    }
}
