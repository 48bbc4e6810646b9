import Foundation
import LiveAuth
import LiveCapture
import LiveCodec
import LiveCore
import LiveNet
import LiveRTMP

/// The guest's pipeline (DESIGN.md §2):
///
///     server ─► RTMPPlayer ─► queue ─► H.264 decoder ─► stats, y4m, snapshot; recorder, out
///               (event loop)         └► AAC decoder ──► stats, level, wav, pcm, onAudio; recorder, out
///                                      └──────────── decode thread ────────────┘
///
/// Audio is decoded on the decode thread too, in the order the player delivered it
/// (stream order, interleaved with the video by timestamp): AAC costs a few tens of µs a
/// frame, one thread keeps both tracks in one order for the outputs that interleave them
/// (`--out`, `--record`) and for latency control, and no lock or second queue is needed.
/// Both tracks keep the stream's timestamps, so outputs stay in sync by pts.
///
/// What the guest hears (wav, pcm, onAudio, levels, the audio figures) is this stream's
/// sound, except while a co-host's hear stream plays (`startHearing`): then the program's
/// decoded audio still feeds A/V sync and the recordings take its packets, but the
/// heard outputs take the hear stream's decoded audio instead, which its own player
/// puts on this pipeline's queue (`Input.heard`), so this decode thread stays the one
/// writer of every output.
///
/// Audio-only streams: the stream is known to be audio-only when its onMetaData names an
/// audio codec and no video (no `videocodecid`, `width` or `height`), or, without such
/// metadata, once a second of audio came with no AVC header. Any audio counts as the
/// stream being there: the "no media" timeout waits for video or audio.
///
/// The player runs on its own event loop; packets cross to the decode thread through a
/// bounded queue. When the decoder falls that far behind, new packets are dropped
/// until the next keyframe (counted), so what is decoded always decodes cleanly.
///
/// Latency control (`bufferTargetMilliseconds`): frames are shown as soon as they are
/// decoded; when the received-but-unshown media grows past the target (a stall and then
/// a burst), `GuestLatencyControl` drops the packets before the latest keyframe and
/// decodes without showing those still too far behind, so the picture jumps back to
/// live instead of drifting.
///
/// Reconnect: once playing, a lost connection is retried with `reconnect`'s backoff on
/// the same loop; packets are dropped to the next keyframe after it.
/// The run ends at the frame limit, the duration, the end of the stream, `stop()`, or an
/// error (connect refused, stream refused, no video or audio within the timeout, a broken
/// output).
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
        /// Record the received packets (video and audio) to this .flv/.mp4, without re-encoding.
        public var recordPath: String?
        /// Write decoded audio as a 16-bit PCM WAV here ("-": standard output, with a
        /// streaming header).
        public var wavPath: String?
        /// Write decoded audio as raw s16le interleaved samples here ("-": standard output).
        public var pcmPath: String?
        /// Write both tracks, copied as received (H.264, AAC), to this .nut/.mkv ("-": NUT
        /// on standard output).
        public var outPath: String?
        /// The least time between two `hosterAudioActive` events, in ms (the seed's
        /// showTime); nil: none.
        public var audioLevelIntervalMilliseconds: Int? = 500
        /// Packets (video and audio) between the player and the decoder: about 8 s of a
        /// 30 fps stream with 48 kHz AAC.
        public var queueCapacity = 600
        /// The latency control's buffer target in ms (nil: no latency control).
        public var bufferTargetMilliseconds: Int? = 150
        /// Retries after a lost connection, once playing (`maxTries` 0: end the run).
        public var reconnect = ReconnectBackoff()
        /// No frame for this long after the first one is a stall (`buffering(0)`).
        public var stallMilliseconds = 500
        /// Asked for a fresh token before the first connect and every reconnect; the token
        /// goes on the stream name as `?token=`. nil: the URL as given.
        public var tokenProvider: TokenProvider?

        public init(url: RTMPURL) { self.url = url }
    }

    /// Why a guest stopped.
    public enum EndReason: Sendable, Equatable {
        case frameLimit, duration, streamEnded, stopped, failed
    }

    public enum Error: Swift.Error, CustomStringConvertible, Sendable {
        /// Playing started but neither video nor audio came within the timeout.
        case noMedia(url: String, seconds: Double)
        case player(RTMPClientError)

        public var description: String {
            switch self {
            case .noMedia(let url, let seconds):
                "\(url): no video or audio within \(String(format: "%g", seconds)) s of play start (is the stream being published?)"
            case .player(let error): "\(error)"
            }
        }
    }

    private enum Input {
        case metadata(RTMPStreamMetadata)
        case configuration([UInt8], H264Bitstream.AVCDecoderConfiguration)
        case video(RTMPVideoPacket)
        case audioConfiguration([UInt8], AACAudioSpecificConfig)
        case audio(RTMPAudioPacket)
        /// Decoded audio of the hear stream (see `startHearing`).
        case heard(AudioFrame)
        case end(EndReason, Swift.Error?)
        case playing
        case reconnecting(Int)
    }

    /// Play events (see `GuestEvent`), on the decode thread; set before `start()`.
    public var onEvent: ((GuestEvent) -> Void)?
    /// Every shown frame, on the decode thread; the frame is reused afterwards.
    public var onFrame: ((VideoFrame) -> Void)?
    /// Every decoded audio frame (planar float, the stream's rate and channels), on the
    /// decode thread; set before `start()`.
    public var onAudio: ((AudioFrame) -> Void)?

    public let configuration: Configuration
    private let queue: BoundedQueue<Input>
    private var loop: EventLoop?
    private var player: RTMPPlayer?

    private let lock = NSLock()
    private var _stats = GuestStats()
    private var latency = LatencyStatistics()
    private var sync = AVSyncMeter()
    private var _endReason: EndReason?
    private var _error: Swift.Error?
    private var stopRequested: EndReason?
    private let finished = RunEnd()
    private var startMicros: UInt64 = 0

    // Loop.
    private var skippingToKeyframe = false
    private var resendConfiguration: Input?
    private var resendAudioConfiguration: Input?
    private var sawMedia = false
    private var noVideoTimer: TimerHandle?
    private var everPlayed = false
    private var attempt = 0
    private var retryTimer: TimerHandle?

    // Decode.
    private var decoder: H264Decoder?
    private var decoderConfiguration: H264Bitstream.AVCDecoderConfiguration?
    private var y4m: Y4MWriter?
    private var recorder: GuestRecorder?
    private var out: GuestRecorder?
    private var outFailed = false
    private var wav: PCMWriter?
    private var pcm: PCMWriter?
    private var audioDecoder: AACDecoder?
    private var audioConfiguration: [UInt8]?
    private var firstAudioMicros: Int64?
    private var audioOnlyByMetadata = false
    private var levels = AudioLevelMeter()
    private var lastLevelEventMicros: UInt64 = 0
    private var firstAudioShown = false
    /// Beep onsets of the hear stream (mouth-to-ear lines).
    private var heardBeeps = AVSyncMeter()
    /// The hear stream's player while co-hosting (under `lock`).
    private var hearPipeline: CohostStreamFeed?
    private var lastFrame: VideoFrame?
    private var metadata: RTMPStreamMetadata?
    private var backlog: [Input] = []
    private var firstFrameShown = false
    private var buffering = false
    private var lastShownMicros: UInt64 = 0
    private var nextStatusMicros: UInt64 = 0
    private var framesAtLastStatus = 0

    public init(configuration: Configuration) throws {
        self.configuration = configuration
        queue = BoundedQueue(capacity: configuration.queueCapacity, policy: .dropNewest)
        if let path = configuration.recordPath { recorder = try GuestRecorder(path: path) }
        if let path = configuration.outPath {
            out = try GuestRecorder(path: path, containers: [.nut, .matroska], what: "--out")
            if path != "-" { try OutputFile.checkWritable(path, what: "--out file") }
        }
        if let path = configuration.snapshotPath, !path.lowercased().hasSuffix(".png") {
            throw LiveError(.invalidParams, "snapshot '\(path)': the file name must end in .png")
        }
        // Both are written late (the recording from the first keyframe, the snapshot at
        // the end): a path that cannot be written is found now, not after the run.
        if let path = configuration.recordPath { try OutputFile.checkWritable(path, what: "recording") }
        if let path = configuration.snapshotPath { try OutputFile.checkWritable(path, what: "snapshot") }
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
        copy.latencyMaxMs = latency.maxMs
        copy.latencyStartP50Ms = latency.p50Ms(fraction: 0.1, fromEnd: false)
        copy.latencyEndP50Ms = latency.p50Ms(fraction: 0.1, fromEnd: true)
        copy.latencySamples = latency.count
        if let (p50, p95) = sync.p50p95Ms {
            copy.avSyncP50Ms = p50
            copy.avSyncP95Ms = p95
        }
        copy.avSyncSamples = sync.offsets.count
        return copy
    }

    /// The player's figures: receive rate, buffered time (any thread).
    public var playerStats: RTMPPlayer.Stats { currentPlayer?.stats ?? RTMPPlayer.Stats() }

    private var currentPlayer: RTMPPlayer? {
        lock.lock()
        defer { lock.unlock() }
        return player
    }

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

    /// While co-hosting (DESIGN.md §4): plays `url` (the co-host's hear stream, what the
    /// hoster sends it: everyone but itself) audio-only with a small buffer, and what the
    /// guest hears (`wavPath`, `pcmPath`, `onAudio`, the level events and figures) comes
    /// from it instead of this stream's audio, which carries the co-host's own voice,
    /// late. The recordings (`recordPath`, `outPath`) keep this stream as received, and
    /// A/V sync is still this stream's. It plays with the co-host feed's settings (100 ms
    /// buffer target, played again while it is missing). The hear stream's decoded audio crosses to this
    /// pipeline's decode thread through its queue, so every output is written by one
    /// thread. Any thread; a second call replaces the first.
    public func startHearing(url: RTMPURL, tokenProvider: TokenProvider? = nil) {
        // The co-host feed's player: plays again, a moment apart, until stopped (the hear
        // stream starts when the hoster's mix first runs with this co-host, and may drop).
        let feed = CohostStreamFeed(url: url, tokenProvider: tokenProvider, deliver: { _ in },
                                    deliverAudio: { [weak self] frame in _ = self?.queue.push(.heard(frame)) },
                                    firstFrame: { _, _ in })
        lock.lock()
        let previous = hearPipeline
        hearPipeline = feed
        lock.unlock()
        previous?.stop()
        feed.start()
    }

    /// Back to this stream's audio for what the guest hears (hang-up, leave, line lost).
    public func stopHearing() {
        lock.lock()
        let pipeline = hearPipeline
        hearPipeline = nil
        lock.unlock()
        pipeline?.stop()
    }

    /// True while the hear stream is what the guest hears.
    public var isHearing: Bool {
        lock.lock()
        defer { lock.unlock() }
        return hearPipeline != nil
    }

    /// Opens the outputs, starts the player's loop and the decode thread; returns at once.
    public func start() throws {
        if let path = configuration.y4mPath { y4m = try Y4MWriter(path: path) }
        if let path = configuration.wavPath { wav = try PCMWriter(path: path, format: .wav) }
        if let path = configuration.pcmPath { pcm = try PCMWriter(path: path, format: .raw) }
        let url = try configuration.tokenProvider.map(StreamTokenSource.init)?
            .url(for: configuration.url, timeout: configuration.timeout) ?? configuration.url
        let loop = try EventLoop(name: "liveline-guest")
        self.loop = loop
        let player = makePlayer(url: url, loop: loop)
        lock.lock()
        self.player = player
        lock.unlock()
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
        if let error { throw error }
    }

    /// Waits up to `seconds`; true when the run has ended (throws its error then).
    public func wait(seconds: Double) throws -> Bool {
        guard finished.wait(seconds: seconds) else { return false }
        if let error { throw error }
        return true
    }

    // MARK: - Loop thread

    private func makePlayer(url: RTMPURL, loop: EventLoop) -> RTMPPlayer {
        let player = RTMPPlayer(url: url, loop: loop,
                                configuration: RTMPPlayer.Configuration(connectTimeout: configuration.timeout))
        player.onEvent = { [weak self, weak player] event in
            guard let self, let player, currentPlayer === player else { return }
            handle(event)
        }
        return player
    }

    private func retry(after error: RTMPClientError) {
        guard let loop, requestedEnd() == nil,
              let delay = configuration.reconnect.delay(attempt: attempt, unit: Double.random(in: 0...1)) else {
            return forcePush(.end(.failed, Error.player(error)))
        }
        attempt += 1
        push(.reconnecting(attempt))
        retryTimer = loop.schedule(after: .milliseconds(Int64(delay * 1000))) { [weak self] in
            guard let self, self.requestedEnd() == nil else { return }
            // What comes next starts a new picture: wait for its keyframe.
            self.skippingToKeyframe = true
            guard let tokens = self.configuration.tokenProvider.map(StreamTokenSource.init) else {
                return self.reconnect(to: self.configuration.url, loop: loop)
            }
            tokens.fetch(for: self.configuration.url) { [weak self] result in
                loop.execute { [weak self] in
                    guard let self, self.requestedEnd() == nil else { return }
                    switch result {
                    case .success(let url):
                        self.reconnect(to: url, loop: loop)
                    case .failure(let tokenError):
                        // Counts as a failed try: the provider may answer next time.
                        Log.warning("RTMP play of \(self.configuration.url): \(tokenError)")
                        self.retry(after: error)
                    }
                }
            }
        }
    }

    /// A new player of `url` becomes the current one. Loop thread.
    private func reconnect(to url: RTMPURL, loop: EventLoop) {
        let player = makePlayer(url: url, loop: loop)
        lock.lock()
        self.player = player
        lock.unlock()
        player.start()
    }

    private func handle(_ event: RTMPPlayer.Event) {
        switch event {
        case .metadata(let metadata):
            push(.metadata(metadata))
        case .decoderConfiguration(let avcC, let configuration):
            let input = Input.configuration(avcC, configuration)
            if !push(input) { resendConfiguration = input }
        case .audioConfiguration(let asc, let config):
            let input = Input.audioConfiguration(asc, config)
            if !push(input) { resendAudioConfiguration = input }
        case .audio(let packet):
            sawMediaNow()
            if let pending = resendAudioConfiguration {
                guard push(pending) else { return countDrop(audio: true) }
                resendAudioConfiguration = nil
            }
            if !push(.audio(packet)) { countDrop(audio: true) }
        case .video(let packet):
            sawMediaNow()
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
            if everPlayed, case .rejected = error {
                forcePush(.end(.failed, Error.player(error)))
            } else if everPlayed {
                retry(after: error)
            } else {
                forcePush(.end(.failed, Error.player(error)))
            }
        case .closed:
            forcePush(.end(.stopped, nil))
        case .playing:
            if everPlayed { lock.lock(); _stats.reconnects += 1; lock.unlock() }
            everPlayed = true
            attempt = 0
            push(.playing)
            // nginx-rtmp answers play of an unpublished name with Play.Start and then
            // silence: without a bound the guest would wait forever.
            guard noVideoTimer == nil, !sawMedia, let loop else { return }
            noVideoTimer = loop.schedule(after: configuration.timeout) { [weak self] in
                guard let self, !self.sawMedia else { return }
                let limit = configuration.timeout.components
                let seconds = Double(limit.seconds) + Double(limit.attoseconds) / 1e18
                self.forcePush(.end(.failed, Error.noMedia(url: configuration.url.description, seconds: seconds)))
            }
        case .connected, .status:
            break
        }
    }

    private func sawMediaNow() {
        sawMedia = true
        noVideoTimer?.cancel()
        noVideoTimer = nil
    }

    private func countDrop(audio: Bool = false) {
        lock.lock()
        if audio {
            _stats.audioPackets += 1
            _stats.skippedAudioPackets += 1
        } else {
            _stats.droppedPackets += 1
        }
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
        let control = configuration.bufferTargetMilliseconds.map { GuestLatencyControl(targetMilliseconds: $0) }
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
            tickEvents()
            guard let first = queue.pop(timeout: 0.05) else { continue }
            backlog.removeAll(keepingCapacity: true)
            backlog.append(first)
            // Everything received so far: latency control looks at all of it at once.
            while backlog.count < configuration.queueCapacity, let next = queue.pop(timeout: 0) { backlog.append(next) }
            var plan = GuestLatencyControl.Plan.none
            var audioDrop = 0
            if let control {
                let packets = backlog.compactMap { input -> GuestLatencyControl.Packet? in
                    guard case .video(let packet) = input else { return nil }
                    return GuestLatencyControl.Packet(dtsMilliseconds: packet.dts.milliseconds, isKeyframe: packet.isKeyframe)
                }
                plan = control.plan(packets)
                let audio = backlog.compactMap { input -> Int64? in
                    guard case .audio(let packet) = input else { return nil }
                    return packet.pts.milliseconds
                }
                // Audio skips to the first video packet that will be shown.
                let cut = plan == .none ? nil : packets[min(packets.count - 1, plan.drop + plan.decodeSilently)].dtsMilliseconds
                audioDrop = packets.isEmpty || cut != nil ? control.audioDrop(audio, videoCutMilliseconds: cut) : 0
                if plan != .none || audioDrop > 0 {
                    lock.lock()
                    _stats.skippedPackets += plan.drop
                    _stats.silentFrames += plan.decodeSilently
                    _stats.skippedAudioPackets += audioDrop
                    _stats.audioPackets += audioDrop
                    lock.unlock()
                }
            }
            var videoIndex = 0, audioIndex = 0
            for input in backlog {
                do {
                    switch input {
                    case .metadata(let metadata):
                        self.metadata = metadata
                        if let fps = metadata.framerate { y4m?.setFrameRate(fps) }
                        audioOnlyByMetadata = metadata.audioCodecID != nil && metadata.videoCodecID == nil
                            && metadata.width == nil && metadata.height == nil
                    case .audioConfiguration(let asc, let config):
                        configureAudio(asc: asc, config)
                    case .heard(let frame):
                        // Heard only while the hear stream plays (one still queued after it stopped is not).
                        if isHearing {
                            try hear(frame)
                            for onset in heardBeeps.audio(frame) {
                                onEvent?(.beepHeard(ptsMicros: onset, wallMicros: Int64(Clock.wallMicros())))
                            }
                        }
                    case .audio(let packet):
                        defer { audioIndex += 1 }
                        if audioIndex < audioDrop {
                            currentPlayer?.markConsumed(upTo: packet.pts)
                            continue
                        }
                        try decodeAudio(packet)
                    case .configuration(let avcC, let configuration):
                        try configure(avcC: avcC, configuration)
                    case .video(let packet):
                        defer { videoIndex += 1 }
                        if videoIndex < plan.drop {
                            currentPlayer?.markConsumed(upTo: packet.dts)
                            continue
                        }
                        let show = videoIndex >= plan.drop + plan.decodeSilently
                        if let end = try decode(packet, show: show) {
                            reason = end
                            break loop
                        }
                    case .playing:
                        recorder?.playStarted()
                        onEvent?(.ok)
                    case .reconnecting(let times):
                        onEvent?(.reconnecting(times: times))
                    case .end(let end, let error):
                        reason = end
                        failure = error
                        break loop
                    }
                } catch let error as ReaderClosing where error.readerClosed {
                    // The reader of a standard-output output went away (| head): a stop, not a failure.
                    reason = .stopped
                    break loop
                } catch {
                    reason = .failed
                    failure = error
                    break loop
                }
            }
        }
        finish(reason: reason, error: failure)
    }

    /// Status once a second after the first frame; buffering(0) when frames stop.
    private func tickEvents() {
        guard firstFrameShown, let onEvent else { return }
        let now = Clock.monotonicMicros()
        if !buffering, now - lastShownMicros > UInt64(configuration.stallMilliseconds) * 1000 {
            buffering = true
            onEvent(.buffering(percent: 0))
        }
        guard now >= nextStatusMicros else { return }
        let player = playerStats
        let stats = self.stats
        var status = GuestStatus()
        status.cacheMilliseconds = player.bufferedMilliseconds
        status.bytesPerSecond = Int(player.receiveRate)
        status.fps = Double(stats.frames - framesAtLastStatus) / max(0.001, Double(now - (nextStatusMicros - 1_000_000)) / 1e6)
        status.droppedFrames = stats.droppedPackets + stats.skippedPackets + stats.silentFrames
        status.reconnects = stats.reconnects
        framesAtLastStatus = stats.frames
        nextStatusMicros = now + 1_000_000
        onEvent(.status(status))
    }

    private func configure(avcC: [UInt8], _ configuration: H264Bitstream.AVCDecoderConfiguration) throws {
        recorder?.setConfiguration(configuration)
        out?.setConfiguration(configuration)
        guard configuration != decoderConfiguration || decoder == nil else { return }
        if let decoder {
            for frame in (try? decoder.flush()) ?? [] { try present(frame) }
        }
        decoder = try H264Decoder(extradata: avcC)
        decoderConfiguration = configuration
    }

    /// Decodes one packet and hands its frames on; returns an end reason when the frame
    /// limit is reached.
    private func decode(_ packet: RTMPVideoPacket, show: Bool = true) throws -> EndReason? {
        currentPlayer?.markConsumed(upTo: packet.dts)
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
        if show {
            for frame in frames { try present(frame) }
        }
        if recorder != nil || out != nil {
            let fps = Self.wholeNumber(metadata?.framerate, in: 1...1000) ?? 30
            let width = lastFrame?.width ?? Self.wholeNumber(metadata?.width, in: 1...16384) ?? 0
            let height = lastFrame?.height ?? Self.wholeNumber(metadata?.height, in: 1...16384) ?? 0
            if let recorder {
                do {
                    try recorder.write(packet, width: width, height: height, fps: fps)
                    lock.lock()
                    _stats.recordedPackets = recorder.packetsWritten
                    lock.unlock()
                } catch {
                    stopRecording(recorder, after: error)
                }
            }
            try writeOut { try $0.write(packet, width: width, height: height, fps: fps) }
        }
        if let limit = configuration.frameLimit {
            lock.lock()
            let frames = _stats.frames
            lock.unlock()
            if frames >= limit { return .frameLimit }
        }
        return nil
    }

    /// A failed `--out` write. Unlike the recording, it ends the run (it is the output
    /// asked for), as a stop when the reader of standard output went away.
    struct OutError: Swift.Error, CustomStringConvertible, ReaderClosing {
        let path: String
        let cause: Swift.Error

        var readerClosed: Bool { path == "-" && (cause as? FFmpegError)?.code == -EPIPE }
        var description: String { "writing --out \(path == "-" ? "to standard output" : path) failed: \(cause)" }
    }

    private func writeOut(_ body: (GuestRecorder) throws -> Void) throws {
        guard let out else { return }
        do {
            try body(out)
        } catch {
            outFailed = true
            throw OutError(path: out.path, cause: error)
        }
        lock.lock()
        _stats.outPackets = out.packetsWritten + out.audioPacketsWritten
        lock.unlock()
    }

    /// The stream's AAC header: a decoder for it (a new one when it changed). A header
    /// FFmpeg cannot open is counted and reported; audio is skipped until another one.
    private func configureAudio(asc: [UInt8], _ config: AACAudioSpecificConfig) {
        recorder?.setAudioConfiguration(asc: asc, config)
        out?.setAudioConfiguration(asc: asc, config)
        // The same header again (a reconnect): the decoder goes on, or stays refused.
        guard asc != audioConfiguration else { return }
        audioConfiguration = asc
        do {
            audioDecoder = try AACDecoder(audioSpecificConfig: asc)
        } catch {
            audioDecoder = nil
            Log.warning("\(configuration.url): the AAC decoder refused the stream's audio header: \(error)")
            lock.lock()
            _stats.audioDecodeErrors += 1
            lock.unlock()
        }
    }

    /// The stream has no video: its metadata says so, or a second of audio came before
    /// any AVC header.
    private func isAudioOnly(at pts: MediaTime) -> Bool {
        guard decoderConfiguration == nil else { return false }
        if audioOnlyByMetadata { return true }
        if firstAudioMicros == nil { firstAudioMicros = pts.micros }
        return pts.micros - firstAudioMicros! >= 1_000_000
    }

    /// Decodes one AAC frame and hands the audio on: stats, level, sync, writers, the
    /// hook; the packet itself goes to the recording and `--out`.
    private func decodeAudio(_ packet: RTMPAudioPacket) throws {
        currentPlayer?.markConsumed(upTo: packet.pts)
        let audioOnly = isAudioOnly(at: packet.pts)
        lock.lock()
        _stats.audioPackets += 1
        _stats.audioOnly = audioOnly
        lock.unlock()
        if let recorder {
            do {
                try recorder.write(audio: packet, audioOnly: audioOnly)
                lock.lock()
                _stats.recordedPackets = recorder.packetsWritten + recorder.audioPacketsWritten
                lock.unlock()
            } catch {
                stopRecording(recorder, after: error)
            }
        }
        try writeOut { try $0.write(audio: packet, audioOnly: audioOnly) }
        guard let audioDecoder else { return }
        let frames: [AudioFrame]
        do {
            frames = try audioDecoder.decode(packet.data, pts: packet.pts)
        } catch {
            lock.lock()
            _stats.audioDecodeErrors += 1
            lock.unlock()
            return
        }
        for frame in frames { try present(frame) }
    }

    /// Program audio: A/V sync, and what the guest hears unless the hear stream plays.
    private func present(_ frame: AudioFrame) throws {
        lock.lock()
        sync.audio(frame)
        let hearing = hearPipeline != nil
        lock.unlock()
        if !hearing { try hear(frame) }
    }

    /// What the guest hears: stats, level, writers, the hook.
    private func hear(_ frame: AudioFrame) throws {
        levels.add(frame)
        try wav?.write(frame)
        try pcm?.write(frame)
        lock.lock()
        _stats.audioFrames += 1
        _stats.audioSampleRate = frame.sampleRate
        _stats.audioChannels = frame.channelCount
        _stats.audioLevel = levels.level
        _stats.wavBytes = wav?.bytesWritten ?? 0
        _stats.pcmBytes = pcm?.bytesWritten ?? 0
        lock.unlock()
        if !firstAudioShown {
            firstAudioShown = true
            onEvent?(.firstAudio(sampleRate: frame.sampleRate, channels: frame.channelCount))
        }
        if let interval = configuration.audioLevelIntervalMilliseconds {
            let now = Clock.monotonicMicros()
            if now - lastLevelEventMicros >= UInt64(interval) * 1000, let level = levels.takeSinceLast() {
                lastLevelEventMicros = now
                onEvent?(.hosterAudioActive(level: level, showTime: interval))
            }
        }
        onAudio?(frame)
    }

    /// An onMetaData number as a whole number in `range`, nil when it is missing or is
    /// not a number there: the publisher controls it (NaN, infinity and 1e300 included),
    /// and `Int(_:)` of those traps.
    static func wholeNumber(_ value: Double?, in range: ClosedRange<Int>) -> Int? {
        guard let value, value >= Double(range.lowerBound), value <= Double(range.upperBound) else { return nil }
        return Int(value.rounded())
    }

    /// A failed recording write (a full disk) ends the recording, not the playing: the
    /// file is closed with what reached it, the reason kept in the stats and reported.
    private func stopRecording(_ failed: GuestRecorder, after error: Swift.Error) {
        try? failed.finish()
        recorder = nil
        let message = "recording to \(failed.path) stopped: \(error)"
        lock.lock()
        _stats.recordingError = message
        lock.unlock()
        onEvent?(.recordingFailed(message: message))
    }

    private func present(_ frame: VideoFrame) throws {
        let now = Clock.wallMicros()
        let monotonic = Clock.monotonicMicros()
        lock.lock()
        _stats.frames += 1
        _stats.width = frame.width
        _stats.height = frame.height
        if _stats.firstFrameMs == nil { _stats.firstFrameMs = Double(monotonic - startMicros) / 1000 }
        let first = !firstFrameShown
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
        // The test pattern's marker patch, for A/V sync (a few hundred pixels read).
        let lit = TestPatternSource.markerLit(in: frame)
        lock.lock()
        sync.frame(pts: frame.pts.micros, lit: lit)
        lock.unlock()
        // Holding the frame keeps one pool buffer from reuse, which costs no copy.
        lastFrame = frame
        lastShownMicros = monotonic
        if first {
            firstFrameShown = true
            nextStatusMicros = monotonic + 1_000_000
            framesAtLastStatus = 0
            onEvent?(.firstFrame(width: frame.width, height: frame.height))
        } else if buffering {
            buffering = false
            onEvent?(.buffering(percent: 100))
        }
        onFrame?(frame)
    }

    private func finish(reason: EndReason, error: Swift.Error?) {
        queue.close()
        stopHearing()
        var failure = error
        if let loop {
            let done = DispatchSemaphore(value: 0)
            if loop.execute({ [self] in retryTimer?.cancel(); done.signal() }) { _ = done.wait(timeout: .now() + 2) }
        }
        if let player = currentPlayer {
            player.close()
            player.waitUntilClosed(timeout: .seconds(2))
        }
        loop?.shutdown()
        // A recording that cannot be closed (a full disk) failed like one whose write
        // failed: reported as such, not as the end of playing.
        if let recorder {
            do {
                try recorder.finish()
            } catch {
                stopRecording(recorder, after: error)
            }
        }
        do {
            try wav?.finish()
            // A write to --out failed (or its reader went away): that ended the run already.
            if let out, !outFailed {
                do {
                    try out.finish()
                } catch {
                    let outError = OutError(path: out.path, cause: error)
                    if !outError.readerClosed { throw outError }
                }
            }
            if let path = configuration.snapshotPath, let frame = lastFrame {
                let image = try Scaler().rgbaImage(from: frame)
                try ImageFile.writePNG(image, path: path)
                lock.lock()
                _stats.snapshotWritten = true
                lock.unlock()
            }
        } catch {
            if failure == nil { failure = error }
        }
        y4m = nil
        (wav, pcm, out) = (nil, nil, nil)
        lock.lock()
        _endReason = failure == nil ? reason : .failed
        _error = failure
        lock.unlock()
        let code: LiveCode = switch failure {
        case nil: .ok
        case let error as LiveError: error.code
        // The server refused the play (its code: 213 no token, 104 not allowed, else 102),
        // or nothing was published there within the timeout (102).
        case Error.player(let error)?: error.refusalCode ?? .networkDisconnected
        case Error.noMedia?: .liveError
        default: .networkDisconnected
        }
        onEvent?(.closed(code))
        finished.signal()
    }
}

/// An output's error that may say its reader went away (EPIPE on standard output).
protocol ReaderClosing: Swift.Error {
    var readerClosed: Bool { get }
}

extension PCMWriter.Error: ReaderClosing {
    var readerClosed: Bool { if case .readerClosed = self { true } else { false } }
}

extension Y4MWriter.Error: ReaderClosing {
    var readerClosed: Bool { if case .readerClosed = self { true } else { false } }
}
