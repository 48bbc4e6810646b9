import Foundation
import Testing
@testable import LiveRTMP

@Suite("RTMPClientLifecycle")
struct RTMPClientLifecycleTests {
    enum State: RTMPClientState {
        case idle, running, closed, failed
    }

    struct Figures {
        var state = State.idle
        var count = 0
    }

    private static let refused = RTMPClientError.timedOut(url: "rtmp://a/b", what: "connect")
    private static let lost = RTMPClientError.timedOut(url: "rtmp://a/b", what: "play")

    private func makeLifecycle() -> RTMPClientLifecycle<Figures, State> {
        RTMPClientLifecycle(Figures(), state: \.state)
    }

    @Test("state moves freely until the end")
    func movesBeforeEnd() {
        let lifecycle = makeLifecycle()
        lifecycle.setState(.running)
        #expect(lifecycle.state == .running)
        lifecycle.setState(.idle)
        #expect(lifecycle.state == .idle)
        #expect(lifecycle.error == nil)
    }

    @Test("the first failure is final: later failures, closes and state changes are ignored")
    func failureIsFinal() {
        let lifecycle = makeLifecycle()
        lifecycle.setState(.running)
        let first = lifecycle.fail(Self.refused)
        #expect(first)
        let second = lifecycle.fail(Self.lost)
        #expect(!second)
        let closed = lifecycle.finishClosed()
        #expect(!closed)
        lifecycle.setState(.running)
        #expect(lifecycle.state == .failed)
        #expect(lifecycle.error == Self.refused)
    }

    @Test("a close is final: a later failure is ignored and leaves no error")
    func closeIsFinal() {
        let lifecycle = makeLifecycle()
        let first = lifecycle.finishClosed()
        #expect(first)
        let again = lifecycle.finishClosed()
        #expect(!again)
        let failed = lifecycle.fail(Self.lost)
        #expect(!failed)
        lifecycle.setState(.running)
        #expect(lifecycle.state == .closed)
        #expect(lifecycle.error == nil)
    }

    @Test("figures change under the lock without touching the state")
    func figures() {
        let lifecycle = makeLifecycle()
        lifecycle.setState(.running)
        lifecycle.withLock { $0.count += 3 }
        let figures = lifecycle.withLock { $0 }
        #expect(figures.count == 3)
        #expect(figures.state == .running)
    }

    @Test("a wait that runs out reports the state it stopped in")
    func waitRunsOut() {
        let lifecycle = makeLifecycle()
        lifecycle.setState(.running)
        let end = lifecycle.wait(while: { $0 == .running }, timeout: .zero)
        #expect(end.state == .running)
        #expect(end.failure == nil)
        let ended = lifecycle.waitUntilEnded(timeout: .zero)
        #expect(!ended)
    }

    @Test("a waiter wakes when another thread ends the client")
    func waiterWakes() {
        let lifecycle = makeLifecycle()
        lifecycle.setState(.running)
        let thread = Thread { _ = lifecycle.fail(Self.refused) }
        thread.start()
        let end = lifecycle.wait(while: { !$0.hasEnded }, timeout: .seconds(30))
        #expect(end.state == .failed)
        #expect(end.failure == Self.refused)
        let ended = lifecycle.waitUntilEnded(timeout: .seconds(30))
        #expect(ended)
    }
}
