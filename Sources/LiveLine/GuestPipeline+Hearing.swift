import Foundation
import LiveAuth
import LiveCapture
import LiveCodec
import LiveCore
import LiveNet
import LiveRTMP
import Synchronization

extension GuestPipeline {
    /// While co-hosting (DESIGN.md §4): plays `url` (the co-host's hear stream, what the
    /// hoster sends it: everyone but itself) audio-only with a small buffer, and what the
    /// guest hears (`wavPath`, `pcmPath`, `onAudio`, the level events and figures) comes
    /// from it instead of this stream's audio, which carries the co-host's own voice,
    /// late. The recordings (`recordPath`, `outPath`) keep this stream as received, and
    /// A/V sync is still this stream's. It plays with the co-host feed's settings (100 ms
    /// buffer target, played again while it is missing). The hear stream's decoded audio crosses to this
    /// pipeline's decode thread through its queue, so every output is written by one
    /// thread. Any thread; a second call replaces the first, and a call after the run
    /// has ended does nothing.
    func startHearing(url: RTMPURL, tokenProvider: TokenProvider? = nil) {
        // The co-host feed's player: plays again, a moment apart, until stopped (the hear
        // stream starts when the hoster's mix first runs with this co-host, and may drop).
        let feed = CohostStreamFeed(url: url, tokenProvider: tokenProvider, deliver: { _ in },
                                    deliverAudio: { [weak self] frame in _ = self?.queue.push(.heard(frame)) },
                                    firstFrame: { _, _ in })
        let previous = shared.withLock { state in
            defer { state.hearPipeline = feed }
            return state.hearPipeline
        }
        previous?.stop()
        // The run has ended, or is ending (its queue closes before its hear stream
        // stops): nothing would hear it.
        if queue.isClosed { return stopHearing() }
        feed.start()
    }

    /// Back to this stream's audio for what the guest hears (hang-up, leave, line lost).
    func stopHearing() {
        let pipeline = shared.withLock { state in
            defer { state.hearPipeline = nil }
            return state.hearPipeline
        }
        pipeline?.stop()
    }

    /// True while the hear stream is what the guest hears.
    var isHearing: Bool {
        shared.withLock { $0.hearPipeline != nil }
    }
}
