import Testing
@testable import LiveRTMP

@Suite("HTTP-FLV URL")
struct HTTPFLVURLTests {
    @Test("host, port (80 by default), path and query; the request target and Host header")
    func parts() throws {
        let url = try HTTPFLVURL(parsing: "http://127.0.0.1:8080/live/x.flv?token=abc&x=1")
        #expect(url.host == "127.0.0.1" && url.port == 8080 && url.path == "/live/x.flv" && url.query == "token=abc&x=1")
        #expect(url.target == "/live/x.flv?token=abc&x=1")
        #expect(url.hostHeader == "127.0.0.1:8080")
        #expect(url.description == "http://127.0.0.1:8080/live/x.flv?token=…&x=1")
        let plain = try HTTPFLVURL(parsing: "HTTP://[::1]/live/x.flv#frag")
        #expect(plain.host == "::1" && plain.port == 80 && plain.query == nil && plain.path == "/live/x.flv")
        #expect(plain.hostHeader == "[::1]")
    }

    @Test("what cannot be played says why", arguments: [
        ("https://h/live/x.flv", "HTTPS is not supported"),
        ("ftp://h/live/x.flv", "does not start with http://"),
        ("http:///live/x.flv", "has no host"),
        ("http://u:secret@h/live/x.flv", "user name or password"),
        ("http://h:99999/live/x.flv", "outside 1…65535"),
        ("http://h:x/live/x.flv", "not a number"),
        ("http://h", "has no path"),
        ("http://h/", "has no path"),
        ("http://h/live/a b.flv", "percent-encode"),
    ])
    func errors(text: String, message: String) {
        #expect {
            _ = try HTTPFLVURL(parsing: text)
        } throws: { error in
            "\(error)".contains(message) && !"\(error)".contains("secret")
        }
    }

    @Test("PlayURL: rtmp:// and http:// each to their own parser; the token goes on the query of either")
    func playURL() throws {
        #expect(try PlayURL(parsing: "rtmp://h/live/x") == .rtmp(RTMPURL(host: "h", app: "live", streamName: "x")))
        var http = try PlayURL(parsing: "http://h/live/x.flv")
        #expect(http == .httpFLV(HTTPFLVURL(host: "h", path: "/live/x.flv")))
        http.query = "token=t"
        #expect(http.description == "http://h/live/x.flv?token=…")
    }
}
