import LiveCore
import Testing
@testable import LiveSignal

@Suite("Line messages as JSON (pure)")
struct LineJSONTests {
    @Test("a request and an event survive the round trip; nil fields are left out; keys are sorted")
    func roundTrip() throws {
        let request = LineRequest(op: .create, id: 7, liveId: "room", userId: "host", userData: "{\"a\":1}", maxCohosts: 2, audioLine: true)
        #expect(request.jsonText == #"{"audioLine":true,"id":7,"liveId":"room","maxCohosts":2,"op":"create","userData":"{\"a\":1}","userId":"host"}"#)
        #expect(try LineRequest.parse(request.jsonText).get() == request)
        let event = LineEvent(.applicationResult, code: .lineFull, peerId: "p1", publishQuery: "line=a/b")
        #expect(event.jsonText == #"{"code":602,"event":"applicationResult","peerId":"p1","publishQuery":"line=a/b"}"#)
        #expect(LineEvent.parse(event.jsonText) == event)
        #expect(LineEvent.parse(event.jsonText)?.liveCode == .lineFull)
    }

    @Test("a malformed request is refused with code 4 and a reason, keeping its id when it can be read")
    func malformedRequests() {
        let cases: [(text: String, id: Int?, reason: String)] = [
            (#"{"op":"fly","id":3}"#, 3, "unknown op 'fly'"),
            (#"{"op":"join","id":4,"liveId":5}"#, 4, "malformed 'join' request"),
            ("not json", nil, "not a line request (a JSON object with \"op\")"),
            (#"{"id":9}"#, 9, "not a line request (a JSON object with \"op\")"),
            (#"{"op":"create","audioLine":"yes"}"#, nil, "malformed 'create' request"),
        ]
        for (text, id, reason) in cases {
            guard case .failure(let refusal) = LineRequest.parse(text) else {
                Issue.record("\(text) was accepted")
                continue
            }
            #expect(refusal == LineRefusal(code: .invalidParams, message: reason, id: id), "\(text)")
        }
    }

    @Test("an event the client cannot read is nil, not a crash; unknown fields are ignored")
    func clientSideParsing() {
        #expect(LineEvent.parse("[]") == nil)
        #expect(LineEvent.parse(#"{"event":"somethingNew"}"#) == nil)
        #expect(LineEvent.parse(#"{"event":"memberCount","total":3,"extra":true}"#) == LineEvent(.memberCount, total: 3))
    }

    @Test("the strict JSON check: RFC 8259 values pass, near misses fail")
    func strictJSON() {
        for good in ["0", "-0.5", "1E+2", "\"a\\\"\\n\\u0041\"", "{\"a\":{\"b\":[1,{}]}}", " [ ] ", "true", "null"] {
            #expect(LineJSONValidator.isStrict(good), "\(good)")
        }
        for bad in ["", "01", "1.", ".5", "-", "1e", "\"\\x\"", "\"\\u12\"", "\"open", "[1,]", "{\"a\"}", "{1:2}", "tru", "[1]x", "+1", "\u{FEFF}1"] {
            #expect(!LineJSONValidator.isStrict(bad), "\(bad)")
        }
        #expect(LineJSONValidator.isStrict(String(repeating: "[", count: 32) + String(repeating: "]", count: 32)))
        #expect(!LineJSONValidator.isStrict(String(repeating: "[", count: 33) + String(repeating: "]", count: 33)))
    }

    @Test("stream names and queries: the hear suffix, query values, random tokens")
    func streams() {
        #expect("line-abc" + LineStreams.hearSuffix == "line-abc.hear")
        #expect(LineStreams.queryValue("lineKey", in: "a=1&lineKey=XYZ") == "XYZ")
        #expect(LineStreams.queryValue("line", in: "lineKey=XYZ") == nil)
        #expect(LineStreams.queryValue("line", in: nil) == nil)
        let a = LineStreams.randomToken(24), b = LineStreams.randomToken(24)
        #expect(a != b)
        #expect(a.count == 32)
        #expect(a.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" })
    }
}
