/// What the publisher does with each media frame, given its send queue: the drop rules
/// of the push, pure (the queue's state is an argument).
///
/// - Video starts clean: nothing before the sequence header, then nothing but a keyframe
///   until one has come (`dropBeforeStart`, not congestion).
/// - Past the bound (`queueOverBound`: the queue's media time or bytes over its cap, the
///   media the kernel holds unacknowledged included), video is dropped, the frames still
///   queued with it (`dropDiscardingQueued`, the start of a drop), and every frame after
///   it (`dropToKeyframe`) until the queue is back under the bound and a keyframe comes:
///   the picture skips, it never breaks. A keyframe that finds the queue still over the
///   bound goes too (it would only lengthen the queue); `wantsKeyframe` then says the
///   publisher should ask for a fresh one once the queue has drained.
/// - Audio is never dropped for the bound (it is small and a gap is heard at once): only
///   a connection stalled past twice the byte cap loses it.
struct PublishGate: Sendable, Equatable {
    enum Video: Sendable, Equatable {
        /// Queue it.
        case send
        /// The queue passed the bound: drop it and the video frames still queued.
        case dropDiscardingQueued
        /// Dropping: until the queue is under the bound and a keyframe comes.
        case dropToKeyframe
        /// The stream has no sequence header or keyframe yet: dropped.
        case dropBeforeStart
    }

    /// True from the moment the queue passed the bound until a keyframe is sent.
    private(set) var dropping = false
    /// No keyframe since the start (or since a frame was lost): inter frames would not decode.
    private(set) var awaitingKeyframe = true

    /// The verdict for one video frame.
    mutating func video(isKeyframe: Bool, hasSequenceHeader: Bool, queueOverBound: Bool) -> Video {
        guard hasSequenceHeader, isKeyframe || !awaitingKeyframe else { return .dropBeforeStart }
        if queueOverBound {
            defer { dropping = true }
            return dropping ? .dropToKeyframe : .dropDiscardingQueued
        }
        if dropping && !isKeyframe { return .dropToKeyframe }
        dropping = false
        awaitingKeyframe = false
        return .send
    }

    /// Dropping, with the queue back under the bound: only a keyframe resumes the
    /// picture, so the encoder should make one now rather than at its next interval.
    func wantsKeyframe(queueOverBound: Bool) -> Bool {
        dropping && !queueOverBound
    }

    /// A video frame never reached the queue (the loop refused it): later ones refer to
    /// it, so the stream waits for the next keyframe.
    mutating func lostFrame() {
        awaitingKeyframe = true
    }

    /// Whether an audio frame of `frameBytes` goes, with `queuedBytes` already waiting:
    /// the bound never drops audio, only twice the byte cap (a stalled connection) does.
    static func admitsAudio(frameBytes: Int, queuedBytes: Int, maxQueuedBytes: Int) -> Bool {
        queuedBytes + frameBytes <= 2 * maxQueuedBytes
    }
}
