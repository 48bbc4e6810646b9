import Foundation
import LiveCapture
import LiveCodec
import LiveCore
import LiveFilter

/// The hoster's media pipeline (DESIGN.md §2):
///
///     source ─► filters ─► [mix stage] ─► queue ─► (swscale) ─► H.264 encoder ─► sinks
///     └───────── capture thread ─────────┘         └────────── encode thread ──────────┘
///
/// The queue between the threads holds a few frames and drops the oldest when the
/// encoder falls behind (a live stream wants the newest picture; drops are counted).
/// Sinks (recording, RTMP publisher) run on the encode thread.
public final class HosterPipeline: @unchecked Sendable {
    /// A stage between the filters and the encoder (the mix compositor), on the capture thread.
    public typealias FrameStage = (VideoFrame) -> VideoFrame

    /// The source capture started with; `switchSource` replaces it at run time.
    public let source: VideoSource
    public let filters: FilterChain
    public let encoder: H264Encoder
    private var sinks: [EncodedVideoSink] = []
    private let frames: BoundedQueue<VideoFrame>
    private let scaler = Scaler()
    private let pool: FramePool
    private var mixStage: FrameStage?
    private var endHandlers: [() -> Void] = []

    private let lock = NSLock()
    private var _stats = PipelineStats()
    private var captureThread: Thread?
    private var encodeThread: Thread?
    private let finished = RunEnd()
    private var stopRequested = false
    private var _error: Error?
    private var pendingSource: VideoSource?
    private var videoEnabled = true
    private let blackPool: FramePool

    /// - Parameters:
    ///   - frameLimit: stop after this many frames (a `--duration`), nil for no end.
    ///   - queueCapacity: frames the capture→encode queue holds before dropping the oldest.
    public init(source: VideoSource, filters: FilterChain, encoder: H264Encoder, queueCapacity: Int = 4,
                dropPolicy: DropPolicy = .dropOldest) {
        self.source = source
        self.filters = filters
        self.encoder = encoder
        frames = BoundedQueue(capacity: queueCapacity, policy: dropPolicy)
        pool = FramePool(width: encoder.config.width, height: encoder.config.height)
        blackPool = FramePool(width: encoder.config.width, height: encoder.config.height, capacity: 2)
    }

    /// Captures from `next` from the next frame on (seed: switchCamera); the old source
    /// is stopped on the capture thread. Timestamps continue where the old source left
    /// off. Any thread.
    public func switchSource(to next: VideoSource) {
        lock.lock()
        pendingSource = next
        lock.unlock()
    }

    /// Off: the stream goes on with one black frame a second instead of the picture, so
    /// players neither stall nor time out (seed: setLocalVideoEnable). Any thread.
    public func setVideoEnabled(_ enabled: Bool) {
        lock.lock()
        videoEnabled = enabled
        lock.unlock()
    }

    /// Whether the picture is sent (see `setVideoEnabled`).
    public var isVideoEnabled: Bool {
        lock.lock()
        defer { lock.unlock() }
        return videoEnabled
    }

    /// Runs `handler` on the capture thread once capture has ended; call before `start`.
    public func onEnd(_ handler: @escaping () -> Void) { endHandlers.append(handler) }

    /// Adds a sink; call before `start`.
    public func addSink(_ sink: EncodedVideoSink) { sinks.append(sink) }

    /// Sets the stage between filters and encoder; nil removes it (no cost then).
    public func setMixStage(_ stage: FrameStage?) {
        lock.lock()
        mixStage = stage
        lock.unlock()
    }

    public var stats: PipelineStats {
        lock.lock()
        defer { lock.unlock() }
        var copy = _stats
        copy.dropped = frames.dropped
        return copy
    }

    /// The first error that stopped the pipeline, if any.
    public var error: Error? {
        lock.lock()
        defer { lock.unlock() }
        return _error
    }

    /// Starts capture and encoding; returns at once. `frameLimit` ends the run after
    /// that many captured frames.
    public func start(frameLimit: Int? = nil) throws {
        for sink in sinks { try sink.open(stream: encoder.streamInfo) }
        try source.start()
        let capture = Thread { [self] in captureLoop(frameLimit: frameLimit) }
        capture.name = "liveline.capture"
        let encode = Thread { [self] in encodeLoop() }
        encode.name = "liveline.encode"
        captureThread = capture
        encodeThread = encode
        encode.start()
        capture.start()
    }

    /// Asks the pipeline to end: capture stops, queued frames are encoded, sinks closed.
    public func stop() {
        lock.lock()
        stopRequested = true
        lock.unlock()
    }

    /// Waits until the pipeline has ended (frame limit, end of source, stop or error).
    /// Throws the error that ended it.
    public func wait() throws {
        finished.wait()
        if let error { throw error }
    }

    /// Waits up to `seconds`; true when the pipeline has ended (throws its error then).
    public func wait(seconds: Double) throws -> Bool {
        guard finished.wait(seconds: seconds) else { return false }
        if let error { throw error }
        return true
    }

    private var shouldStop: Bool {
        lock.lock()
        defer { lock.unlock() }
        return stopRequested
    }

    private func fail(_ error: Error) {
        lock.lock()
        if _error == nil { _error = error }
        stopRequested = true
        lock.unlock()
    }

    private func captureLoop(frameLimit: Int?) {
        var current = source
        defer {
            current.stop()
            endHandlers.forEach { $0() }
            frames.close()
        }
        var count = 0
        // A switched source counts its pts from zero: shift them past the last one sent.
        var ptsShift: Int64 = 0
        var lastPts: Int64?
        var lastBlackMicros: UInt64?
        while !shouldStop, frameLimit.map({ count < $0 }) ?? true {
            lock.lock()
            let replacement = pendingSource
            pendingSource = nil
            let enabled = videoEnabled
            lock.unlock()
            if let replacement {
                do {
                    try replacement.start()
                    current.stop()
                    current = replacement
                    if let lastPts { ptsShift = lastPts + 1_000_000 / Int64(max(1, encoder.config.fps)) }
                } catch {
                    Log.warning("switching source to \(replacement.name) failed: \(error)")
                }
            }
            let t0 = Clock.monotonicMicros()
            let next: VideoFrame?
            do {
                next = try current.nextFrame()
            } catch {
                fail(error)
                return
            }
            guard var frame = next else { return }
            if ptsShift != 0 {
                if replacement != nil { ptsShift -= frame.pts.micros }
                frame.pts = MediaTime(micros: frame.pts.micros + ptsShift)
            }
            lastPts = frame.pts.micros
            count += 1
            if !enabled {
                // The source keeps running (and pacing) so the picture returns at once.
                let now = Clock.monotonicMicros()
                guard lastBlackMicros.map({ now - $0 >= 1_000_000 }) ?? true else { continue }
                lastBlackMicros = now
                let black = blackPool.acquire()
                black.fill(.black)
                black.pts = frame.pts
                black.captureTimeMicros = frame.captureTimeMicros
                lock.lock()
                _stats.captured += 1
                lock.unlock()
                frames.push(black)
                continue
            }
            lastBlackMicros = nil
            let t1 = Clock.monotonicMicros()
            frame = filters.process(frame)
            let t2 = Clock.monotonicMicros()
            lock.lock()
            let stage = mixStage
            lock.unlock()
            if let stage { frame = stage(frame) }
            let t3 = Clock.monotonicMicros()
            lock.lock()
            _stats.captured += 1
            _stats.sourceMicros += t1 - t0
            _stats.filterMicros += t2 - t1
            _stats.mixMicros += t3 - t2
            lock.unlock()
            frames.push(frame)
        }
    }

    private func encodeLoop() {
        defer { finished.signal() }
        do {
            while let input = frames.pop() {
                let t0 = Clock.monotonicMicros()
                let frame = try fitted(input)
                let packets = try encoder.encode(frame)
                let t1 = Clock.monotonicMicros()
                try deliver(packets, encodeMicros: t1 - t0, frames: 1)
            }
            try deliver(try encoder.flush(), encodeMicros: 0, frames: 0)
            for sink in sinks { try sink.close() }
        } catch {
            fail(error)
            frames.close()
            for sink in sinks { try? sink.close() }
        }
    }

    /// The frame at the encoder's size (sources normally deliver it already).
    private func fitted(_ frame: VideoFrame) throws -> VideoFrame {
        let config = encoder.config
        guard frame.width != config.width || frame.height != config.height else { return frame }
        let out = pool.acquire()
        try scaler.scale(frame, into: out, mode: .aspectFit)
        out.pts = frame.pts
        out.captureTimeMicros = frame.captureTimeMicros
        return out
    }

    private func deliver(_ packets: [EncodedVideoPacket], encodeMicros: UInt64, frames count: Int) throws {
        for packet in packets {
            for sink in sinks { try sink.write(packet) }
        }
        lock.lock()
        _stats.encoded += count
        _stats.encodeMicros += encodeMicros
        _stats.bytes += packets.reduce(0) { $0 + $1.data.count }
        _stats.keyframes += packets.filter(\.isKeyframe).count
        _stats.bitrateKbps = encoder.bitrateKbps
        lock.unlock()
    }
}
