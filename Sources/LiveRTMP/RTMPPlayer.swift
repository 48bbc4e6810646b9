import Foundation
import LiveCodec
import LiveCore
import LiveNet

/// Plays one RTMP stream (the anyRTC SDK: the guest's `startRtmpPlay`, reported through
/// onRtmpPlayerOk / onRtmpPlayerStart / onRtmpPlayerClosed) on a LiveNet event loop:
/// connect, play, then the metadata, the decoder configurations and each video and AAC
/// audio packet, delivered to `onEvent` on the loop thread in stream order.
///
/// Audio: the AAC sequence header and raw frames are read with `RTMPAudioMessage`
/// (checked and bounded). A refused audio header or frame never ends the play: it is
/// logged once and audio is ignored until a valid header comes; audio in another format
/// (MP3, Speex…) is counted in `ignoredAudioPackets` and ignored, with one warning.
///
/// `start()`, `close()`, `stats` and `markConsumed(upTo:)` may be called from any
/// thread.
public final class RTMPPlayer: @unchecked Sendable {
    // @unchecked: fields marked "loop" are touched only on `loop`'s thread; the rest
    // is in `lifecycle`, under its lock.

    public struct Configuration: Sendable {
        /// Connect + handshake + play must finish within this time.
        public var connectTimeout: Duration
        public var session: RTMPClientSessionCore.Configuration
        public var connectionOptions: TCPConnectionOptions

        public init(connectTimeout: Duration = .seconds(10),
                    session: RTMPClientSessionCore.Configuration = .init(bufferLengthMilliseconds: 3000),
                    connectionOptions: TCPConnectionOptions = TCPConnectionOptions())
        {
            self.connectTimeout = connectTimeout
            self.session = session
            self.connectionOptions = connectionOptions
        }
    }

    public enum State: Sendable, Equatable {
        case idle, connecting, playing, closed, failed
    }

    /// What the player delivers, on the loop thread, in stream order.
    public enum Event: Sendable {
        /// The server accepted connect.
        case connected
        /// NetStream.Play.Start (the anyRTC SDK: onRtmpPlayerOk).
        case playing
        case metadata(RTMPStreamMetadata)
        /// The AVC sequence header: the AVCDecoderConfigurationRecord as sent and parsed.
        case decoderConfiguration(avcC: [UInt8], H264Bitstream.AVCDecoderConfiguration)
        case video(RTMPVideoPacket)
        /// The AAC sequence header: the AudioSpecificConfig as sent and as read.
        case audioConfiguration(asc: [UInt8], AACAudioSpecificConfig)
        /// A raw AAC frame, after an `audioConfiguration`.
        case audio(RTMPAudioPacket)
        /// A status the flow did not consume (Play.Reset, Play.PublishNotify…).
        case status(RTMPStatus)
        /// The publisher went away (Stream EOF or Play.UnpublishNotify); the connection
        /// stays open and a new publish of the same name plays on.
        case streamEnded
        /// The player stopped on an error (the anyRTC SDK: onRtmpPlayerClosed with an error code).
        case failed(RTMPClientError)
        /// The player closed after `close()` (the anyRTC SDK: onRtmpPlayerClosed).
        case closed
    }

    /// A snapshot of the player's figures, readable from any thread.
    public struct Stats: Sendable, Equatable {
        public var state = State.idle
        public var bytesReceived: UInt64 = 0
        /// Bytes per second over the last second.
        public var receiveRate = 0.0
        public var videoPackets = 0
        /// Audio messages received, all of them.
        public var audioPackets = 0
        /// Audio messages not delivered: another codec than AAC, a refused header or
        /// frame, frames before any header.
        public var ignoredAudioPackets = 0
        /// Media time received but not yet consumed (`markConsumed(upTo:)`), in ms.
        public var bufferedMilliseconds = 0

        public init() {}
    }

    public let url: RTMPURL
    public let loop: EventLoop
    public let configuration: Configuration

    /// Events, called on the loop thread; set before `start()`.
    public var onEvent: (@Sendable (Event) -> Void)?

    private let progress = PlayerProgress()
    private var lifecycle: RTMPClientLifecycle<PlayerProgress.Shared, State> { progress.lifecycle }

    // Loop.
    private var client: RTMPClientConnection?
    private lazy var demuxer = FLVPlayDemuxer(url: url.description)
    /// Refreshes the figures in `progress` while connected.
    private lazy var statsTimer = RepeatingTimer(loop: loop, every: .milliseconds(200))

    public init(url: RTMPURL, loop: EventLoop, configuration: Configuration = Configuration()) {
        self.url = url
        self.loop = loop
        self.configuration = configuration
    }

    /// The current figures (any thread).
    public var stats: Stats { progress.stats }

    /// The error that stopped the player, if any (any thread).
    public var error: RTMPClientError? { lifecycle.error }

    /// Connects and plays (the anyRTC SDK: startRtmpPlay:render:). The loop must be running.
    public func start() {
        lifecycle.setState(.connecting)
        let accepted = loop.execute { [self] in startOnLoop() }
        if !accepted { fail(.connectionLost(url: url.description, .loopShutdown)) }
    }

    /// Sends deleteStream and closes; `.closed` follows (the anyRTC SDK: stopRtmpPlay).
    public func close() {
        let accepted = loop.execute { [self] in
            guard let client else { return finishClosed() }
            client.withCore { try? $0.stop() }
            client.close()
        }
        if !accepted { finishClosed() }
    }

    /// Waits until the player is closed or failed; false on timeout.
    @discardableResult
    public func waitUntilClosed(timeout: Duration) -> Bool {
        lifecycle.waitUntilEnded(timeout: timeout)
    }

    /// The consumer (a decoder) has taken the packets up to `dts`: what remains is the
    /// player's buffered time. Any thread.
    public func markConsumed(upTo dts: MediaTime) {
        progress.markConsumed(upTo: dts)
    }

    // MARK: - Loop

    private func startOnLoop() {
        guard client == nil else { return }
        let client = RTMPClientConnection(url: url, mode: .play, configuration: configuration.session, loop: loop)
        self.client = client
        // The connection's last callbacks can run after the player is released: hold it weakly.
        client.onEvents = { [weak self] events in self?.handle(events) }
        client.onEnd = { [weak self] error in
            guard let self else { return }
            statsTimer.cancel()
            updateStats()
            self.client = nil
            if let error { fail(error) } else { finishClosed() }
        }
        // Started before `open`, which can end the connection at once: `onEnd` cancels it.
        statsTimer.start { [weak self] in self?.updateStats() }
        client.open(timeout: configuration.connectTimeout, options: configuration.connectionOptions)
    }

    private func handle(_ events: [RTMPClientSessionCore.Event]) {
        for event in events {
            guard let client else { return }
            switch event {
            case .connected:
                onEvent?(.connected)
            case .playing:
                client.markReady()
                lifecycle.setState(.playing)
                onEvent?(.playing)
            case .failed(let status):
                client.end(.rejected(url: url.description, status))
            case .status(let status):
                onEvent?(.status(status))
                if status.code == RTMPStatus.Code.playUnpublishNotify { onEvent?(.streamEnded) }
            case .streamEOF:
                onEvent?(.streamEnded)
            case .metadata(let metadata, _):
                onEvent?(.metadata(metadata))
            case .audio(let raw):
                handleAudio(raw)
            case .video(let raw):
                handleVideo(raw, client: client)
            case .publishing:
                break
            }
        }
    }

    private func handleVideo(_ raw: RTMPRawMessage, client: RTMPClientConnection) {
        let output = demuxer.video(raw.payload, timestamp: raw.timestamp, receivedMicros: Clock.monotonicMicros())
        if let error = progress.deliver(output, player: "RTMP play of \(url)", to: onEvent) { client.end(error) }
    }

    private func handleAudio(_ raw: RTMPRawMessage) {
        let output = demuxer.audio(raw.payload, timestamp: raw.timestamp, receivedMicros: Clock.monotonicMicros())
        // Audio never ends the play (see the type's comment).
        _ = progress.deliver(output, player: "RTMP play of \(url)", to: onEvent)
    }

    /// The length size the stream's configuration announced (4 unless it said otherwise).
    public var nalLengthSize: Int { demuxer.lengthSize }

    private func updateStats() {
        progress.update(bytesRead: client?.bytesRead, demuxer: demuxer, now: Clock.monotonicMicros())
    }

    private func fail(_ error: RTMPClientError) {
        if lifecycle.fail(error) { onEvent?(.failed(error)) }
    }

    private func finishClosed() {
        if lifecycle.finishClosed() { onEvent?(.closed) }
    }
}

extension RTMPPlayer.State: RTMPClientState {}
