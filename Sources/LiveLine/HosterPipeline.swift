import Foundation
import LiveCapture
import LiveCodec
import LiveCore
import LiveFilter

/// The hoster's media pipeline (DESIGN.md §2):
///
///     source ─► filters ─► [mix stage] ─► queue ─► (swscale) ─► H.264 encoder ─► sinks
///     └───────── capture thread ─────────┘         └────────── encode thread ──────────┘
///     audio source ─► [mute] ─► [audio stage] ─► level ─► AAC encoder ─► sinks
///     └──────────────────────────── audio thread ───────────────────────────┘
///
/// The queue between the threads holds a few frames and drops the oldest when the
/// encoder falls behind (a live stream wants the newest picture; drops are counted).
/// Sinks (recording, RTMP publisher) get video on the encode thread and audio on the
/// audio thread; they are opened before and closed after both.
///
/// Audio and video share one capture clock: both sources start at the same instant
/// and count their pts from 0, so a sink lines them up by timestamp alone. Switching
/// the video source leaves audio untouched. Without a video source (the anyRTC SDK's
/// audio live mode) there is no capture or encode thread at all, only the audio thread.
public final class HosterPipeline: @unchecked Sendable {
    // @unchecked: what is set "before `start`" stays fixed while the threads run; the rest
    // is touched only under `lock` or on the one thread that owns it (capture, encode, audio).
    /// A stage between the filters and the encoder (the mix compositor), on the capture thread.
    public typealias FrameStage = (VideoFrame) -> VideoFrame
    /// A stage between the audio source and the AAC encoder (the co-hosts' voices mixed
    /// in), on the audio thread.
    public typealias AudioStage = (AudioFrame) -> AudioFrame

    /// The video source capture started with (nil: audio only); `switchSource` replaces it at run time.
    public let source: VideoSource?
    public let filters: FilterChain
    /// The H.264 encoder; nil for an audio-only pipeline.
    public let encoder: H264Encoder?
    /// The sound and its encoder, when the stream has audio.
    public private(set) var audioSource: AudioSource?
    public private(set) var audioEncoder: AACEncoder?
    private var sinks: [EncodedVideoSink] = []
    private let frames: BoundedQueue<VideoFrame>
    private let scaler = Scaler()
    private let pool: FramePool?
    private var mixStage: FrameStage?
    private var audioStage: AudioStage?
    private var endHandlers: [() -> Void] = []
    private var audioEnabled = true
    /// Each captured frame with its source (see `onSourceFrame`).
    private var sourceFrameHandler: ((VideoFrame, VideoSource) -> Void)?
    /// Local level reports (see `onAudioLevel`).
    private var levelHandler: ((Int) -> Void)?
    private var levelIntervalMicros: UInt64 = 500_000
    /// Threads still running; the last one closes the sinks.
    private var runningWorkers = 0
    private var audioThread: Thread?
    private var _captureZeroWallMicros: UInt64?

    private let lock = NSLock()
    private var _stats = PipelineStats()
    private var captureThread: Thread?
    private var encodeThread: Thread?
    private let finished = RunEnd()
    private var stopRequested = false
    private var _error: Error?
    private var pendingSource: VideoSource?
    private var videoEnabled = true
    private let blackPool: FramePool?

    /// - Parameters:
    ///   - queueCapacity: frames the capture→encode queue holds before dropping the oldest.
    public init(source: VideoSource, filters: FilterChain, encoder: H264Encoder, queueCapacity: Int = 4,
                dropPolicy: DropPolicy = .dropOldest) {
        self.source = source
        self.filters = filters
        self.encoder = encoder
        frames = BoundedQueue(capacity: queueCapacity, policy: dropPolicy)
        pool = FramePool(width: encoder.config.width, height: encoder.config.height)
        blackPool = FramePool(width: encoder.config.width, height: encoder.config.height, capacity: queueCapacity + 2)
    }

    /// An audio-only pipeline (the anyRTC SDK's ARLivingMediaModeAudio): no picture,
    /// no capture or encode thread, only the audio thread.
    public init(audioSource: AudioSource, audioEncoder: AACEncoder) {
        source = nil
        filters = FilterChain()
        encoder = nil
        self.audioSource = audioSource
        self.audioEncoder = audioEncoder
        frames = BoundedQueue(capacity: 1, policy: .dropOldest)
        pool = nil
        blackPool = nil
    }

    /// Gives the stream a sound track from `source`, encoded by `encoder` (which must
    /// take the source's rate and channels); call before `start`.
    public func setAudio(source: AudioSource, encoder: AACEncoder) {
        audioSource = source
        audioEncoder = encoder
    }

    /// Off: the audio track goes on with digital silence in place of the source's
    /// sound (the anyRTC SDK's setLocalAudioEnable), and `onAudioLevel` is quiet. Silence rather
    /// than a gap: players and ffmpeg see one continuous track (no underrun, no
    /// resync), A/V sync holds, and the AAC encoder's input stays continuous, as its
    /// timing counts samples. The source keeps running so the sound returns at once.
    /// Any thread.
    public func setAudioEnabled(_ enabled: Bool) {
        lock.lock()
        audioEnabled = enabled
        lock.unlock()
    }

    /// Whether the source's sound is sent (see `setAudioEnabled`).
    public var isAudioEnabled: Bool {
        lock.lock()
        defer { lock.unlock() }
        return audioEnabled
    }

    /// Sets the stage between the audio source and the AAC encoder; nil removes it (no
    /// cost then). Its output must keep the frame's rate, channels and length.
    public func setAudioStage(_ stage: AudioStage?) {
        lock.lock()
        audioStage = stage
        lock.unlock()
    }

    /// Reports the local audio level, 0–100 (`AudioLevel`), of the sound about to be
    /// encoded (after the audio stage), at most once per `intervalMilliseconds` (the
    /// anyRTC SDK's onRTCLocalAudioActive with its showTime): the loudest 10 ms block of
    /// the interval. Nothing while audio is off. Called on the audio thread; set before
    /// `start`.
    public func onAudioLevel(every intervalMilliseconds: Int, _ handler: ((Int) -> Void)?) {
        levelIntervalMicros = UInt64(max(1, intervalMilliseconds)) * 1000
        levelHandler = handler
    }

    /// Shows every captured frame, as the source delivered it, with that source, on the
    /// capture thread before anything else sees it (the local picture's size); set before `start`.
    func onSourceFrame(_ handler: @escaping (VideoFrame, VideoSource) -> Void) {
        sourceFrameHandler = handler
    }

    /// Captures from `next` from the next frame on (the anyRTC SDK's switchCamera); the old source
    /// is stopped on the capture thread. Timestamps continue where the old source left
    /// off. Any thread.
    public func switchSource(to next: VideoSource) {
        lock.lock()
        pendingSource = next
        lock.unlock()
    }

    /// Off: a black picture stands in for the source's, at the source's rate, before the
    /// mix stage (so co-hosts stay visible in the mix) and without the filters; players
    /// neither stall nor time out (the anyRTC SDK's setLocalVideoEnable). Any thread.
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

    /// The wall-clock time (µs since 1970) of the capture clock's zero: when the sources
    /// started, the instant of video frame 0 and audio sample 0. Nil before `start`.
    public var captureZeroWallMicros: UInt64? {
        lock.lock()
        defer { lock.unlock() }
        return _captureZeroWallMicros
    }

    /// The first error that stopped the pipeline, if any.
    public var error: Error? {
        lock.lock()
        defer { lock.unlock() }
        return _error
    }

    /// Starts capture and encoding; returns at once. `frameLimit` ends the run after
    /// that many captured video frames; `audioLimit`, once the audio reaches that time
    /// (an audio-only run's `--duration`). With video, the audio ends with it.
    public func start(frameLimit: Int? = nil, audioLimit: MediaTime? = nil) throws {
        precondition(source != nil || audioSource != nil, "a pipeline needs a video or an audio source")
        var opened: [EncodedVideoSink] = []
        do {
            for sink in sinks {
                try sink.open(video: encoder?.streamInfo, audio: audioEncoder?.streamInfo)
                opened.append(sink)
            }
        } catch {
            for sink in opened { try? sink.close() }
            throw error
        }
        // Both sources start together: their pts count from this instant.
        do {
            try source?.start()
            try audioSource?.start()
            lock.lock()
            _captureZeroWallMicros = Clock.wallMicros()
            lock.unlock()
        } catch {
            source?.stop()
            for sink in sinks { try? sink.close() }
            throw error
        }
        var threads: [Thread] = []
        if source != nil {
            let capture = Thread { [self] in captureLoop(frameLimit: frameLimit) }
            capture.name = "liveline.capture"
            let encode = Thread { [self] in encodeLoop() }
            encode.name = "liveline.encode"
            captureThread = capture
            encodeThread = encode
            threads += [encode, capture]
        }
        if audioSource != nil, audioEncoder != nil {
            // The sound and its encoder are read on the thread: they stay set once started.
            let audio = Thread { [self] in
                guard let audioSource, let audioEncoder else { return }
                audioLoop(audioSource, audioEncoder, limit: audioLimit)
            }
            audio.name = "liveline.audio"
            audioThread = audio
            threads.append(audio)
        }
        lock.lock()
        runningWorkers = (source != nil ? 1 : 0) + (audioSource != nil ? 1 : 0)
        lock.unlock()
        threads.forEach { $0.start() }
    }

    /// `start` on a thread of its own, so the caller never waits for the sinks to open
    /// (an RTMP connect may take up to its timeout): returns at once. A failure to open a
    /// sink or start a source ends the run with that error (`wait` throws it); a `stop`
    /// asked for while opening ends the run as soon as the opening is over.
    func startInBackground(frameLimit: Int? = nil, audioLimit: MediaTime? = nil) {
        let starter = Thread { [self] in
            do {
                try start(frameLimit: frameLimit, audioLimit: audioLimit)
            } catch {
                fail(error)
                endHandlers.forEach { $0() }
                finished.signal()
            }
        }
        starter.name = "liveline.start"
        starter.start()
    }

    /// True once the run has ended (or never started because its start failed).
    var hasEnded: Bool { finished.wait(seconds: 0) }

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
        guard var current = source, let encoder else { return }
        defer {
            current.stop()
            endHandlers.forEach { $0() }
            frames.close()
            // The audio ends with the picture.
            lock.lock()
            stopRequested = true
            lock.unlock()
        }
        var count = 0
        // A switched source counts its pts from zero: shift them past the last one sent.
        var ptsShift: Int64 = 0
        var lastPts: Int64?
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
            sourceFrameHandler?(frame, current)
            if ptsShift != 0 {
                if replacement != nil { ptsShift -= frame.pts.micros }
                frame.pts = MediaTime(micros: frame.pts.micros + ptsShift)
            }
            lastPts = frame.pts.micros
            count += 1
            let t1 = Clock.monotonicMicros()
            if !enabled, let blackPool {
                // The source keeps running (and pacing) so the picture returns at once;
                // the blank stands in for this hoster's own picture only: the mix stage
                // still draws the co-hosts, at the source's rate.
                let black = blackPool.acquire()
                black.fill(.black)
                black.pts = frame.pts
                black.captureTimeMicros = frame.captureTimeMicros
                frame = black
            } else {
                frame = filters.process(frame)
            }
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
        guard let encoder else { return }
        defer { workerEnded() }
        do {
            while let input = frames.pop() {
                let t0 = Clock.monotonicMicros()
                let frame = try fitted(input, encoder: encoder)
                let packets = try encoder.encode(frame)
                let t1 = Clock.monotonicMicros()
                try deliver(packets, encoder: encoder, encodeMicros: t1 - t0, frames: 1)
            }
            try deliver(try encoder.flush(), encoder: encoder, encodeMicros: 0, frames: 0)
        } catch {
            fail(error)
            frames.close()
        }
    }

    /// The audio thread: 10 ms blocks from the source, muted or not, through the stage,
    /// metered, encoded and handed to the sinks.
    private func audioLoop(_ source: AudioSource, _ encoder: AACEncoder, limit: MediaTime?) {
        defer {
            source.stop()
            if self.source == nil { endHandlers.forEach { $0() } }
            workerEnded()
        }
        var loudest = 0
        var lastReport: UInt64?
        do {
            while !shouldStop {
                guard var frame = try source.nextFrame() else { break }
                if let limit, frame.pts >= limit { break }
                lock.lock()
                let enabled = audioEnabled
                let stage = audioStage
                lock.unlock()
                if !enabled {
                    // Silence with the source's timing (see `setAudioEnabled`).
                    frame = AudioFrame(sampleRate: frame.sampleRate, channelCount: frame.channelCount,
                                       sampleCount: frame.sampleCount, pts: frame.pts)
                }
                if let stage { frame = stage(frame) }
                if enabled, let levelHandler {
                    loudest = max(loudest, AudioLevel.of(frame.samples))
                    let now = Clock.monotonicMicros()
                    if lastReport.map({ now - $0 >= levelIntervalMicros }) ?? true {
                        levelHandler(loudest)
                        loudest = 0
                        lastReport = now
                    }
                } else if !enabled {
                    loudest = 0
                }
                let packets = try encoder.encode(frame)
                try deliver(audio: packets, captured: 1)
            }
            try deliver(audio: try encoder.flush(), captured: 0)
        } catch {
            fail(error)
        }
    }

    /// A capture/encode or audio thread has ended; the last one closes the sinks and
    /// ends the run.
    private func workerEnded() {
        lock.lock()
        runningWorkers -= 1
        let last = runningWorkers == 0
        let failed = _error != nil
        lock.unlock()
        guard last else { return }
        for sink in sinks {
            if failed {
                try? sink.close()
            } else {
                do { try sink.close() } catch { fail(error) }
            }
        }
        finished.signal()
    }

    private func deliver(audio packets: [EncodedAudioPacket], captured: Int) throws {
        for packet in packets {
            for sink in sinks { try sink.write(packet) }
        }
        lock.lock()
        _stats.audioFramesCaptured += captured
        _stats.audioFramesEncoded += packets.count
        _stats.audioBytes += packets.reduce(0) { $0 + $1.data.count }
        lock.unlock()
    }

    /// The frame at the encoder's size (sources normally deliver it already).
    private func fitted(_ frame: VideoFrame, encoder: H264Encoder) throws -> VideoFrame {
        let config = encoder.config
        guard frame.width != config.width || frame.height != config.height, let pool else { return frame }
        let out = pool.acquire()
        try scaler.scale(frame, into: out, mode: .aspectFit)
        out.pts = frame.pts
        out.captureTimeMicros = frame.captureTimeMicros
        return out
    }

    private func deliver(_ packets: [EncodedVideoPacket], encoder: H264Encoder, encodeMicros: UInt64, frames count: Int) throws {
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
