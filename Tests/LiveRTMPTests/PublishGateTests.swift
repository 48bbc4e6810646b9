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

    @Test("a queue past the bound drops video, the queued frames with it, until the queue is back under the bound and a keyframe comes")
    func dropToKeyframe() {
        // Over the bound at frame 2 only: 2 starts the drop, 3 and 4 wait for a keyframe, 5 resumes.
        #expect(verdicts("KPPPPKPP", over: [2]) == [.send, .send, .dropDiscardingQueued, .dropToKeyframe, .dropToKeyframe,
                                                   .send, .send, .send])
        // A keyframe that finds the queue still over the bound goes too; the next one under it resumes.
        #expect(verdicts("KPKPKP", over: [1, 2]) == [.send, .dropDiscardingQueued, .dropToKeyframe, .dropToKeyframe,
                                                     .send, .send])
        #expect(verdicts("KPPKPP") == [.send, .send, .send, .send, .send, .send])
        // A fresh keyframe is wanted only while dropping with the queue drained.
        var gate = PublishGate()
        _ = gate.video(isKeyframe: true, hasSequenceHeader: true, queueOverBound: false)
        #expect(!gate.wantsKeyframe(queueOverBound: false))
        #expect(gate.video(isKeyframe: false, hasSequenceHeader: true, queueOverBound: true) == .dropDiscardingQueued)
        #expect(!gate.wantsKeyframe(queueOverBound: true))
        #expect(gate.wantsKeyframe(queueOverBound: false))
        #expect(gate.video(isKeyframe: true, hasSequenceHeader: true, queueOverBound: false) == .send)
        #expect(!gate.dropping && !gate.wantsKeyframe(queueOverBound: false))
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
