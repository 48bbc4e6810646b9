/// What the publisher does with each media frame, given its send queue: the drop rules
/// of the push, pure (the queue's state is an argument).
///
/// - Video starts clean: nothing before the sequence header, then nothing but a keyframe
///   until one has come (`dropBeforeStart`, not congestion).
/// - Past the bound (`queueOverBound`: the queue's media time or bytes over its cap), a
///   non-keyframe is dropped and so is every one after it until the next keyframe
///   (`dropToKeyframe`), which goes with the stale frames still queued discarded
///   (`sendDiscardingQueued`): the picture skips, it never breaks.
/// - Audio is never dropped for the bound (it is small and a gap is heard at once): only
///   a connection stalled past twice the byte cap loses it.
struct PublishGate: Sendable, Equatable {
    enum Video: Sendable, Equatable {
        /// Queue it.
        case send
        /// A keyframe after congestion: drop the video frames still queued, then queue it.
        case sendDiscardingQueued
        /// Congestion: dropped, and every non-keyframe until the next keyframe.
        case dropToKeyframe
        /// The stream has no sequence header or keyframe yet: dropped.
        case dropBeforeStart
    }

    /// True from a congestion drop until the next keyframe.
    private(set) var dropping = false
    /// No keyframe since the start (or since a frame was lost): inter frames would not decode.
    private(set) var awaitingKeyframe = true

    /// The verdict for one video frame.
    mutating func video(isKeyframe: Bool, hasSequenceHeader: Bool, queueOverBound: Bool) -> Video {
        guard hasSequenceHeader, isKeyframe || !awaitingKeyframe else { return .dropBeforeStart }
        awaitingKeyframe = false
        if isKeyframe {
            defer { dropping = false }
            return dropping || queueOverBound ? .sendDiscardingQueued : .send
        }
        guard dropping || queueOverBound else { return .send }
        dropping = true
        return .dropToKeyframe
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
