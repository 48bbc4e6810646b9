import Testing
@testable import LiveRTMP

@Suite("PublishGate: the push's drop rules (pure)")
struct PublishGateTests {
    /// Frames of a stream: K a keyframe, P an inter frame; `over` marks the frames that
    /// find the queue past its bound.
    private func verdicts(_ frames: String, over: Set<Int> = [], header: Bool = true) -> [PublishGate.Video] {
        var gate = PublishGate()
        return frames.enumerated().map { index, kind in
            gate.video(isKeyframe: kind == "K", hasSequenceHeader: header, queueOverBound: over.contains(index))
        }
    }

    @Test("a queue past the bound drops to the next keyframe, which goes with the stale queue discarded")
    func dropToKeyframe() {
        // The queue is over the bound at frame 2 only: 2, 3, 4 go (never a broken GOP), the keyframe at 5 clears it.
        #expect(verdicts("KPPPPKPP", over: [2]) == [.send, .send, .dropToKeyframe, .dropToKeyframe, .dropToKeyframe,
                                                   .sendDiscardingQueued, .send, .send])
        // A keyframe that finds the queue over the bound is sent, the stale frames go.
        #expect(verdicts("KPKP", over: [2]) == [.send, .send, .sendDiscardingQueued, .send])
        #expect(verdicts("KPPKPP") == [.send, .send, .send, .send, .send, .send])
    }

    @Test("a stream starts clean: nothing before the header, then nothing before a keyframe; a lost frame waits for the next")
    func cleanStart() {
        #expect(verdicts("KP", header: false) == [.dropBeforeStart, .dropBeforeStart])
        #expect(verdicts("PPKP") == [.dropBeforeStart, .dropBeforeStart, .send, .send])
        var gate = PublishGate()
        #expect(gate.video(isKeyframe: true, hasSequenceHeader: true, queueOverBound: false) == .send)
        gate.lostFrame()
        #expect(gate.video(isKeyframe: false, hasSequenceHeader: true, queueOverBound: false) == .dropBeforeStart)
        #expect(gate.video(isKeyframe: true, hasSequenceHeader: true, queueOverBound: false) == .send)
        #expect(!gate.dropping)
    }

    @Test("audio is never dropped for the bound: only past twice the byte cap (a stalled connection)", arguments: [
        (0, true), (1 << 20, true), ((2 << 20) - 300, true), ((2 << 20) - 299, false), (3 << 20, false),
    ])
    func audio(queued: Int, admitted: Bool) {
        #expect(PublishGate.admitsAudio(frameBytes: 300, queuedBytes: queued, maxQueuedBytes: 1 << 20) == admitted)
    }
}
