import Foundation
import LiveAuth
import LiveCore
import LiveRTMP
import Synchronization

/// One co-host's pubId stream into the mix: plays it (RTMPPlayer + H.264 and AAC
/// decoders, the guest pipeline) and hands every decoded frame to `deliver` and every
/// decoded audio frame to `deliverAudio`, on the decode thread.
///
/// The co-host starts publishing only after it hears it was accepted, so the stream
/// may not exist yet, and it may drop and return: the feed plays it again, a short
/// pause apart, until `stop()`. Decoded frames come from the decoder's pool, so the
/// compositor may hold them without a copy.
final class CohostStreamFeed: @unchecked Sendable {
    // @unchecked: the handlers and `lastSize` are used on the decode thread only; the rest
    // is fixed, or in `state`.
    let url: RTMPURL
    private let tokenProvider: TokenProvider?
    private let deliver: (VideoFrame) -> Void
    private let deliverAudio: (AudioFrame) -> Void
    private let firstFrame: (Int, Int) -> Void
    private let resized: (Int, Int) -> Void
    /// The pipeline playing now, and whether `stop()` was called.
    private let state = Mutex<(current: GuestPipeline?, stopped: Bool)>((nil, false))
    /// The size of the last frame delivered (decode thread); nil before the first.
    private var lastSize: (width: Int, height: Int)?

    /// - Parameters:
    ///   - tokenProvider: a fresh token for each play (a relay with auth on).
    ///   - deliver: every decoded frame (decode thread).
    ///   - deliverAudio: every decoded audio frame, at the stream's rate (decode thread).
    ///   - firstFrame: the first frame's size, once (decode thread).
    ///   - resized: a later frame's size when it differs from the one before (decode thread).
    init(url: RTMPURL, tokenProvider: TokenProvider? = nil, deliver: @escaping (VideoFrame) -> Void,
         deliverAudio: @escaping (AudioFrame) -> Void = { _ in }, firstFrame: @escaping (Int, Int) -> Void,
         resized: @escaping (Int, Int) -> Void = { _, _ in }) {
        self.url = url
        self.tokenProvider = tokenProvider
        self.deliver = deliver
        self.deliverAudio = deliverAudio
        self.firstFrame = firstFrame
        self.resized = resized
    }

    func start() {
        let thread = Thread { [self] in supervise() }
        thread.name = "liveline.cohost"
        thread.start()
    }

    /// Stops playing; returns at once (the player closes on its own thread).
    func stop() {
        let pipeline = state.withLock { state in
            state.stopped = true
            return state.current
        }
        pipeline?.stop()
    }

    private var isStopped: Bool {
        state.withLock { $0.stopped }
    }

    private func supervise() {
        while !isStopped {
            var configuration = GuestPipeline.Configuration(url: url)
            // A stream that is not there yet answers with silence: give up soon and ask again.
            configuration.timeout = .seconds(2)
            configuration.reconnect.maxTries = 0
            configuration.bufferTargetMilliseconds = 100
            configuration.tokenProvider = tokenProvider
            configuration.audioLevelIntervalMilliseconds = nil
            guard let pipeline = try? GuestPipeline(configuration: configuration) else { return }
            pipeline.onFrame = { [self] frame in
                if let lastSize {
                    if lastSize != (frame.width, frame.height) { resized(frame.width, frame.height) }
                } else {
                    firstFrame(frame.width, frame.height)
                }
                lastSize = (frame.width, frame.height)
                deliver(frame)
            }
            pipeline.onAudio = deliverAudio
            let started = state.withLock { state in
                guard !state.stopped else { return false }
                state.current = pipeline
                return true
            }
            guard started else { return }
            do {
                try pipeline.start()
                _ = try? pipeline.wait()
            } catch {
                Log.warning("co-host stream \(url): \(error)")
            }
            state.withLock { $0.current = nil }
            if !isStopped { usleep(200_000) }
        }
    }
}
