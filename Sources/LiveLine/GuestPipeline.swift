import Foundation
import LiveCodec
import LiveCore
import LiveNet
import LiveRTMP

/// The guest's pipeline (DESIGN.md §2):
///
///     server ─► RTMPPlayer ─► queue ─► H.264 decoder ─► stats, y4m, snapshot; recorder
///               (event loop)           └──────────── decode thread ────────────┘
///
/// The player runs on its own event loop; packets cross to the decode thread through a
/// bounded queue. When the decoder falls that far behind, new packets are dropped
/// until the next keyframe (counted), so what is decoded always decodes cleanly.
/// The run ends at the frame limit, the duration, the end of the stream, `stop()`, or an
/// error (connect refused, stream refused, no video within the timeout, a broken output).
public final class GuestPipeline: @unchecked Sendable {
    // @unchecked: fields marked "decode" are touched only on the decode thread, "loop"
    // only on the player's loop thread, the rest under `lock`.

    public struct Configuration: Sendable {
        public var url: RTMPURL
        /// Connect + handshake + play, and then the wait for the first video packet.
        public var timeout: Duration = .seconds(10)
        /// Stop after this many decoded frames.
        public var frameLimit: Int?
        /// Stop after this many seconds from `start()`.
        public var duration: Double?
        /// Write the last decoded frame to this PNG at the end.
        public var snapshotPath: String?
        /// Write decoded frames as YUV4MPEG2 here ("-": standard output).
        public var y4mPath: String?
        /// Record the received packets to this .flv/.mp4, without re-encoding.
        public var recordPath: String?
        /// Packets between the player and the decoder.
        public var queueCapacity = 300

        public init(url: RTMPURL) { self.url = url }
    }

    /// Why a guest stopped.
    public enum EndReason: Sendable, Equatable {
        case frameLimit, duration, streamEnded, stopped, failed
    }

    public enum Error: Swift.Error, CustomStringConvertible, Sendable {
        /// Playing started but no video came within the timeout.
        case noVideo(url: String, seconds: Double)
        case player(RTMPClientError)

        public var description: String {
            switch self {
            case .noVideo(let url, let seconds):
                "\(url): no video within \(String(format: "%g", seconds)) s of play start (is the stream being published?)"
            case .player(let error): "\(error)"
            }
        }
    }

    private enum Input {
        case metadata(RTMPStreamMetadata)
        case configuration([UInt8], H264Bitstream.AVCDecoderConfiguration)
        case video(RTMPVideoPacket)
        case end(EndReason, Swift.Error?)
    }

    public let configuration: Configuration
    private let queue: BoundedQueue<Input>
    private var loop: EventLoop?
    private var player: RTMPPlayer?

    private let lock = NSLock()
    private var _stats = GuestStats()
    private var latency = LatencyStatistics()
    private var _endReason: EndReason?
    private var _error: Swift.Error?
    private var stopRequested: EndReason?
    private let finished = DispatchSemaphore(value: 0)
    private var startMicros: UInt64 = 0

    // Loop.
    private var skippingToKeyframe = false
    private var resendConfiguration: Input?
    private var sawVideo = false
    private var noVideoTimer: TimerHandle?

    // Decode.
    private var decoder: H264Decoder?
    private var decoderConfiguration: H264Bitstream.AVCDecoderConfiguration?
    private var y4m: Y4MWriter?
    private var recorder: GuestRecorder?
    private var lastFrame: VideoFrame?
    private var metadata: RTMPStreamMetadata?

    public init(configuration: Configuration) throws {
        self.configuration = configuration
        queue = BoundedQueue(capacity: configuration.queueCapacity, policy: .dropNewest)
        if let path = configuration.recordPath { recorder = try GuestRecorder(path: path) }
        if let path = configuration.snapshotPath, !path.lowercased().hasSuffix(".png") {
            throw LiveError(.invalidParams, "snapshot '\(path)': the file name must end in .png")
        }
    }

    /// The figures so far (any thread).
    public var stats: GuestStats {
        lock.lock()
        defer { lock.unlock() }
        var copy = _stats
        if let (p50, p95) = latency.p50p95Ms {
            copy.latencyP50Ms = p50
            copy.latencyP95Ms = p95
        }
        copy.latencySamples = latency.count
        return copy
    }

    /// The player's figures: receive rate, buffered time (any thread).
    public var playerStats: RTMPPlayer.Stats { player?.stats ?? RTMPPlayer.Stats() }

    /// Why the run ended; nil while it runs.
    public var endReason: EndReason? {
        lock.lock()
        defer { lock.unlock() }
        return _endReason
    }

    /// The error that ended the run, if any.
    public var error: Swift.Error? {
        lock.lock()
        defer { lock.unlock() }
        return _error
    }

    /// Opens the outputs, starts the player's loop and the decode thread; returns at once.
    public func start() throws {
        if let path = configuration.y4mPath { y4m = try Y4MWriter(path: path) }
        let loop = try EventLoop(name: "liveline-guest")
        let player = RTMPPlayer(url: configuration.url, loop: loop,
                                configuration: RTMPPlayer.Configuration(connectTimeout: configuration.timeout))
        player.onEvent = { [unowned self] event in handle(event) }
        self.loop = loop
        self.player = player
        startMicros = Clock.monotonicMicros()
        loop.start()
        player.start()
        let thread = Thread { [self] in decodeLoop() }
        thread.name = "liveline.decode"
        thread.start()
    }

    /// Asks the run to end (Ctrl-C): outputs are finished and the player closed.
    public func stop() {
        lock.lock()
        if stopRequested == nil { stopRequested = .stopped }
        lock.unlock()
    }

    /// Waits until the run has ended; throws the error that ended it.
    public func wait() throws {
        finished.wait()
        finished.signal()
        if let error { throw error }
    }

    /// Waits up to `seconds`; true when the run has ended (throws its error then).
    public func wait(seconds: Double) throws -> Bool {
        guard finished.wait(timeout: .now() + seconds) == .success else { return false }
        finished.signal()
        if let error { throw error }
        return true
    }

    // MARK: - Loop thread

    private func handle(_ event: RTMPPlayer.Event) {
        switch event {
        case .metadata(let metadata):
            push(.metadata(metadata))
        case .decoderConfiguration(let avcC, let configuration):
            let input = Input.configuration(avcC, configuration)
            if !push(input) { resendConfiguration = input }
        case .video(let packet):
            sawVideo = true
            noVideoTimer?.cancel()
            noVideoTimer = nil
            if skippingToKeyframe {
                guard packet.isKeyframe else { return countDrop() }
                skippingToKeyframe = false
            }
            if let pending = resendConfiguration {
                guard push(pending) else { return countDrop() }
                resendConfiguration = nil
            }
            if !push(.video(packet)) {
                skippingToKeyframe = true
                countDrop()
            }
        case .streamEnded:
            push(.end(.streamEnded, nil))
        case .failed(let error):
            forcePush(.end(.failed, Error.player(error)))
        case .closed:
            forcePush(.end(.stopped, nil))
        case .playing:
            // nginx-rtmp answers play of an unpublished name with Play.Start and then
            // silence: without a bound the guest would wait forever.
            guard noVideoTimer == nil, !sawVideo, let loop else { return }
            noVideoTimer = loop.schedule(after: configuration.timeout) { [weak self] in
                guard let self, !self.sawVideo else { return }
                let limit = configuration.timeout.components
                let seconds = Double(limit.seconds) + Double(limit.attoseconds) / 1e18
                self.forcePush(.end(.failed, Error.noVideo(url: configuration.url.description, seconds: seconds)))
            }
        case .connected, .status:
            break
        }
    }

    private func countDrop() {
        lock.lock()
        _stats.droppedPackets += 1
        lock.unlock()
    }

    @discardableResult
    private func push(_ input: Input) -> Bool { queue.push(input) }

    /// An end must get through a full queue: wait a moment for room.
    private func forcePush(_ input: Input) {
        for _ in 0..<200 where !queue.push(input) {
            if queue.isClosed { return }
            usleep(5000)
        }
    }

    // MARK: - Decode thread

    private func requestedEnd() -> EndReason? {
        lock.lock()
        defer { lock.unlock() }
        return stopRequested
    }

    private func decodeLoop() {
        var reason = EndReason.stopped
        var failure: Swift.Error?
        loop: while true {
            if let requested = requestedEnd() {
                reason = requested
                break
            }
            if let duration = configuration.duration,
               Double(Clock.monotonicMicros() - startMicros) / 1e6 >= duration {
                reason = .duration
                break
            }
            guard let input = queue.pop(timeout: 0.05) else { continue }
            do {
                switch input {
                case .metadata(let metadata):
                    self.metadata = metadata
                    if let fps = metadata.framerate { y4m?.setFrameRate(fps) }
                case .configuration(let avcC, let configuration):
                    try configure(avcC: avcC, configuration)
                case .video(let packet):
                    if let end = try decode(packet) {
                        reason = end
                        break loop
                    }
                case .end(let end, let error):
                    reason = end
                    failure = error
                    break loop
                }
            } catch let error as Y4MWriter.Error {
                if case .readerClosed = error {
                    reason = .stopped
                } else {
                    reason = .failed
                    failure = error
                }
                break
            } catch {
                reason = .failed
                failure = error
                break
            }
        }
        finish(reason: reason, error: failure)
    }

    private func configure(avcC: [UInt8], _ configuration: H264Bitstream.AVCDecoderConfiguration) throws {
        recorder?.setConfiguration(configuration)
        guard configuration != decoderConfiguration || decoder == nil else { return }
        if let decoder {
            for frame in (try? decoder.flush()) ?? [] { try present(frame) }
        }
        decoder = try H264Decoder(extradata: avcC)
        decoderConfiguration = configuration
    }

    /// Decodes one packet and hands its frames on; returns an end reason when the frame
    /// limit is reached.
    private func decode(_ packet: RTMPVideoPacket) throws -> EndReason? {
        player?.markConsumed(upTo: packet.dts)
        lock.lock()
        _stats.packets += 1
        if packet.isKeyframe { _stats.keyframes += 1 }
        lock.unlock()
        guard let decoder, let decoderConfiguration else { return nil }
        let frames: [VideoFrame]
        do {
            frames = try decoder.decode(avcc: packet.avcc, lengthSize: decoderConfiguration.lengthSize, pts: packet.pts)
        } catch {
            lock.lock()
            _stats.decodeErrors += 1
            lock.unlock()
            return nil
        }
        for frame in frames { try present(frame) }
        if let recorder {
            let fps = Int((metadata?.framerate ?? 30).rounded())
            let width = lastFrame?.width ?? Int(metadata?.width ?? 0)
            let height = lastFrame?.height ?? Int(metadata?.height ?? 0)
            try recorder.write(packet, width: width, height: height, fps: fps)
            lock.lock()
            _stats.recordedPackets = recorder.packetsWritten
            lock.unlock()
        }
        if let limit = configuration.frameLimit {
            lock.lock()
            let frames = _stats.frames
            lock.unlock()
            if frames >= limit { return .frameLimit }
        }
        return nil
    }

    private func present(_ frame: VideoFrame) throws {
        let now = Clock.wallMicros()
        let monotonic = Clock.monotonicMicros()
        lock.lock()
        _stats.frames += 1
        _stats.width = frame.width
        _stats.height = frame.height
        if _stats.firstFrameMs == nil { _stats.firstFrameMs = Double(monotonic - startMicros) / 1000 }
        if frame.captureTimeMicros != 0 {
            latency.add(micros: Int64(bitPattern: now &- frame.captureTimeMicros))
        }
        lock.unlock()
        if let y4m {
            try y4m.write(frame)
            lock.lock()
            _stats.y4mFrames = y4m.framesWritten
            lock.unlock()
        }
        // Holding the frame keeps one pool buffer from reuse, which costs no copy.
        lastFrame = frame
    }

    private func finish(reason: EndReason, error: Swift.Error?) {
        queue.close()
        var failure = error
        if let player {
            player.close()
            player.waitUntilClosed(timeout: .seconds(2))
        }
        loop?.shutdown()
        do {
            try recorder?.finish()
            if let path = configuration.snapshotPath, let frame = lastFrame {
                let image = try Scaler().rgbaImage(from: frame)
                try ImageFile.writePNG(image, path: path)
            }
        } catch {
            if failure == nil { failure = error }
        }
        y4m = nil
        lock.lock()
        _endReason = failure == nil ? reason : .failed
        _error = failure
        lock.unlock()
        finished.signal()
    }
}
