import Foundation
import LiveCapture
import LiveCore
import LiveMix

/// The hoster's mix stage (DESIGN.md §2): the host's filtered frames plus the co-hosts'
/// frames, composed by a layout template into the picture that is encoded.
///
/// The host's frames arrive on the capture thread through `process`; each co-host feed
/// delivers frames from its own thread with `Compositor.update`, at its own rate, and
/// the compositor draws every participant's latest frame. With no co-hosts the stage
/// passes the host frame through untouched.
public final class HosterMix: @unchecked Sendable {
    public let compositor: Compositor
    private let lock = NSLock()
    private var feeds: [CohostFeed] = []

    /// setMixVideoModel + setVideoTemplate.
    public init(width: Int, height: Int, template: MixTemplate, options: MixOptions) throws {
        compositor = try Compositor(width: width, height: height, template: template, options: options, cohosts: 0)
    }

    /// The capture-thread stage: the host frame in, the mixed frame out.
    public func process(_ host: VideoFrame) -> VideoFrame {
        compositor.update(participant: 0, frame: host)
        return compositor.compose()
    }

    /// Adds a co-host whose frames come from `source`, read on a thread of its own,
    /// and reflows the layout. Throws when the layout cannot hold one more.
    public func addCohost(source: VideoSource) throws {
        lock.lock()
        defer { lock.unlock() }
        try compositor.setCohostCount(feeds.count + 1)
        let feed = CohostFeed(source: source, participant: feeds.count + 1, compositor: compositor)
        feeds.append(feed)
        try feed.start()
    }

    /// Stops every co-host feed.
    public func stop() {
        lock.lock()
        let running = feeds
        lock.unlock()
        running.forEach { $0.stop() }
    }

    public var cohostCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return feeds.count
    }
}

/// One co-host's frames into the compositor, pulled from a source on its own thread.
final class CohostFeed: @unchecked Sendable {
    private let source: VideoSource
    private let participant: Int
    private let compositor: Compositor
    private let stopped = NSCondition()
    private var isStopped = false

    init(source: VideoSource, participant: Int, compositor: Compositor) {
        self.source = source
        self.participant = participant
        self.compositor = compositor
    }

    func start() throws {
        try source.start()
        let thread = Thread { [self] in
            while !shouldStop, let frame = try? source.nextFrame() {
                compositor.update(participant: participant, frame: frame)
            }
            source.stop()
        }
        thread.name = "liveline.cohost.\(participant)"
        thread.start()
    }

    private var shouldStop: Bool {
        stopped.lock()
        defer { stopped.unlock() }
        return isStopped
    }

    func stop() {
        stopped.lock()
        isStopped = true
        stopped.unlock()
    }
}
