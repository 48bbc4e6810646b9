import Foundation
import LiveAuth
import LiveCapture
import LiveCodec
import LiveCore
import LiveNet
import LiveRTMP
import Synchronization

/// The guest's pipeline (DESIGN.md §2):
///
///     server ─► RTMPPlayer ─► queue ─► H.264 decoder ─► stats, y4m, snapshot; recorder, out
///               (event loop)         └► AAC decoder ──► stats, level, wav, pcm, onAudio; recorder, out
///                                      └──────────── decode thread ────────────┘
///
/// An `http://` URL is played by `HTTPFLVPlayer` in the RTMP player's place: the same
/// events, the same queue and decode thread, the same reconnect.
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
///
/// The type's parts: this file the run (configuration, start, stop, the end), `+Player`
/// the player's loop (connect, reconnect, the queue's producer), `+Decode` the decode
/// thread, `+LatencyControl` what it skips to stay near live, `+Outputs` the files and
/// streams written (opened, written, finished), `+Hearing` the co-host's hear stream.
final class GuestPipeline: @unchecked Sendable {
    // @unchecked: fields marked "decode" are touched only on the decode thread, "loop"
    // only on the player's loop thread; what they share is in `shared`, a Mutex.

    struct Configuration: Sendable {
        /// RTMP or HTTP-FLV: both play through the same events and decode path.
        var url: PlayURL
        /// Connect + handshake + play, and then the wait for the first video packet.
        var timeout: Duration = .seconds(10)
        /// Stop after this many decoded frames.
        var frameLimit: Int?
        /// Stop after this many seconds from `start()`.
        var duration: Double?
        /// Write the last decoded frame to this PNG at the end.
        var snapshotPath: String?
        /// Write decoded frames as YUV4MPEG2 here ("-": standard output).
        var y4mPath: String?
        /// Record the received packets (video and audio) to this .flv/.mp4, without re-encoding.
        var recordPath: String?
        /// Write decoded audio as a 16-bit PCM WAV here ("-": standard output, with a
        /// streaming header).
        var wavPath: String?
        /// Write decoded audio as raw s16le interleaved samples here ("-": standard output).
        var pcmPath: String?
        /// Write both tracks, copied as received (H.264, AAC), to this .nut/.mkv ("-": NUT
        /// on standard output).
        var outPath: String?
        /// The least time between two `hosterAudioActive` events, in ms (the anyRTC SDK's
        /// showTime); nil: none.
        var audioLevelIntervalMilliseconds: Int? = 500
        /// Packets (video and audio) between the player and the decoder: about 8 s of a
        /// 30 fps stream with 48 kHz AAC.
        var queueCapacity = 600
        /// The latency control's buffer target in ms (nil: no latency control).
        var bufferTargetMilliseconds: Int? = 150
        /// Retries after a lost connection, once playing (`maxTries` 0: end the run).
        var reconnect = ReconnectBackoff()
        /// No frame for this long after the first one is a stall (`buffering(0)`).
        var stallMilliseconds = 500
        /// Asked for a fresh token before the first connect and every reconnect; the token
        /// goes on the stream name as `?token=`. nil: the URL as given.
        var tokenProvider: TokenProvider?

        init(url: PlayURL) { self.url = url }

        init(url: RTMPURL) { self.url = .rtmp(url) }
    }

    typealias EndReason = GuestEndReason
    typealias Error = GuestPlayError

    enum Input {
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
    var onEvent: ((GuestEvent) -> Void)?
    /// Every shown frame, on the decode thread; the frame is reused afterwards.
    var onFrame: ((VideoFrame) -> Void)?
    /// Every decoded audio frame (planar float, the stream's rate and channels), on the
    /// decode thread; set before `start()`.
    var onAudio: ((AudioFrame) -> Void)?

    let configuration: Configuration
    let queue: BoundedQueue<Input>
    /// Set by `start()` before the threads it starts.
    var loop: EventLoop?

    /// What more than one thread touches.
    struct Shared {
        var stats = GuestStats()
        var latency = LatencyStatistics()
        var sync = AVSyncMeter()
        var endReason: EndReason?
        var error: Swift.Error?
        var stopRequested: EndReason?
        /// The current player (a reconnect makes a new one).
        var player: (any StreamPlayer)?
        /// The decode thread, once it runs.
        var decodeThread: pthread_t?
        /// The hear stream's player while co-hosting.
        var hearPipeline: CohostStreamFeed?
    }

    let shared = Mutex(Shared())
    let finished = RunEnd()
    /// Set by `start()` before the threads it starts.
    var startMicros: UInt64 = 0

    // Loop.
    var skippingToKeyframe = false
    var resendConfiguration: Input?
    var resendAudioConfiguration: Input?
    var sawMedia = false
    var noVideoTimer: TimerHandle?
    var everPlayed = false
    var attempt = 0
    var retryTimer: TimerHandle?
    /// The token provider's time limit for the first connect, while it runs.
    var firstConnectTimer: TimerHandle?
    /// The run is ending: no new player is made.
    var connectsEnded = false

    // Decode.
    var decoder: H264Decoder?
    var decoderConfiguration: H264Bitstream.AVCDecoderConfiguration?
    var y4m: Y4MWriter?
    var recorder: GuestRecorder?
    var out: GuestRecorder?
    var outFailed = false
    var wav: PCMWriter?
    var pcm: PCMWriter?
    var audioDecoder: AACDecoder?
    var audioConfiguration: [UInt8]?
    var firstAudioMicros: Int64?
    var audioOnlyByMetadata = false
    var levels = AudioLevelMeter()
    var lastLevelEventMicros: UInt64 = 0
    var firstAudioShown = false
    /// Beep onsets of the hear stream (mouth-to-ear lines).
    var heardBeeps = AVSyncMeter()
    var lastFrame: VideoFrame?
    var metadata: RTMPStreamMetadata?
    var backlog: [Input] = []
    var firstFrameShown = false
    var buffering = false
    /// When the refill after a stall began holding pictures, and its last reported percent.
    var refillStartMicros: UInt64?
    var refillPercent = 0
    var lastShownMicros: UInt64 = 0
    var nextStatusMicros: UInt64 = 0
    var framesAtLastStatus = 0

    init(configuration: Configuration) throws {
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
    var stats: GuestStats {
        let player = playerStats
        // The samples are copied out, to sort them outside the lock.
        let (stats, latency, sync) = shared.withLock { ($0.stats, $0.latency, $0.sync) }
        var copy = stats
        copy.bytesReceived = player.bytesReceived
        copy.receiveBytesPerSecond = player.receiveRate
        copy.cacheMilliseconds = player.bufferedMilliseconds
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
    var playerStats: RTMPPlayer.Stats { currentPlayer?.stats ?? RTMPPlayer.Stats() }

    var currentPlayer: (any StreamPlayer)? {
        shared.withLock { $0.player }
    }

    /// Why the run ended; nil while it runs.
    var endReason: EndReason? {
        shared.withLock { $0.endReason }
    }

    /// The error that ended the run, if any.
    var error: Swift.Error? {
        shared.withLock { $0.error }
    }

    /// Opens the outputs, starts the player's loop and the decode thread; returns at once
    /// (the connect, and the token provider's answer, follow on the loop).
    func start() throws {
        try openOutputs()
        let loop = try EventLoop(name: "liveline-guest")
        self.loop = loop
        startMicros = Clock.monotonicMicros()
        loop.start()
        // The connect (and a token provider's answer) comes on the loop: the caller
        // does not wait for either.
        if let tokens = configuration.tokenProvider.map(StreamTokenSource.init) {
            loop.execute { [self] in connect(tokens: tokens, loop: loop) }
        } else {
            loop.execute { [self] in reconnect(to: configuration.url, loop: loop) }
        }
        let thread = Thread { [self] in decodeLoop() }
        thread.name = "liveline.decode"
        thread.start()
    }

    /// Asks the run to end (Ctrl-C): outputs are finished and the player closed.
    func stop() {
        shared.withLock { state in
            if state.stopRequested == nil { state.stopRequested = .stopped }
        }
    }

    /// True on this pipeline's decode thread (in its handlers), where waiting for the
    /// end would wait for itself.
    var isDecodeThread: Bool {
        let thread = shared.withLock { $0.decodeThread }
        return thread.map { pthread_equal($0, pthread_self()) != 0 } ?? false
    }

    /// Waits until the run has ended; throws the error that ended it.
    func wait() throws {
        finished.wait()
        if let error { throw error }
    }

    /// Waits up to `seconds`; true when the run has ended (throws its error then).
    func wait(seconds: Double) throws -> Bool {
        guard finished.wait(seconds: seconds) else { return false }
        if let error { throw error }
        return true
    }

    func requestedEnd() -> EndReason? {
        shared.withLock { $0.stopRequested }
    }

    func finish(reason: EndReason, error: Swift.Error?) {
        queue.close()
        stopHearing()
        var failure = error
        if let loop {
            let done = DispatchSemaphore(value: 0)
            let stopped = loop.execute { [self] in
                retryTimer?.cancel()
                firstConnectTimer?.cancel()
                connectsEnded = true
                done.signal()
            }
            if stopped { _ = done.wait(timeout: .now() + 2) }
        }
        if let player = currentPlayer {
            player.close()
            player.waitUntilClosed(timeout: .seconds(2))
        }
        loop?.shutdown()
        if let error = finishOutputs(), failure == nil { failure = error }
        shared.withLock { state in
            state.endReason = failure == nil ? reason : .failed
            state.error = failure
        }
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
