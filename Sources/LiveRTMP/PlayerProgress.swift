import LiveCore

/// What a player (`RTMPPlayer`, `HTTPFLVPlayer`) shares between its loop thread and the
/// threads that read it: its state and end (the `RTMPClientLifecycle` rule), its figures,
/// and the media received against the media consumed (the buffered time). Every method
/// may be called from any thread.
final class PlayerProgress: Sendable {
    struct Shared: Sendable {
        var stats = RTMPPlayer.Stats()
        /// The newest media (video dts, audio pts) received and the newest consumed, in µs.
        var newestDTS: Int64?
        var consumedDTS: Int64?
        var rateMeter = ByteRateMeter()
    }

    let lifecycle = RTMPClientLifecycle(Shared(), state: \.stats.state)

    /// The current figures.
    var stats: RTMPPlayer.Stats {
        lifecycle.withLock { shared in
            var copy = shared.stats
            if let newestDTS = shared.newestDTS {
                copy.bufferedMilliseconds = Int(max(0, newestDTS - (shared.consumedDTS ?? newestDTS)) / 1000)
            }
            return copy
        }
    }

    /// See `RTMPPlayer.markConsumed(upTo:)`.
    func markConsumed(upTo dts: MediaTime) {
        lifecycle.withLock { $0.consumedDTS = dts.micros }
    }

    /// Media up to `micros` has been received.
    func received(upTo micros: Int64) {
        lifecycle.withLock { shared in
            shared.newestDTS = micros
            if shared.consumedDTS == nil { shared.consumedDTS = micros }
        }
    }

    /// Refreshes the figures from the connection's byte count (nil: keep the last one)
    /// and the demuxer's counts.
    func update(bytesRead: UInt64?, demuxer: FLVPlayDemuxer, now: UInt64) {
        lifecycle.withLock { shared in
            let read = bytesRead ?? shared.stats.bytesReceived
            shared.stats.receiveRate = shared.rateMeter.sample(bytes: read, at: now)
            shared.stats.bytesReceived = read
            shared.stats.videoPackets = demuxer.videoPackets
            shared.stats.audioPackets = demuxer.audioPackets
            shared.stats.ignoredAudioPackets = demuxer.ignoredAudioPackets
        }
    }

    /// Hands what the demuxer made of one payload to `onEvent` (counting the media as
    /// received first); returns the failure that must end the play, if any. `player`
    /// names the player in the warning logged for ignored audio.
    func deliver(_ output: FLVPlayDemuxer.Output, player: String, to onEvent: (@Sendable (RTMPPlayer.Event) -> Void)?)
        -> RTMPClientError?
    {
        switch output {
        case .none:
            return nil
        case .event(let event):
            if case .video(let packet) = event { received(upTo: packet.dts.micros) }
            if case .audio(let packet) = event { received(upTo: packet.pts.micros) }
            onEvent?(event)
            return nil
        case .ignored(let warning):
            if let warning { Log.warning("\(player): \(warning)") }
            return nil
        case .failure(let error):
            return error
        }
    }
}
