import Testing
@testable import LiveRTMP

@Suite("RTMPURL: split as ffmpeg's rtmpproto.c splits it")
struct RTMPURLTests {
    struct Case: Sendable, CustomStringConvertible {
        var url: String, host: String, port: Int, app: String, stream: String, query: String?, tcUrl: String
        var description: String { url }
    }

    static let cases: [Case] = [
        Case(url: "rtmp://127.0.0.1/live/cam", host: "127.0.0.1", port: 1935, app: "live", stream: "cam", query: nil,
             tcUrl: "rtmp://127.0.0.1:1935/live"),
        Case(url: "rtmp://example.com:19350/live/cam?token=abc&exp=9", host: "example.com", port: 19350, app: "live",
             stream: "cam", query: "token=abc&exp=9", tcUrl: "rtmp://example.com:19350/live"),
        Case(url: "rtmp://h/live/inst/cam", host: "h", port: 1935, app: "live/inst", stream: "cam", query: nil,
             tcUrl: "rtmp://h:1935/live/inst"),
        Case(url: "rtmp://h/live/inst/a/b", host: "h", port: 1935, app: "live/inst", stream: "a/b", query: nil,
             tcUrl: "rtmp://h:1935/live/inst"),
        Case(url: "rtmp://h/vod/mp4:x/y", host: "h", port: 1935, app: "vod", stream: "mp4:x/y", query: nil,
             tcUrl: "rtmp://h:1935/vod"),
        Case(url: "RTMP://[::1]:1936/live/cam?", host: "::1", port: 1936, app: "live", stream: "cam", query: "",
             tcUrl: "rtmp://[::1]:1936/live"),
    ]

    @Test("parses", arguments: cases)
    func parses(_ c: Case) throws {
        let url = try RTMPURL(parsing: c.url)
        #expect(url.host == c.host)
        #expect(url.port == c.port)
        #expect(url.app == c.app)
        #expect(url.streamName == c.stream)
        #expect(url.query == c.query)
        #expect(url.tcUrl == c.tcUrl)
    }

    @Test("the query rides on the stream name of publish and play")
    func query() throws {
        let url = try RTMPURL(parsing: "rtmp://h/live/cam?token=abc")
        #expect(url.streamNameWithQuery == "cam?token=abc")
        #expect(RTMPURL.splitQuery("cam?token=abc&x") == ("cam", "token=abc&x"))
        #expect(RTMPURL.queryValue("token", in: "a=1&token=abc") == "abc")
        #expect(RTMPURL.queryValue("x", in: "a=1&x") == "")
        #expect(RTMPURL.queryValue("y", in: "a=1") == nil)
        // Credentials never reach logs or error messages; the rest of the query does.
        #expect(url.description == "rtmp://h:1935/live/cam?token=…")
        let cohost = try RTMPURL(parsing: "rtmp://h/live/line-x?line=SECRET&a=1&lineKey=K")
        #expect(cohost.description == "rtmp://h:1935/live/line-x?line=…&a=1&lineKey=…")
        #expect(cohost.streamNameWithQuery == "line-x?line=SECRET&a=1&lineKey=K")
    }

    @Test("rejects what is not a usable RTMP URL")
    func errors() throws {
        #expect(throws: RTMPURL.Error.unsupportedScheme("http://h/live/cam")) { try RTMPURL(parsing: "http://h/live/cam") }
        #expect(throws: RTMPURL.Error.missingHost("rtmp:///live/cam")) { try RTMPURL(parsing: "rtmp:///live/cam") }
        #expect(throws: RTMPURL.Error.portOutOfRange("rtmp://h:0/live/cam", port: "0")) { try RTMPURL(parsing: "rtmp://h:0/live/cam") }
        #expect(throws: RTMPURL.Error.portNotANumber("rtmp://h:x/live/cam", port: "x")) { try RTMPURL(parsing: "rtmp://h:x/live/cam") }
        #expect(throws: RTMPURL.Error.missingApp("rtmp://h")) { try RTMPURL(parsing: "rtmp://h") }
        #expect(throws: RTMPURL.Error.missingStreamName("rtmp://h/live")) { try RTMPURL(parsing: "rtmp://h/live") }
        #expect(throws: RTMPURL.Error.missingStreamName("rtmp://h/live/")) { try RTMPURL(parsing: "rtmp://h/live/") }
    }

    @Test("each error says what is really wrong", arguments: [
        ("rtmp://user:pw@host/live/cam", RTMPURL.Error.userInfo("rtmp://user:pw@host/live/cam"), "user name or password"),
        ("rtmp://user:pw@host:1935/live/cam", .userInfo("rtmp://user:pw@host:1935/live/cam"), "user name or password"),
        ("rtmp://host:abc/live/cam", .portNotANumber("rtmp://host:abc/live/cam", port: "abc"), "port that is not a number: 'abc'"),
        ("rtmp://host:/live/cam", .portNotANumber("rtmp://host:/live/cam", port: ""), "no port after the ':'"),
        ("rtmp://[::1]x/live/cam", .portNotANumber("rtmp://[::1]x/live/cam", port: "x"), "not a number"),
        ("rtmp://host:70000/live/cam", .portOutOfRange("rtmp://host:70000/live/cam", port: "70000"), "port 70000, outside 1…65535"),
        ("rtmp://h//cam", .missingApp("rtmp://h//cam"), "no application name"),
        ("rtmp://h/", .missingApp("rtmp://h/"), "no application name"),
        ("rtmps://h/live/cam", .unsupportedScheme("rtmps://h/live/cam"), "RTMPS"),
    ])
    func saysWhatIsWrong(text: String, error: RTMPURL.Error, message: String) throws {
        #expect(throws: error) { try RTMPURL(parsing: text) }
        #expect(error.description.contains(message), "\(error)")
        #expect(!error.description.contains("RTMPURL"), "\(error)")
    }

    @Test("an error message never shows a password or the query's secrets")
    func errorsHideCredentials() throws {
        let error = try #require(throws: RTMPURL.Error.self) { try RTMPURL(parsing: "rtmp://alice:hunter2@h/live/cam") }
        #expect(!error.description.contains("hunter2") && !error.description.contains("alice"), "\(error)")
        #expect(error.description.hasPrefix("rtmp://…@h/live/cam"), "\(error)")
        let query = try #require(throws: RTMPURL.Error.self) { try RTMPURL(parsing: "rtmp://h/live?token=SECRET&a=1") }
        #expect(query.description.hasPrefix("rtmp://h/live?token=…&a=1 has no stream name"), "\(query)")
        #expect(RTMPURL.redacted("rtmp://u@h:1/a/b?line=S") == "rtmp://…@h:1/a/b?line=…")
        #expect(RTMPURL.redacted("rtmp://h:1/call/call-R-1?call=S&token=T") == "rtmp://h:1/call/call-R-1?call=…&token=…")
    }
}
