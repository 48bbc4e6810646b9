import Foundation
import LiveAuth
import LiveCore
import LiveRTMP
import Testing

@testable import LiveLine

@Suite("StreamTokenSource: a fresh ?token= for each connect")
struct StreamTokenSourceTests {
    let url = try! RTMPURL(parsing: "rtmp://127.0.0.1:1935/live/room1?line=s&token=stale")

    @Test("the provider's token replaces the URL's, other parameters stay; each call asks again")
    func freshToken() throws {
        let calls = Calls()
        let source = StreamTokenSource(provider: {
            IssuedToken(token: "t\(calls.next())", uid: "u", expiresAt: 0)
        })
        #expect(try source.url(for: url, timeout: .seconds(5)).query == "line=s&token=t1")
        #expect(try source.url(for: url, timeout: .seconds(5)).streamNameWithQuery == "room1?line=s&token=t2")
    }

    @Test("a failing provider is a 202 naming its error; one that never answers is a 212 after the timeout")
    func failures() throws {
        struct Down: Error, CustomStringConvertible { var description: String { "token service down" } }
        let failing = StreamTokenSource(provider: { throw Down() })
        #expect(throws: LiveError(.authFailed, "the token provider failed: token service down")) {
            try failing.url(for: url, timeout: .seconds(5))
        }
        let silent = StreamTokenSource(provider: {
            try await Task.sleep(for: .seconds(30))
            return IssuedToken(token: "late", uid: "", expiresAt: 0)
        })
        let started = Date()
        #expect(throws: LiveError(.authTimeout, "the token provider gave no token within 0.2 seconds")) {
            try silent.url(for: url, timeout: .milliseconds(200))
        }
        #expect(Date().timeIntervalSince(started) < 2)
    }
}

/// A call counter the provider closure can share.
private final class Calls: @unchecked Sendable {
    // @unchecked: `count` is touched only under `lock`.
    private let lock = NSLock()
    private var count = 0

    func next() -> Int {
        lock.lock()
        defer { lock.unlock() }
        count += 1
        return count
    }
}
