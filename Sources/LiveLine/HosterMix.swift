import Foundation
import LiveAuth
import LiveCapture
import LiveCore
import LiveMix
import LiveRTMP
import Synchronization

/// The hoster's mix stage (DESIGN.md §2): the host's filtered frames plus the co-hosts'
/// frames, composed by a layout template into the picture that is encoded.
///
/// The host's frames arrive on the capture thread through `process`; each co-host feed
/// delivers frames from its own thread, at its own rate, and the compositor draws every
/// participant's latest frame. With no co-hosts the stage passes the host frame through
/// untouched.
///
/// Co-hosts are kept in the order they joined: co-host n is participant n of the
/// layout. When one leaves, the ones after it move up a place and the layout reflows;
/// a feed's frames always go to its current place (looked up in `state`), so a frame
/// in flight during a removal never lands in someone else's tile.
///
/// While a picture is shared (`startShare`, the anyRTC SDK's screen share), it is the
/// main picture (participant 0, aspect-fit) and the host's own frames go to the tile
/// after the co-hosts'; the mixed frames keep the host frames' times.
public final class HosterMix: Sendable {
    public let compositor: Compositor
    /// The sound side: each stream co-host's voice in the program, and its mix-minus
    /// pushed to its hear stream (`process(audio:)` is the pipeline's audio stage).
    public let voices = CohostVoices()

    /// The co-hosts and the share, shared by the capture thread, the feeds' threads and
    /// the kit; the compositor's participants change only while it is held.
    private struct State {
        var cohosts: [(key: String, feed: CohostInput)] = []
        /// Co-hosts of an audio line: their voices only, no tile.
        var voiceOnly: [(key: String, feed: CohostInput)] = []
        /// The shared picture's feed while a share is on.
        var share: CohostInput?
        var nextTestKey = 0
        var tokenProvider: TokenProvider?
        /// Co-hosts whose video is off (their remote AV status): their frames are not drawn.
        var videoOff: Set<String> = []
        /// The fill image of a co-host tile without video (`setSubBackground`).
        var subBackground: RGBAImage?
    }

    private let state = Mutex(State())

    /// Tokens for playing the co-hosts' streams (a relay with auth on); set by the hoster
    /// from its own provider.
    public var tokenProvider: TokenProvider? {
        get { state.withLock { $0.tokenProvider } }
        set { state.withLock { $0.tokenProvider = newValue } }
    }

    /// setMixVideoModel + setVideoTemplate.
    public init(width: Int, height: Int, template: MixTemplate, options: MixOptions) throws {
        compositor = try Compositor(width: width, height: height, template: template, options: options, cohosts: 0)
    }

    /// The capture-thread stage: the host frame in, the mixed frame out.
    public func process(_ host: VideoFrame) -> VideoFrame {
        let sharing = state.withLock { state in
            let sharing = state.share != nil
            compositor.update(participant: sharing ? state.cohosts.count + 1 : 0, frame: host)
            return sharing
        }
        let mixed = compositor.compose()
        if sharing && mixed !== host {
            // The shared picture is participant 0, whose time the compositor would give.
            mixed.pts = host.pts
            mixed.captureTimeMicros = host.captureTimeMicros
        }
        return mixed
    }

    /// Shares `source`: its frames, read on a thread of its own, become the main picture
    /// (participant 0, aspect-fit: a shared screen is never cropped) and the host's frames
    /// the last small tile. `ended` runs once, on the feed's thread, when the source
    /// fails or ends (nil: stopped). Throws `.alreadyOpen` when a share is on, or when
    /// the layout has no room for the host's tile.
    func startShare(source: VideoSource, ended: @escaping @Sendable (Error?) -> Void) throws {
        let feed = SourceCohostFeed(source: source, deliver: { [weak self] frame in self?.deliverShared(frame) }, ended: ended)
        try state.withLock { (state) throws(LiveError) in
            guard state.share == nil else { throw LiveError(.alreadyOpen, "a picture is already shared") }
            do {
                try compositor.setCohostCount(state.cohosts.count + 1)
            } catch {
                throw LiveError(.lineFull, "the mix has no room for the host's own tile beside \(state.cohosts.count) co-hosts (\(error))")
            }
            compositor.update(participant: 0, frame: nil)
            compositor.setRenderMode(.aspectFit, participant: 0)
            state.share = feed
        }
        do {
            try feed.start()
        } catch {
            stopShare()
            throw error
        }
    }

    /// Ends the share: the host's frames are the main picture again. No-op without one.
    func stopShare() {
        let feed = state.withLock { state -> CohostInput? in
            guard let feed = state.share else { return nil }
            state.share = nil
            compositor.update(participant: state.cohosts.count + 1, frame: nil)
            try? compositor.setCohostCount(state.cohosts.count)  // fewer tiles always fit
            compositor.setRenderMode(.aspectFill, participant: 0)
            return feed
        }
        feed?.stop()
    }

    /// Whether a picture is shared.
    var isSharing: Bool {
        state.withLock { $0.share != nil }
    }

    /// A shared frame to the main picture (the share feed's thread).
    private func deliverShared(_ frame: VideoFrame) {
        state.withLock { state in
            if state.share != nil { compositor.update(participant: 0, frame: frame) }
        }
    }

    /// Adds a co-host whose frames come from `source`, read on a thread of its own,
    /// and reflows the layout. Throws when the layout cannot hold one more.
    public func addCohost(source: VideoSource) throws {
        let key = state.withLock { state in
            state.nextTestKey += 1
            return Self.localKeyPrefix + String(state.nextTestKey)
        }
        try add(key: key) { deliver in SourceCohostFeed(source: source, deliver: deliver) }
    }

    /// The audio stage (the pipeline's audio thread): the host block in, the program
    /// block out (see `CohostVoices`).
    public func process(audio host: AudioFrame) -> AudioFrame { voices.process(host) }

    /// Adds the co-host `key` (its peerId) whose video and sound are the RTMP stream at
    /// `url`, and reflows the layout; the tile shows the co-host's fill image until its
    /// first frame. Its voice joins the program; with `hear`, its mix-minus (everyone but
    /// itself) is pushed there. `firstFrame` runs once, on the feed's decode thread
    /// (the anyRTC SDK's onRTCFirstRemoteVideoFrame), `resized` when a later frame has
    /// another size (onRTCRemoteVideoViewChanged). `video` false: a voice only (an audio
    /// line), no tile and its pictures unused. Throws when the layout cannot hold one more.
    public func addCohost(key: String, userId: String = "", stream url: RTMPURL, hear: RTMPURL? = nil,
                          hearOptions: RTMPPublishSink.Options = RTMPPublishSink.Options(),
                          video: Bool = true,
                          firstFrame: @escaping @Sendable (Int, Int) -> Void = { _, _ in },
                          resized: @escaping @Sendable (Int, Int) -> Void = { _, _ in }) throws {
        let tokenProvider = self.tokenProvider
        let voices = self.voices
        voices.add(key: key, userId: userId, hear: hear.map { HearPublisher(url: $0, options: hearOptions) })
        do {
            try add(key: key, tile: video) { deliver in
                StreamCohostInput(feed: CohostStreamFeed(url: url, tokenProvider: tokenProvider, deliver: deliver,
                                                         deliverAudio: { voices.push($0, key: key) }, firstFrame: firstFrame,
                                                         resized: resized))
            }
        } catch {
            voices.remove(key: key)
            throw error
        }
    }

    /// Stops the co-host `key`'s feed and removes it from the layout (the ones after it
    /// move up). Unknown keys are ignored.
    public func removeCohost(key: String) {
        let feed = state.withLock { state -> CohostInput? in
            if let voice = state.voiceOnly.firstIndex(where: { $0.key == key }) {
                return state.voiceOnly.remove(at: voice).feed
            }
            guard let index = state.cohosts.firstIndex(where: { $0.key == key }) else { return nil }
            let feed = state.cohosts.remove(at: index).feed
            compositor.removeCohost(index + 1)
            state.videoOff.remove(key)
            return feed
        }
        guard let feed else { return }
        feed.stop()
        voices.remove(key: key)
    }

    /// Changes the template and options live (the anyRTC SDK's setMixVideoModel: /
    /// setVideoTemplate:…), keeping the co-hosts. Throws when the layout does not fit;
    /// the one in use stays then.
    public func setLayout(template: MixTemplate, options: MixOptions) throws {
        try compositor.setLayout(template: template, options: options)
    }

    /// The fill image of every co-host tile whose video is off or has not arrived yet
    /// (the anyRTC SDK's setVideoSubBackground:); nil: flat grey. Any thread.
    public func setSubBackground(_ image: RGBAImage?) {
        state.withLock { state in
            state.subBackground = image
            compositor.setCohostFillImage(image)
        }
    }

    /// Off: the co-host `key`'s tile shows the fill image instead of its frames (it
    /// turned its camera off: its remote AV status); on: its next frame shows again.
    /// Unknown keys are ignored. Any thread.
    public func setCohostVideo(key: String, enabled: Bool) {
        state.withLock { state in
            guard let index = state.cohosts.firstIndex(where: { $0.key == key }) else { return }
            if enabled {
                state.videoOff.remove(key)
            } else {
                state.videoOff.insert(key)
                compositor.update(participant: index + 1, frame: nil)
            }
        }
    }

    /// Stops every co-host feed.
    public func stop() {
        let running = state.withLock { state in
            (state.cohosts + state.voiceOnly).map(\.feed) + (state.share.map { [$0] } ?? [])
        }
        running.forEach { $0.stop() }
        voices.stop()
    }

    public var cohostCount: Int {
        state.withLock { $0.cohosts.count }
    }

    /// How many co-hosts of the line the mix can show in all: the most its layout holds
    /// on this canvas (`MixLayout.capacity`) less the local test co-hosts (and the host's
    /// own tile while a picture is shared).
    public var lineCapacity: Int {
        let layout = compositor.currentLayout
        let capacity = MixLayout.capacity(canvasWidth: layout.canvasWidth, canvasHeight: layout.canvasHeight,
                                          template: layout.template, options: layout.options)
        let local = state.withLock { state in
            state.cohosts.filter { $0.key.hasPrefix(Self.localKeyPrefix) }.count + (state.share == nil ? 0 : 1)
        }
        return max(0, capacity - local)
    }

    /// Keys of the co-hosts `addCohost(source:)` made (the test co-hosts).
    static let localKeyPrefix = "source-"

    /// The co-host keys in layout order (participant 1 first), then the voice-only ones.
    public var cohostKeys: [String] {
        state.withLock { ($0.cohosts + $0.voiceOnly).map(\.key) }
    }

    private func add(key: String, tile: Bool = true, make: (@escaping (VideoFrame) -> Void) -> CohostInput) throws {
        let deliver: (VideoFrame) -> Void = { [weak self] frame in self?.deliver(frame, key: key) }
        let feed = make(deliver)
        try state.withLock { state in
            guard tile else {
                state.voiceOnly.append((key, feed))
                return
            }
            // While sharing, the host's tile comes after the co-hosts': the newcomer takes
            // its place (cleared of the host's frame) and it moves one on.
            try compositor.setCohostCount(state.cohosts.count + 1 + (state.share == nil ? 0 : 1))
            if state.share != nil { compositor.update(participant: state.cohosts.count + 1, frame: nil) }
            state.cohosts.append((key, feed))
            // A vacated tile lost its fill when the ones after it moved up.
            compositor.setFillImage(state.subBackground, participant: state.cohosts.count)
        }
        try start(feed, key: key)
    }

    private func start(_ feed: CohostInput, key: String) throws {
        do {
            try feed.start()
        } catch {
            removeCohost(key: key)
            throw error
        }
    }

    /// A co-host frame to the participant `key` is now (any feed thread).
    private func deliver(_ frame: VideoFrame, key: String) {
        state.withLock { state in
            guard !state.videoOff.contains(key), let index = state.cohosts.firstIndex(where: { $0.key == key }) else { return }
            compositor.update(participant: index + 1, frame: frame)
        }
    }
}

/// Where a co-host's frames come from: a local source or its RTMP stream.
protocol CohostInput: AnyObject, Sendable {
    func start() throws
    func stop()
}

/// A co-host stream feed as a mix input.
final class StreamCohostInput: CohostInput {
    private let feed: CohostStreamFeed
    init(feed: CohostStreamFeed) { self.feed = feed }
    func start() throws { feed.start() }
    func stop() { feed.stop() }
}

/// One co-host's frames pulled from a local source on its own thread (the test co-hosts,
/// and a shared picture).
final class SourceCohostFeed: CohostInput, @unchecked Sendable {
    // @unchecked: `source` and `deliver` are used on the feed thread only.
    private let source: VideoSource
    private let deliver: (VideoFrame) -> Void
    private let ended: (@Sendable (Error?) -> Void)?
    private let stopped = Mutex(false)

    /// `ended` runs on the feed's thread once it stops: nil when `stop()` ended it, the
    /// error when the source failed or ran out.
    init(source: VideoSource, deliver: @escaping (VideoFrame) -> Void, ended: (@Sendable (Error?) -> Void)? = nil) {
        self.source = source
        self.deliver = deliver
        self.ended = ended
    }

    func start() throws {
        try source.start()
        let thread = Thread { [self] in
            var failure: Error?
            while !shouldStop {
                do {
                    guard let frame = try source.nextFrame() else {
                        failure = LiveError(.exception, "\(source.name) ended")
                        break
                    }
                    deliver(frame)
                } catch {
                    failure = error
                    break
                }
            }
            source.stop()
            ended?(shouldStop ? nil : failure)
        }
        thread.name = "liveline.cohost"
        thread.start()
    }

    private var shouldStop: Bool {
        stopped.withLock { $0 }
    }

    func stop() {
        stopped.withLock { $0 = true }
    }
}
