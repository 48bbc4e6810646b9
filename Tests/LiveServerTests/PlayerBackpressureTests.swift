import Testing
@testable import LiveServer

@Suite("PlayerBackpressure: what a slow player is sent and what it is owed")
struct PlayerBackpressureTests {
    /// A player queue that takes what `accepts` allows and records it.
    struct Queue {
        var accepts: (String) -> Bool = { _ in true }
        var writable = true
        var written: [String] = []
    }

    func deliver(_ name: String, _ kind: RelayMessage.Kind, to state: inout PlayerBackpressure, queue: inout Queue,
                 headers: [String] = ["meta", "avc"]) -> Bool
    {
        state.deliver(name, kind: kind, headers: { headers }, isWritable: { queue.writable }) { message in
            guard queue.accepts(message) else { return false }
            queue.written.append(message)
            return true
        }
    }

    @Test("headers the queue refused are sent again before the next keyframe, until every one of them was queued")
    func refusedHeadersAreOwedUntilSent() {
        var state = PlayerBackpressure(needsKeyframe: false)
        var queue = Queue()
        // The new publisher's video header is refused (the queue was full).
        queue.accepts = { _ in false }
        #expect(!deliver("avc", .videoHeader, to: &state, queue: &queue))
        #expect(state.missedHeaders && state.needsKeyframe)
        // At the next keyframe the queue takes the metadata, refuses the header again:
        // the keyframe is not sent (it would not decode) and the headers stay owed.
        queue.accepts = { $0 != "avc" }
        #expect(deliver("key1", .keyframe, to: &state, queue: &queue))
        #expect(queue.written == ["meta"])
        #expect(state.missedHeaders && state.needsKeyframe)
        // Inter frames wait for a keyframe.
        #expect(deliver("p1", .interframe, to: &state, queue: &queue))
        // Now everything fits: the headers, then the keyframe, then live frames.
        queue.accepts = { _ in true }
        #expect(!deliver("key2", .keyframe, to: &state, queue: &queue))
        #expect(!deliver("p2", .interframe, to: &state, queue: &queue))
        #expect(queue.written == ["meta", "meta", "avc", "key2", "p2"])
        #expect(!state.missedHeaders && !state.needsKeyframe)
    }

    @Test("a refused frame waits for a keyframe on a writable queue; audio goes on meanwhile, never counted")
    func refusedFrameWaitsForKeyframe() {
        var state = PlayerBackpressure(needsKeyframe: false)
        var queue = Queue()
        queue.accepts = { $0 != "p1" }
        #expect(deliver("p1", .interframe, to: &state, queue: &queue))
        #expect(state.needsKeyframe && !state.missedHeaders)
        #expect(!deliver("a1", .audio, to: &state, queue: &queue))
        #expect(deliver("p2", .interframe, to: &state, queue: &queue))
        queue.writable = false
        #expect(deliver("key1", .keyframe, to: &state, queue: &queue))
        queue.writable = true
        #expect(!deliver("key2", .keyframe, to: &state, queue: &queue))
        #expect(queue.written == ["a1", "key2"])
    }

    @Test("an audio-only stream reaches a player that joined without a keyframe (there never is one)")
    func audioOnlyNeedsNoKeyframe() {
        var state = PlayerBackpressure(needsKeyframe: true)
        var queue = Queue()
        #expect(!deliver("aac", .audioHeader, to: &state, queue: &queue))
        for index in 0..<5 { #expect(!deliver("a\(index)", .audio, to: &state, queue: &queue)) }
        #expect(queue.written == ["aac", "a0", "a1", "a2", "a3", "a4"])
    }

    @Test("audio after missed headers goes out after them; a refused audio frame is skipped and video waits")
    func audioAfterMissedHeaders() {
        var state = PlayerBackpressure(needsKeyframe: false)
        var queue = Queue()
        queue.accepts = { _ in false }
        #expect(!deliver("aac", .audioHeader, to: &state, queue: &queue))
        #expect(state.missedHeaders && state.needsKeyframe)
        // Still full: the audio frame is skipped, the headers stay owed.
        #expect(!deliver("a1", .audio, to: &state, queue: &queue, headers: ["meta", "aac"]))
        #expect(state.missedHeaders)
        queue.accepts = { _ in true }
        #expect(!deliver("a2", .audio, to: &state, queue: &queue, headers: ["meta", "aac"]))
        #expect(!state.missedHeaders && state.needsKeyframe)
        #expect(deliver("p1", .interframe, to: &state, queue: &queue))
        queue.accepts = { $0 != "a3" }
        #expect(!deliver("a3", .audio, to: &state, queue: &queue))
        #expect(!deliver("key", .keyframe, to: &state, queue: &queue))
        #expect(queue.written == ["meta", "aac", "a2", "key"])
    }

    @Test("after the publisher left, nothing of the old one's headers is owed")
    func publisherLeft() {
        var state = PlayerBackpressure(needsKeyframe: false)
        var queue = Queue()
        queue.accepts = { _ in false }
        _ = deliver("avc", .videoHeader, to: &state, queue: &queue)
        state.publisherLeft()
        queue.accepts = { _ in true }
        #expect(!deliver("key", .keyframe, to: &state, queue: &queue, headers: ["new-avc"]))
        #expect(queue.written == ["key"])
    }
}
