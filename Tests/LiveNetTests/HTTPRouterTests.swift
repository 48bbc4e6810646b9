import Testing
@testable import LiveNet

@Suite("HTTPRouter")
struct HTTPRouterTests {
    static let router: HTTPRouter = {
        var router = HTTPRouter()
        router.get("/healthz") { _ in .response(.text("ok")) }
        router.get("/api/live/{id}/members") { _ in .response(.text("members")) }
        router.post("/api/live/{id}/members") { _ in .response(.text("join")) }
        router.get("/static/*") { _ in .response(.text("file")) }
        return router
    }()

    @Test("path parameters are captured")
    func parameters() {
        guard case .found(_, let parameters) = Self.router.match(method: "GET", path: "/api/live/room7/members") else {
            Issue.record("no match")
            return
        }
        #expect(parameters == ["id": "room7"])
    }

    @Test("a {name}.ext segment captures the segment without its suffix and matches only that suffix")
    func suffixParameters() {
        var router = HTTPRouter()
        router.get("/{app}/{stream}.m3u8") { _ in .response(.text("playlist")) }
        router.get("/{app}/{stream}.flv") { _ in .response(.text("flv")) }
        router.get("/{app}/{stream}/{segment}.ts") { _ in .response(.text("segment")) }
        guard case .found(let handler, let parameters) = router.match(method: "GET", path: "/live/cam.m3u8") else {
            Issue.record("no match for the playlist")
            return
        }
        #expect(parameters == ["app": "live", "stream": "cam"])
        guard case .response(let response) = handler(HTTPRequest(method: "GET", target: "/live/cam.m3u8")!) else {
            Issue.record("no response")
            return
        }
        #expect(response.body == Array("playlist".utf8))
        guard case .found(_, let flv) = router.match(method: "GET", path: "/live/a.b.flv") else {
            Issue.record("no match for the .flv")
            return
        }
        #expect(flv == ["app": "live", "stream": "a.b"])
        guard case .found(_, let segment) = router.match(method: "GET", path: "/live/cam/12.ts") else {
            Issue.record("no match for the segment")
            return
        }
        #expect(segment == ["app": "live", "stream": "cam", "segment": "12"])
        for path in ["/live/.m3u8", "/live/cam.mp4", "/live/cam", "/live/cam/12.m4s"] {
            guard case .notFound = router.match(method: "GET", path: path) else {
                Issue.record("\(path) matched")
                continue
            }
        }
    }

    @Test("a trailing * matches the rest of the path")
    func prefix() {
        guard case .found(_, let parameters) = Self.router.match(method: "GET", path: "/static/css/site.css") else {
            Issue.record("no match")
            return
        }
        #expect(parameters == ["*": "css/site.css"])
    }

    @Test("unknown paths are not found; known paths under another method are 405 with the allowed ones")
    func misses() {
        guard case .notFound = Self.router.match(method: "GET", path: "/api/live/room7") else {
            Issue.record("matched a shorter path")
            return
        }
        guard case .methodNotAllowed(let allowed) = Self.router.match(method: "DELETE", path: "/api/live/x/members") else {
            Issue.record("expected 405")
            return
        }
        #expect(allowed == ["GET", "POST"])
    }

    @Test("HEAD falls back to the GET route")
    func headFallsBackToGet() {
        guard case .found = Self.router.match(method: "HEAD", path: "/healthz") else {
            Issue.record("HEAD did not find GET /healthz")
            return
        }
        guard case .methodNotAllowed = Self.router.match(method: "PUT", path: "/healthz") else {
            Issue.record("PUT should be 405")
            return
        }
    }

    @Test("routes take no body unless they say how much; bodyRefusal names 413, 404 or 405 with Allow")
    func bodyRefusals() {
        var router = Self.router
        router.post("/upload", maxBodyBytes: 100) { _ in .response(.text("ok")) }
        #expect(router.bodyRefusal(method: "POST", path: "/upload", length: 100) == nil)
        #expect(router.bodyRefusal(method: "POST", path: "/upload", length: 101)?.status == .payloadTooLarge)
        #expect(router.bodyRefusal(method: "POST", path: "/api/live/x/members", length: 1)
                == HTTPRequestParser.Error(.payloadTooLarge, "POST /api/live/x/members takes no request body"))
        #expect(router.bodyRefusal(method: "GET", path: "/healthz", length: 1)?.status == .payloadTooLarge)
        #expect(router.bodyRefusal(method: "HEAD", path: "/healthz", length: 1)?.status == .payloadTooLarge)
        #expect(router.bodyRefusal(method: "POST", path: "/nope", length: 1)?.status == .notFound)
        let notAllowed = router.bodyRefusal(method: "PUT", path: "/healthz", length: 1)
        #expect(notAllowed?.status == .methodNotAllowed)
        #expect(notAllowed?.headers["Allow"] == "GET")
    }
}
