import Foundation
import LiveCore
import LiveNet

/// The low-latency web player: `GET /watch/{app}/{stream}` answers one HTML page with its
/// script inline (`Web/watch.html` and `Web/watch.js`, compiled into the binary with
/// SwiftPM's `embedInCode`, so nothing sits next to the binary at run time). The page
/// plays the stream's WebSocket FLV feed `/ws/{app}/{stream}` (or, with
/// `?transport=flv`, HTTP-FLV `/{app}/{stream}.flv` through `fetch()`; with
/// `?transport=hls`, the HLS playlist `/{app}/{stream}.m3u8` and its MPEG-TS segments,
/// demuxed by the page itself) with WebCodecs, shows first-frame time, glass-to-glass
/// latency from the capture-time SEI, fps, bitrate and audio level, and keeps them in
/// `window.livelineStats`. A `?token=` on the page's
/// URL is passed on to the feed, which checks it.
///
/// The page's Content-Security-Policy lets only its own script (by hash) run and lets it
/// connect only to this server, so nothing is fetched from elsewhere.
public enum WatchPage {
    /// Where the page's script goes in `watch.html`.
    static let scriptMarker = "<!-- watch.js -->"

    /// The page as served: `watch.html` with `watch.js` inline.
    static let page: (body: [UInt8], scriptHash: String) = {
        let html = String(decoding: PackageResources.watch_html, as: UTF8.self)
        let script = "\n" + String(decoding: PackageResources.watch_js, as: UTF8.self)
        precondition(html.contains(scriptMarker), "watch.html has lost its \(scriptMarker) marker")
        let page = html.replacingOccurrences(of: scriptMarker, with: "<script>\(script)</script>")
        let hash = Data(SHA256.digest(Array(script.utf8))).base64EncodedString()
        return (Array(page.utf8), hash)
    }()

    /// The policy the page runs under: its inline script by hash, its inline styles,
    /// connections (the feed) to this origin only, and media from the page's own blob: (the
    /// Media Source Extensions path).
    static var contentSecurityPolicy: String {
        "default-src 'none'; script-src 'sha256-\(page.scriptHash)'; style-src 'unsafe-inline'; "
            + "connect-src 'self'; media-src blob:; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'self'"
    }

    /// Whether `path` is the watch page's: open without a token even with auth on, since
    /// the page holds nothing of the stream (its feed checks the viewer's token).
    static func isPagePath(_ path: String) -> Bool {
        let parts = path.split(separator: "/")
        return parts.count == 3 && parts[0] == "watch"
    }

    /// Adds `GET /watch/{app}/{stream}` to `router`.
    public static func add(to router: inout HTTPRouter) {
        router.get("/watch/{app}/{stream}") { _ in .response(response()) }
    }

    /// The page's response: the same bytes for every stream (the script reads the app and
    /// stream from its own URL, so nothing from the request is written into the page).
    static func response() -> HTTPResponse {
        var response = HTTPResponse(body: page.body)
        response.headers.set("Content-Type", "text/html; charset=utf-8")
        response.headers.set("Cache-Control", "no-cache")
        response.headers.set("Content-Security-Policy", contentSecurityPolicy)
        response.headers.set("X-Content-Type-Options", "nosniff")
        response.headers.set("Referrer-Policy", "no-referrer")
        return response
    }
}
