/// The relay's drop policy for one player, without the socket (see `RTMPServerSession`):
/// a refused or skipped message puts the player in "wait for a keyframe"; it then gets
/// no video until a keyframe arrives while its queue is writable, and before that
/// keyframe every header it missed. Headers count as missed until every one of them
/// was queued, so a player never gets a keyframe its decoder cannot configure for.
///
/// Audio never waits for a keyframe: it is small, the ear notices its gaps first, and
/// an audio-only stream has no keyframes at all. An audio frame the queue refuses is
/// skipped (and video waits for a keyframe); one that follows missed headers is sent
/// after them, so its decoder is configured too.
///
/// Pure value, generic over the message so it is tested with plain values; the
/// session keeps one per playback on its loop thread.
struct PlayerBackpressure {
    /// No media until a keyframe (the player fell behind or joined without one).
    var needsKeyframe = true
    /// A header was refused: the stream's headers go out again before the next keyframe.
    var missedHeaders = false

    /// Delivers one message of `kind` through `write` (false: the queue refused it),
    /// with `headers` the stream's current metadata and sequence headers. Returns true
    /// when a video frame was dropped (the caller counts it).
    mutating func deliver<Message>(_ message: Message, kind: RelayMessage.Kind, headers: () -> [Message],
                                   isWritable: () -> Bool, write: (Message) -> Bool) -> Bool
    {
        if kind.isHeader {
            if !write(message) {
                missedHeaders = true
                needsKeyframe = true
            }
            return false
        }
        if kind == .audio {
            if missedHeaders {
                guard isWritable(), sendHeaders(headers(), write: write) else { return false }
            }
            if !write(message) { needsKeyframe = true }
            return false
        }
        if needsKeyframe {
            guard kind == .keyframe, isWritable() else { return kind.isVideoFrame }
            if missedHeaders, !sendHeaders(headers(), write: write) { return true }
            guard write(message) else { return true }
            needsKeyframe = false
            return false
        }
        if !write(message) {
            needsKeyframe = true
            return kind.isVideoFrame
        }
        return false
    }

    /// Queues every header; clears `missedHeaders` when all were taken.
    private mutating func sendHeaders<Message>(_ headers: [Message], write: (Message) -> Bool) -> Bool {
        for header in headers where !write(header) { return false }
        missedHeaders = false
        return true
    }

    /// Messages never reached this player: nothing more until a keyframe, with the
    /// headers again before it (one of the lost messages may have been a header).
    mutating func lostMessages() {
        needsKeyframe = true
        missedHeaders = true
    }

    /// The publisher left on purpose: wait for the next one's keyframe; its own
    /// headers come first, so nothing missed from the old one is owed.
    mutating func publisherLeft() {
        needsKeyframe = true
        missedHeaders = false
    }
}
