import Foundation
import LiveAuth
import LiveCodec
import LiveCore
import LiveNet
import LiveRTMP
import Synchronization

/// Pushes the hoster's encoded stream (H.264 and/or AAC) to an RTMP server
/// (`liveline host RTMP_URL`, the anyRTC SDK: startPushRtmpStream / stopRtmpStream), keeping it
/// up through a lost connection and a congested network.
///
/// - `open` runs the sink's event loop, connects and publishes, waiting at most the
///   connect timeout (a refused or silent server is an error naming the URL, never a
///   hang), then queues onMetaData, the AVC sequence header and the AAC header (each
///   for the tracks the stream has).
/// - Reconnect: when the connection is lost, packets are dropped (capture and encoding
///   go on) while retries follow `Options.backoff`; on success the metadata and both
///   sequence headers are sent again, the encoder is asked for an IDR and no video is
///   sent before it (audio goes on at once), so players recover at once. When the tries
///   are used up the sink reports `failed(101)` and the next `write` throws, which ends
///   the pipeline.
/// - Congestion: the kernel holds at most 200 ms of what the link carries (the rest waits
///   in the publisher's queue); once the queue's delay (its bytes, the kernel's
///   unacknowledged ones included, at the link's rate) passes
///   `Options.congestionMilliseconds`, the publisher drops video, the
///   queued frames with it, until the queue is back under the bound and a keyframe comes,
///   which the sink asks the encoder for as soon as the queue has drained (never a broken
///   GOP; audio goes on).
///   With `Options.bitrate` set, a `BitrateController` sampled four times a second
///   (the queue's delay, the throughput the server acknowledged, the frames
///   congestion dropped) cuts the encoder's bitrate and probes it back up. A lost
///   connection is not congestion: the controller is told of the loss and of the
///   reconnect, and the push resumes at the last good rate.
///
/// `open`, `close` and the video `write` run on the encode thread, the audio `write` on
/// the audio thread; `onEvent` is called on the sink's event-loop thread (a failed first
/// connect: on the thread that called `open`) and must not block.
public final class RTMPPublishSink: EncodedVideoSink, @unchecked Sendable {
    // @unchecked: fields marked "loop" are touched only on the loop's thread; `loop`,
    // `encoder` and `onEvent` are set before `open` or by `open` and `close`; the rest is in `shared`.

    public struct Options: Sendable {
        public var publisher = RTMPPublisher.Configuration()
        /// Retries after a lost connection (`maxTries` 0: none, fail at once).
        public var backoff = ReconnectBackoff()
        /// The queue's delay (`RTMPPublisher.Stats.queueDelayMilliseconds`) past which frames
        /// are dropped to the next keyframe.
        public var congestionMilliseconds = 500
        /// Adaptive bitrate limits; nil keeps the encoder's bitrate.
        public var bitrate: BitrateController.Settings?
        /// Asked for a fresh token before the first connect and every reconnect; the token
        /// goes on the stream name as `?token=` (replacing one in the URL). nil: the URL as given.
        public var tokenProvider: TokenProvider?

        public init() {
            // A small kernel send buffer (the kernel doubles it): a narrow link then
            // shows up as queued media here within a fraction of a second.
            publisher.connectionOptions.sendBufferBytes = 64 << 10
            // And little of it unsent: the backlog waits in the publisher's queue, where
            // video can still be dropped, not in the kernel's.
            publisher.connectionOptions.notSentLowWatermarkBytes = 16 << 10
            // Nor in the connection's own write queue: the next message waits here until
            // the kernel has taken the last one.
            publisher.connectionOptions.highWatermark = 1
            publisher.connectionOptions.lowWatermark = 0
            // Nor at the link's bottleneck: a fifth of a second of what it carries.
            publisher.inFlightMilliseconds = 200
        }
    }

    public let url: RTMPURL
    public let options: Options
    /// The encoder to ask for IDRs and bitrate changes; set before `open`.
    public var encoder: H264Encoder?
    /// Publish events (see `HosterEvent`), on the loop thread; set before `open`.
    public var onEvent: (@Sendable (HosterEvent) -> Void)?

    private var loop: EventLoop?
    /// What the loop shares with the threads that write packets, close and read the figures.
    private struct Shared {
        var current: RTMPPublisher?
        var waitingForKeyframe = false
        var closing = false
        var finalFailure: LiveError?
        var reconnects = 0
        var droppedOffline = 0
        var droppedEarlier = 0
        var droppedAudioOffline = 0
        var droppedAudioEarlier = 0
        var congestionDroppedEarlier = 0
        var stream: VideoStreamInfo?
        var audio: AudioStreamInfo?
    }

    private let shared = Mutex(Shared())

    // Loop.
    private var attempt = 0
    private var retryTimer: TimerHandle?
    private var statusTimer: TimerHandle?
    private var controller: BitrateController?
    /// The publisher the last controller sample came from, and its congestion drops then.
    private var sampled: (publisher: ObjectIdentifier, congestionDropped: Int)?
    private var ticks = 0
    private var everPublished = false
    /// What the controller is doing (for the status); nil without adaptive bitrate.
    private let abrPhase = Mutex<BitrateController.Phase?>(nil)

    public init(url: RTMPURL, options: Options = Options()) {
        self.url = url
        var options = options
        options.publisher.maxQueuedMilliseconds = options.congestionMilliseconds
        self.options = options
    }

    public convenience init(url: RTMPURL, configuration: RTMPPublisher.Configuration) {
        var options = Options()
        options.publisher = configuration
        options.congestionMilliseconds = configuration.maxQueuedMilliseconds
        self.init(url: url, options: options)
    }

    /// The publisher in use; nil while reconnecting.
    public var publisher: RTMPPublisher? {
        shared.withLock { $0.current }
    }

    /// The current publisher's figures (zero while reconnecting).
    public var stats: RTMPPublisher.Stats { publisher?.stats ?? RTMPPublisher.Stats() }

    /// The figures of the status event, now (any thread).
    public var status: HosterStatus {
        let publisherStats = stats
        return shared.withLock { shared in
            var status = HosterStatus()
            status.delayMilliseconds = publisherStats.queuedMilliseconds
            status.upstreamBytesPerSecond = Int(publisherStats.sendRate)
            status.droppedFrames = shared.droppedEarlier + shared.droppedOffline + publisherStats.droppedFrames
            status.bitrateKbps = encoder?.bitrateKbps ?? 0
            status.reconnects = shared.reconnects
            status.droppedAudioFrames = shared.droppedAudioEarlier + shared.droppedAudioOffline + publisherStats.droppedAudioFrames
            status.sentAudioFrames = publisherStats.sentAudioFrames
            status.queuedBytes = publisherStats.queuedBytes + publisherStats.unacknowledgedBytes
            status.throughputBytesPerSecond = Int(publisherStats.throughput)
            status.congestionDroppedFrames = shared.congestionDroppedEarlier + publisherStats.congestionDroppedFrames
            status.abr = abrPhase.withLock { $0?.rawValue }
            return status
        }
    }

    public func open(stream: VideoStreamInfo) throws {
        try open(video: stream, audio: nil)
    }

    /// Opens the push for the tracks given (at least one).
    public func open(video stream: VideoStreamInfo?, audio: AudioStreamInfo?) throws {
        precondition(stream != nil || audio != nil, "a push needs video or audio")
        let loop = try EventLoop(name: "liveline-rtmp")
        loop.start()
        self.loop = loop
        shared.withLock { shared in
            shared.stream = stream
            shared.audio = audio
        }
        if let settings = options.bitrate, let stream {
            var settings = settings
            // Cut before the queue reaches the bound where frames are dropped.
            settings.highQueueMilliseconds = min(settings.highQueueMilliseconds, max(50, options.congestionMilliseconds * 3 / 5))
            settings.lowQueueMilliseconds = min(settings.lowQueueMilliseconds, settings.highQueueMilliseconds / 2)
            settings.reservedKbps = (audio?.bitrate ?? 0) / 1000
            let controller = BitrateController(settings: settings, startKbps: stream.bitrate / 1000)
            self.controller = controller
            abrPhase.withLock { $0 = controller.phase }
            if controller.targetKbps != stream.bitrate / 1000 { encoder?.setBitrate(kbps: controller.targetKbps) }
        }
        let publisher: RTMPPublisher
        do {
            let url = try options.tokenProvider.map(StreamTokenSource.init)?
                .url(for: self.url, timeout: options.publisher.connectTimeout) ?? self.url
            publisher = makePublisher(url: url, loop: loop)
        } catch {
            loop.shutdown()
            self.loop = nil
            onEvent?(.failed((error as? LiveError)?.code ?? .networkError))
            throw error
        }
        shared.withLock { $0.current = publisher }
        publisher.start()
        do {
            try publisher.waitUntilPublished()
        } catch {
            publisher.abort()
            loop.shutdown()
            self.loop = nil
            shared.withLock { $0.current = nil }
            // A refusal carries its own code; 100 (network error) is for what never got an answer.
            if let refused = (error as? RTMPClientError)?.refusalCode {
                throw failedAtOpen(LiveError(refused, "RTMP publish refused: \(error)", isRefusal: true))
            }
            throw failedAtOpen(LiveError(.networkError, "RTMP publish failed: \(error)"))
        }
        sendHeaders(publisher, stream: stream, audio: audio)
        loop.executeCoalesced { [self] in scheduleStatus() }
    }

    /// The first connect failed: reported as `failed` with its code (the anyRTC SDK's
    /// onRtmpStreamFailed, on the opening thread), then thrown by `open`.
    private func failedAtOpen(_ error: LiveError) -> LiveError {
        onEvent?(.failed(error.code))
        return error
    }

    /// One AAC frame (audio thread). Never waits for a video keyframe; dropped while
    /// the connection is down.
    public func write(_ packet: EncodedAudioPacket) throws {
        try publisher(counting: \.droppedAudioOffline)?.send(packet)
    }

    public func write(_ packet: EncodedVideoPacket) throws {
        // After a reconnect nothing goes before the IDR the encoder was asked for.
        try publisher(counting: \.droppedOffline) { shared in
            guard shared.waitingForKeyframe else { return true }
            guard packet.isKeyframe else { return false }
            shared.waitingForKeyframe = false
            return true
        }?.send(packet)
    }

    /// The publisher to hand a packet to (decided in `shared`): throws the failure that
    /// ended the push; nil, the packet counted in `dropped`, while reconnecting or when
    /// `admit` turns it away.
    private func publisher(counting dropped: WritableKeyPath<Shared, Int>,
                           admit: (inout Shared) -> Bool = { _ in true }) throws -> RTMPPublisher? {
        try shared.withLock { (shared) throws(LiveError) in
            if let failure = shared.finalFailure { throw failure }
            guard let publisher = shared.current, admit(&shared) else {
                shared[keyPath: dropped] += 1
                return nil
            }
            return publisher
        }
    }

    public func close() throws {
        guard let loop else { return }
        shared.withLock { $0.closing = true }
        onLoop(loop) { [self] in
            retryTimer?.cancel()
            statusTimer?.cancel()
        }
        if let publisher {
            publisher.close()
            if !publisher.waitUntilClosed(timeout: .seconds(3)) { publisher.abort() }
            publisher.waitUntilClosed(timeout: .seconds(1))
        }
        onLoop(loop) { [self] in onEvent?(.closed) }
        loop.shutdown()
        self.loop = nil
    }

    /// Runs `body` on the loop and waits for it (the loop must not be the caller).
    private func onLoop(_ loop: EventLoop, _ body: @escaping @Sendable () -> Void) {
        let done = DispatchSemaphore(value: 0)
        let accepted = loop.execute {
            body()
            done.signal()
        }
        if accepted { _ = done.wait(timeout: .now() + 2) }
    }

    // MARK: - Loop

    private func makePublisher(url: RTMPURL, loop: EventLoop) -> RTMPPublisher {
        var configuration = options.publisher
        configuration.tracks = shared.withLock { shared in
            Set((shared.stream == nil ? [] : [.video]) + (shared.audio == nil ? [] : [.audio]))
        }
        let publisher = RTMPPublisher(url: url, loop: loop, configuration: configuration)
        publisher.onEvent = { [weak self, unowned publisher] event in self?.handle(event, from: publisher) }
        publisher.onKeyframeNeeded = { [weak self] in
            // Dropping, and the queue has drained: only a keyframe resumes the picture.
            self?.encoder?.requestKeyframe()
        }
        return publisher
    }

    /// onMetaData, then the AVC and AAC headers of the tracks the stream has.
    private func sendHeaders(_ publisher: RTMPPublisher, stream: VideoStreamInfo?, audio: AudioStreamInfo?) {
        var metadata: RTMPStreamMetadata
        if let stream {
            let bitrate = Double(encoder?.bitrateKbps ?? stream.bitrate / 1000)
            metadata = RTMPStreamMetadata(width: stream.width, height: stream.height, framerate: Double(stream.fps),
                                          videoDataRateKbps: bitrate)
            if let audio {
                metadata.setAudio(sampleRate: audio.sampleRate, channelCount: audio.channelCount,
                                  dataRateKbps: Double(audio.bitrate) / 1000)
            } else {
                metadata.object["hasAudio"] = .boolean(false)
            }
        } else if let audio {
            metadata = RTMPStreamMetadata(audioSampleRate: audio.sampleRate, channelCount: audio.channelCount,
                                          audioDataRateKbps: Double(audio.bitrate) / 1000)
        } else {
            return
        }
        publisher.send(metadata: metadata)
        if let stream { try? publisher.send(sequenceHeader: encoder?.streamInfo.extradata ?? stream.extradata) }
        if let audio { publisher.send(audioHeader: audio) }
    }

    private func handle(_ event: RTMPPublisher.Event, from publisher: RTMPPublisher) {
        switch event {
        case .published:
            attempt = 0
            let reconnected = everPublished
            let (isCurrent, stream, audio) = shared.withLock { shared in
                let isCurrent = shared.current === publisher
                if reconnected && isCurrent { shared.reconnects += 1 }
                return (isCurrent, shared.stream, shared.audio)
            }
            guard isCurrent else { return }
            if reconnected {
                // A reconnect (or a takeover of the name) is not congestion: the push
                // resumes at the last good rate.
                adapt { $0.reconnected(atMilliseconds: Self.nowMilliseconds) }
                // Players joining now need the headers and a keyframe before anything else.
                sendHeaders(publisher, stream: stream, audio: audio)
                if stream != nil {
                    shared.withLock { $0.waitingForKeyframe = true }
                    encoder?.requestKeyframe()
                }
            }
            everPublished = true
            onEvent?(.ok)
        case .failed(let error):
            let (isCurrent, stop) = shared.withLock { shared in
                let isCurrent = shared.current === publisher
                if isCurrent {
                    shared.droppedEarlier += publisher.stats.droppedFrames
                    shared.droppedAudioEarlier += publisher.stats.droppedAudioFrames
                    shared.congestionDroppedEarlier += publisher.stats.congestionDroppedFrames
                    shared.current = nil
                }
                return (isCurrent, shared.closing)
            }
            guard isCurrent, !stop, everPublished else { return }
            // Whatever the lost connection showed last (a stall, a queue) was not the network's capacity.
            adapt { $0.connectionLost() }
            if case .rejected(_, let status) = error, status.code != RTMPStatus.Code.publishBadName {
                giveUp(error.refusalCode ?? .liveError, "RTMP publish refused: \(error)", isRefusal: true)
            } else {
                // BadName on a reconnect is worth another try: the relay may still hold the
                // name for this hoster's own dead connection until that has been silent for
                // its takeover interval, and the next try carries a fresh token.
                retry()
            }
        case .connected, .status, .closed:
            break
        }
    }

    private func retry() {
        guard let loop else { return }
        guard let delay = options.backoff.delay(attempt: attempt, unit: Double.random(in: 0...1)) else {
            return giveUp(.networkDisconnected, "RTMP publish to \(url) lost; \(attempt) reconnects failed")
        }
        attempt += 1
        onEvent?(.reconnecting(times: attempt))
        retryTimer = loop.schedule(after: .milliseconds(Int64(delay * 1000))) { [weak self] in
            guard let self, !self.isClosing else { return }
            guard let tokens = self.options.tokenProvider.map(StreamTokenSource.init) else {
                return self.reconnect(to: self.url, loop: loop)
            }
            tokens.fetch(for: self.url) { [weak self] result in
                // Never refused for a full queue: one per reconnect try, and a lost one
                // would end the retries.
                loop.executeCoalesced { [weak self] in
                    guard let self, !self.isClosing else { return }
                    switch result {
                    case .success(let url):
                        self.reconnect(to: url, loop: loop)
                    case .failure(let error):
                        // Counts as a failed try: the provider may answer next time.
                        Log.warning("RTMP publish to \(self.url): \(error)")
                        self.retry()
                    }
                }
            }
        }
    }

    /// A new publisher to `url` becomes the current one. Loop.
    private func reconnect(to url: RTMPURL, loop: EventLoop) {
        let publisher = makePublisher(url: url, loop: loop)
        shared.withLock { $0.current = publisher }
        publisher.start()
    }

    private var isClosing: Bool {
        shared.withLock { $0.closing }
    }

    private func giveUp(_ code: LiveCode, _ detail: String, isRefusal: Bool = false) {
        shared.withLock { $0.finalFailure = LiveError(code, detail, isRefusal: isRefusal) }
        onEvent?(.failed(code))
    }

    /// Controller samples per status event (once a second).
    private static let samplesPerStatus = 4

    private func scheduleStatus() {
        guard let loop else { return }
        statusTimer = loop.schedule(after: .milliseconds(1000 / Int64(Self.samplesPerStatus))) { [weak self] in
            guard let self else { return }
            self.tick()
            self.scheduleStatus()
        }
    }

    private static var nowMilliseconds: Int64 { Int64(Clock.monotonicMicros() / 1000) }

    /// Applies `change` to the controller (loop) and the new target to the encoder.
    private func adapt(_ change: (inout BitrateController) -> Int?) {
        guard var controller else { return }
        if let next = change(&controller) { encoder?.setBitrate(kbps: next) }
        self.controller = controller
        abrPhase.withLock { $0 = controller.phase }
    }

    /// A controller sample four times a second, the status event every fourth tick.
    private func tick() {
        let (stop, publisher) = shared.withLock { ($0.closing || $0.finalFailure != nil, $0.current) }
        guard !stop, let publisher else { return }
        let stats = publisher.stats
        guard stats.state == .publishing else { return }
        // Drops are counted per connection: a new one starts its count from zero.
        let id = ObjectIdentifier(publisher)
        let dropped = sampled?.publisher == id ? stats.congestionDroppedFrames - (sampled?.congestionDropped ?? 0) : 0
        sampled = (id, stats.congestionDroppedFrames)
        adapt {
            $0.update(BitrateController.Sample(timeMilliseconds: Self.nowMilliseconds, queuedMilliseconds: stats.queueDelayMilliseconds,
                                               droppedFrames: max(0, dropped), sendBytesPerSecond: stats.throughput,
                                               recentBytesPerSecond: stats.recentThroughput))
        }
        ticks += 1
        guard ticks % Self.samplesPerStatus == 0 else { return }
        var reported = status
        reported.bitrateKbps = encoder?.bitrateKbps ?? reported.bitrateKbps
        onEvent?(.status(reported))
    }
}
