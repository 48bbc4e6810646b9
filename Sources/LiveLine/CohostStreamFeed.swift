import Foundation
import LiveAuth
import LiveCore
import LiveRTMP

/// One co-host's pubId stream into the mix: plays it (RTMPPlayer + H.264 and AAC
/// decoders, the guest pipeline) and hands every decoded frame to `deliver` and every
/// decoded audio frame to `deliverAudio`, on the decode thread.
///
/// The co-host starts publishing only after it hears it was accepted, so the stream
/// may not exist yet, and it may drop and return: the feed plays it again, a short
/// pause apart, until `stop()`. Decoded frames come from the decoder's pool, so the
/// compositor may hold them without a copy.
final class CohostStreamFeed: @unchecked Sendable {
    // @unchecked: `current` and `stopped` under `lock`; the supervising thread owns the rest.
    let url: RTMPURL
    private let tokenProvider: TokenProvider?
    private let deliver: (VideoFrame) -> Void
    private let deliverAudio: (AudioFrame) -> Void
    private let firstFrame: (Int, Int) -> Void
    private let resized: (Int, Int) -> Void
    private let lock = NSLock()
    private var current: GuestPipeline?
    private var stopped = false
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
        lock.lock()
        stopped = true
        let pipeline = current
        lock.unlock()
        pipeline?.stop()
    }

    private var isStopped: Bool {
        lock.lock()
        defer { lock.unlock() }
        return stopped
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
            lock.lock()
            guard !stopped else {
                lock.unlock()
                return
            }
            current = pipeline
            lock.unlock()
            do {
                try pipeline.start()
                _ = try? pipeline.wait()
            } catch {
                Log.warning("co-host stream \(url): \(error)")
            }
            lock.lock()
            current = nil
            lock.unlock()
            if !isStopped { usleep(200_000) }
        }
    }
}
