import Foundation
import LiveCore
import LiveNet

/// Plays one HTTP-FLV stream (`http://…/live/x.flv`: a LiveLine relay, nginx-http-flv,
/// SRS, ffmpeg's `-listen 1` server) on a LiveNet event loop, delivering the same events
/// as `RTMPPlayer` through the same checks (`FLVPlayDemuxer`), so a guest plays it
/// through the same decode path.
///
/// One GET, then the body read as it comes (chunked, sized or close-delimited, by
/// `HTTPResponseReader`) and its FLV tags read by `FLVTagReader` (size budget
/// `Configuration.maxTagBytes`); nothing more than one tag is held. A 2xx head is
/// `.connected`, the FLV header after it `.playing` (so a web page answered in its place
/// fails at once instead of being retried); any other answer is `.failed(.rejected)` with the
/// status, and the relay's `{"code":…,"message":…}` refusal as its description (so
/// `refusalCode` reads the SDK code). The end of a chunked or sized body is
/// `.streamEnded` (the server ended the stream); a close-delimited body's close, or any
/// cut, is `.failed(.connectionLost)`: a live stream has no natural end, so the caller
/// reconnects, as after a lost RTMP connection.
///
/// `start()`, `close()`, `stats` and `markConsumed(upTo:)` may be called from any thread.
public final class HTTPFLVPlayer: @unchecked Sendable {
    // @unchecked: fields marked "loop" are touched only on `loop`'s thread; what other
    // threads read is in `progress`, under its lock.

    public struct Configuration: Sendable {
        /// Connect, the response head and the FLV header must come within this time.
        public var connectTimeout: Duration
        /// The largest FLV tag accepted (`FLVTagReader`).
        public var maxTagBytes: Int
        /// The largest response head accepted.
        public var maxHeadBytes: Int

        public init(connectTimeout: Duration = .seconds(10), maxTagBytes: Int = FLVTagReader.defaultMaxTagBytes,
                    maxHeadBytes: Int = 16 * 1024) {
            self.connectTimeout = connectTimeout
            self.maxTagBytes = maxTagBytes
            self.maxHeadBytes = maxHeadBytes
        }
    }

    /// The most of a refusal's body kept for its message.
    static let maxRefusalBytes = 4096

    public let url: HTTPFLVURL
    public let loop: EventLoop
    public let configuration: Configuration

    /// Events, called on the loop thread; set before `start()`.
    public var onEvent: (@Sendable (RTMPPlayer.Event) -> Void)?

    private let progress = PlayerProgress()

    // Loop.
    private var connection: TCPConnection?
    private var response: HTTPResponseReader
    private var flv: FLVTagReader
    private lazy var demuxer = FLVPlayDemuxer(url: url.description)
    /// A non-2xx answer, and its body as it comes.
    private var refusal: (status: HTTPStatus, body: [UInt8])?
    private var headTimer: TimerHandle?
    /// The FLV header came: `.playing` was delivered.
    private var playStarted = false
    /// The server ended the body: what follows is the caller's close.
    private var bodyEnded = false
    private var closeRequested = false
    private var warnedAboutData = false
    private lazy var statsTimer = RepeatingTimer(loop: loop, every: .milliseconds(200))

    public init(url: HTTPFLVURL, loop: EventLoop, configuration: Configuration = Configuration()) {
        self.url = url
        self.loop = loop
        self.configuration = configuration
        response = HTTPResponseReader(maxHeadBytes: configuration.maxHeadBytes)
        flv = FLVTagReader(maxTagBytes: configuration.maxTagBytes)
    }

    /// The current figures (any thread).
    public var stats: RTMPPlayer.Stats { progress.stats }

    /// The error that stopped the player, if any (any thread).
    public var error: RTMPClientError? { progress.lifecycle.error }

    /// Connects and sends the GET. The loop must be running.
    public func start() {
        progress.lifecycle.setState(.connecting)
        let accepted = loop.execute { [self] in startOnLoop() }
        if !accepted { fail(.connectionLost(url: url.description, .loopShutdown)) }
    }

    /// Closes the connection; `.closed` follows.
    public func close() {
        let accepted = loop.execute { [self] in
            closeRequested = true
            headTimer?.cancel()
            headTimer = nil
            guard let connection else { return finishClosed() }
            connection.close()
        }
        if !accepted { finishClosed() }
    }

    /// Waits until the player is closed or failed; false on timeout.
    @discardableResult
    public func waitUntilClosed(timeout: Duration) -> Bool {
        progress.lifecycle.waitUntilEnded(timeout: timeout)
    }

    /// The consumer has taken the packets up to `dts` (see `RTMPPlayer.markConsumed`).
    public func markConsumed(upTo dts: MediaTime) {
        progress.markConsumed(upTo: dts)
    }

    // MARK: - Loop

    private func startOnLoop() {
        guard connection == nil, !closeRequested else { return }
        guard let port = UInt16(exactly: url.port) else {
            return fail(.connectFailed(url: url.description, .badAddress("port \(url.port)")))
        }
        let timeout = configuration.connectTimeout
        headTimer = loop.schedule(after: timeout) { [weak self] in
            guard let self else { return }
            headTimer = nil
            // The failure first: the abort's close would report a lost connection.
            fail(.timedOut(url: url.description, what: "connect and the FLV answer"))
            connection?.abort(.timedOut("the answer of \(url)"))
        }
        TCPConnection.connect(host: url.host, port: port, on: loop, timeout: timeout) { [weak self] result in
            guard let self else {
                if case .success(let connection) = result { connection.close() }
                return
            }
            switch result {
            case .failure(let error):
                headTimer?.cancel()
                fail(.connectFailed(url: url.description, error))
            case .success(let connection):
                guard !closeRequested, !progress.lifecycle.state.hasEnded else {
                    connection.close()
                    return finishClosed()
                }
                self.connection = connection
                connection.handler = HTTPFLVConnectionHandler(player: self)
                statsTimer.start { [weak self] in self?.updateStats() }
                let request = "GET \(url.target) HTTP/1.1\r\nHost: \(url.hostHeader)\r\nUser-Agent: LiveLine\r\n"
                    + "Accept: */*\r\nConnection: close\r\n\r\n"
                connection.write(Array(request.utf8))
            }
        }
    }

    fileprivate func read(_ bytes: UnsafeRawBufferPointer) {
        response.append(contentsOf: bytes)
        do throws(HTTPResponseReader.Error) {
            while self.connection != nil {
                switch try response.next() {
                case .head(let head): answered(head)
                case .body(let body): try received(body)
                case .end: return bodyEnd()
                case .needMore: return
                }
            }
        } catch {
            end(.protocolViolation(url: url.description, reason: "HTTP: \(error)"))
        }
    }

    private func answered(_ head: HTTPResponseReader.Head) {
        guard (200..<300).contains(head.status.code) else {
            refusal = (head.status, [])
            return
        }
        onEvent?(.connected)
    }

    private func received(_ body: [UInt8]) throws(HTTPResponseReader.Error) {
        if var pending = refusal {
            pending.body += body.prefix(Self.maxRefusalBytes - pending.body.count)
            refusal = pending
            if pending.body.count >= Self.maxRefusalBytes { refuse() }
            return
        }
        flv.append(contentsOf: body)
        do throws(FLVTagReader.Error) {
            while connection != nil, let tag = try flv.next() {
                startPlaying()
                handle(tag)
            }
            // A header alone (a stream with no tag yet) is playing too.
            if flv.header != nil { startPlaying() }
        } catch {
            end(.protocolViolation(url: url.description, reason: "\(error)"))
        }
    }

    /// The answer is FLV: the play has started.
    private func startPlaying() {
        guard !playStarted else { return }
        playStarted = true
        headTimer?.cancel()
        headTimer = nil
        progress.lifecycle.setState(.playing)
        onEvent?(.playing)
    }

    private func handle(_ tag: FLVTagReader.Tag) {
        let now = Clock.monotonicMicros()
        let player = "HTTP-FLV play of \(url)"
        switch tag.type {
        case FLVTagWriter.TagType.video:
            if let error = progress.deliver(demuxer.video(tag.payload, timestamp: tag.timestamp, receivedMicros: now),
                                            player: player, to: onEvent) {
                end(error)
            }
        case FLVTagWriter.TagType.audio:
            // Audio never ends the play (as with RTMP).
            _ = progress.deliver(demuxer.audio(tag.payload, timestamp: tag.timestamp, receivedMicros: now),
                                 player: player, to: onEvent)
        case FLVTagWriter.TagType.script:
            do {
                if let metadata = try RTMPData(decoding: AMF0Decoder.decodeAll(tag.payload)).metadata {
                    onEvent?(.metadata(metadata))
                }
            } catch {
                // The metadata is informative only: a bad one is logged once and skipped.
                if !warnedAboutData { Log.warning("\(player): a script tag was skipped: \(error)") }
                warnedAboutData = true
            }
        default:
            break
        }
    }

    /// The body is complete: a refusal is reported, a stream has ended.
    private func bodyEnd() {
        if refusal != nil { return refuse() }
        bodyEnded = true
        headTimer?.cancel()
        onEvent?(.streamEnded)
    }

    private func refuse() {
        guard let (status, body) = refusal else { return }
        refusal = nil
        end(.rejected(url: url.description, Self.refusalStatus(status, body: body)))
    }

    /// The refusal as an error status: code "HTTP 404" and the reason, or the relay's
    /// `{"code":213,"message":"…"}` as "213 …" (what `refusalCode` reads).
    static func refusalStatus(_ status: HTTPStatus, body: [UInt8]) -> RTMPStatus {
        struct Refusal: Decodable {
            var code: Int
            var message: String
        }
        if let refusal = try? JSONDecoder().decode(Refusal.self, from: Data(body)) {
            return RTMPStatus(level: "error", code: "HTTP \(status.code)", description: "\(refusal.code) \(refusal.message)")
        }
        let text = String(decoding: body.prefix(200), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        let firstLine = text.split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
        return RTMPStatus(level: "error", code: "HTTP \(status.code)",
                          description: firstLine.isEmpty ? status.reason : "\(status.reason): \(firstLine)")
    }

    fileprivate func closed(_ error: NetError?) {
        statsTimer.cancel()
        updateStats()
        connection = nil
        headTimer?.cancel()
        headTimer = nil
        if closeRequested { return finishClosed() }
        if refusal != nil { return refuse() }
        // After the end of the body the caller closes (`close()` finds no connection).
        if bodyEnded { return }
        fail(.connectionLost(url: url.description, error))
    }

    /// Ends the play on `error`: the connection is dropped (after the failure is
    /// reported, so the close does not report a lost connection first).
    private func end(_ error: RTMPClientError) {
        let connection = self.connection
        self.connection = nil
        statsTimer.cancel()
        fail(error)
        connection?.abort(nil)
    }

    private func updateStats() {
        progress.update(bytesRead: connection?.bytesRead, demuxer: demuxer, now: Clock.monotonicMicros())
    }

    private func fail(_ error: RTMPClientError) {
        if progress.lifecycle.fail(error) { onEvent?(.failed(error)) }
    }

    private func finishClosed() {
        if progress.lifecycle.finishClosed() { onEvent?(.closed) }
    }
}

/// The player's connection handler; holds the player weakly (it may be released while
/// the connection's last callbacks run). Loop thread only.
private final class HTTPFLVConnectionHandler: TCPConnectionHandler {
    weak var player: HTTPFLVPlayer?

    init(player: HTTPFLVPlayer) {
        self.player = player
    }

    func onRead(_ connection: TCPConnection, _ bytes: UnsafeRawBufferPointer) {
        player?.read(bytes)
    }

    func onClose(_ connection: TCPConnection, _ error: NetError?) {
        player?.closed(error)
    }
}
