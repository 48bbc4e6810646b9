import Foundation
import LiveCore
import Synchronization

/// Mixes the host and up to four co-hosts into one canvas by a `MixLayout` (DESIGN.md §5):
/// the hoster's mix stage between the filters and the encoder.
///
/// Inputs are pushed as they arrive (`update(participant:frame:)`, participant 0 is the
/// host, 1…4 the co-hosts in layout order) and `compose()` draws each participant's
/// latest frame, so inputs at different rates compose smoothly. Each rectangle is
/// filled by the participant's render mode; a participant without video shows its fill
/// image (the anyRTC SDK's `setVideoSubBackground:`) or flat grey; small tiles get their
/// white border; the host is drawn first, the tiles on top; canvas not covered by any
/// rectangle is black.
///
/// Threads: the setters and `update` may be called from any thread (a lock guards
/// them; changes apply at the next `compose`). `compose` is called from one thread,
/// the mix stage's; the scaling state it keeps is confined to that thread, which is
/// why the class is `@unchecked Sendable`.
public final class Compositor: @unchecked Sendable {
    // @unchecked: the scaling state is touched only by `compose`, on the mix thread; the layout and sources are in a Mutex.
    /// The host plus the most co-hosts a layout holds.
    public static let maxParticipants = 1 + MixLayout.maxCohosts

    public let width: Int
    public let height: Int

    /// What the setters change, taken by `compose` at the start of each mix.
    private struct Shared {
        var pendingLayout: MixLayout
        var layoutVersion = 0
        var latest: [VideoFrame?]
        var pendingModes: [RenderMode]
        var pendingFills: [RGBAImage?]
        var fillVersions: [Int]

        mutating func replaceLayout(_ next: MixLayout) {
            guard next != pendingLayout else { return }
            pendingLayout = next
            layoutVersion += 1
        }
    }

    private let shared: Mutex<Shared>

    // Confined to the compose thread.
    private var layout: MixLayout
    private var appliedLayoutVersion = 0
    private var current: [VideoFrame?]
    private var modes: [RenderMode]
    private var fills: [RGBAImage?]
    private var appliedFillVersions: [Int]
    private var scalers: [TileScaler?]
    private var fillFrames: [VideoFrame?]
    /// Canvas not covered by the host's rectangle: painted black before the tiles.
    private var background: [MixRect] = []
    private let pool: FramePool

    /// - Throws: `MixLayout.Error` when the layout does not fit the canvas.
    public init(width: Int, height: Int, template: MixTemplate = .full, options: MixOptions = MixOptions(),
                cohosts: Int = 0) throws(MixLayout.Error) {
        let layout = try MixLayout(canvasWidth: width, canvasHeight: height, template: template,
                                   cohosts: cohosts, options: options)
        self.width = width
        self.height = height
        self.layout = layout
        let n = Compositor.maxParticipants
        let initial = Shared(pendingLayout: layout, latest: Array(repeating: nil, count: n),
                             pendingModes: Array(repeating: .aspectFill, count: n), pendingFills: Array(repeating: nil, count: n),
                             fillVersions: Array(repeating: 0, count: n))
        current = initial.latest
        modes = initial.pendingModes
        fills = initial.pendingFills
        appliedFillVersions = initial.fillVersions
        shared = Mutex(initial)
        scalers = Array(repeating: nil, count: n)
        fillFrames = Array(repeating: nil, count: n)
        // The encoder may hold a couple of composed frames while the next is drawn.
        pool = FramePool(width: width, height: height, capacity: 6)
        applyLayout()
    }

    // MARK: configuration (any thread)

    /// The layout the next `compose` uses.
    public var currentLayout: MixLayout { shared.withLock { $0.pendingLayout } }

    /// Changes the template and its options (the anyRTC SDK's `setMixVideoModel:` and
    /// `setVideoTemplate:ver:dir:horPad:verPad:borderWidth:`), keeping the co-host count.
    /// - Throws: `MixLayout.Error` when it does not fit; the layout in use then stays.
    public func setLayout(template: MixTemplate, options: MixOptions) throws(MixLayout.Error) {
        try replaceLayout { current throws(MixLayout.Error) in
            try self.layout(template: template, options: options, cohosts: current.cohosts)
        }
    }

    /// Sets how many co-hosts the mix shows: participants 1…`count`.
    /// - Throws: `MixLayout.Error` when that many do not fit; the layout in use then stays.
    public func setCohostCount(_ count: Int) throws(MixLayout.Error) {
        try replaceLayout { current throws(MixLayout.Error) in
            try self.layout(template: current.template, options: current.options, cohosts: count)
        }
    }

    /// A co-host left the line: the ones after it move up one place (with their frames,
    /// render modes and fill images) and the mix shows one co-host fewer.
    public func removeCohost(_ participant: Int) {
        shared.withLock { shared in
            let count = shared.pendingLayout.cohosts
            guard participant >= 1, participant <= count else { return }
            for i in participant..<count {
                shared.latest[i] = shared.latest[i + 1]
                shared.pendingModes[i] = shared.pendingModes[i + 1]
                shared.pendingFills[i] = shared.pendingFills[i + 1]
                shared.fillVersions[i] += 1
            }
            shared.latest[count] = nil
            shared.pendingModes[count] = .aspectFill
            shared.pendingFills[count] = nil
            shared.fillVersions[count] += 1
            // One fewer always fits when the current count did.
            let current = shared.pendingLayout
            if let next = try? layout(template: current.template, options: current.options, cohosts: count - 1) {
                shared.replaceLayout(next)
            }
        }
    }

    /// How `participant`'s video is fitted into its rectangle (the anyRTC SDK's render mode;
    /// aspect-fill by default).
    public func setRenderMode(_ mode: RenderMode, participant: Int) {
        guard Compositor.isParticipant(participant) else { return }
        shared.withLock { $0.pendingModes[participant] = mode }
    }

    /// What `participant` shows while it has no video; nil for flat grey. The image is
    /// converted to I420 at the tile's size once, not per frame.
    public func setFillImage(_ image: RGBAImage?, participant: Int) {
        guard Compositor.isParticipant(participant) else { return }
        shared.withLock {
            $0.pendingFills[participant] = image
            $0.fillVersions[participant] += 1
        }
    }

    /// The anyRTC SDK's `setVideoSubBackground:`: one fill image for every co-host whose video is off.
    public func setCohostFillImage(_ image: RGBAImage?) {
        for participant in 1..<Compositor.maxParticipants { setFillImage(image, participant: participant) }
    }

    /// The latest frame of `participant` (0 = host); nil when its video is off. The
    /// compositor keeps the reference and only reads the frame, so the sender must not
    /// draw on it afterwards (a `FramePool` frame is not reused while it is held).
    public func update(participant: Int, frame: VideoFrame?) {
        guard Compositor.isParticipant(participant) else { return }
        shared.withLock { $0.latest[participant] = frame }
    }

    // MARK: composing (the mix thread)

    /// The mix of every participant's latest frame. Its time is the host frame's.
    ///
    /// With no co-hosts, a host rectangle covering the canvas and a host frame of the
    /// canvas size, the host frame itself is returned (nothing to draw); otherwise a
    /// frame from the compositor's pool. Either way, treat the result as read-only.
    public func compose() -> VideoFrame {
        // One snapshot per mix (the arrays are copy-on-write: retains, no copies).
        let taken = shared.withLock { $0 }
        if appliedLayoutVersion != taken.layoutVersion {
            layout = taken.pendingLayout
            appliedLayoutVersion = taken.layoutVersion
            applyLayout()
        }
        let count = 1 + layout.cohosts
        for i in 0..<Compositor.maxParticipants {
            current[i] = i < count ? taken.latest[i] : nil
            modes[i] = taken.pendingModes[i]
            if appliedFillVersions[i] != taken.fillVersions[i] {
                appliedFillVersions[i] = taken.fillVersions[i]
                fills[i] = taken.pendingFills[i]
                fillFrames[i] = nil
            }
        }

        let host = current[0]
        if count == 1, let host, host.width == width, host.height == height, layout.rects[0].border == 0,
           layout.rects[0] == MixRect(x: 0, y: 0, w: width, h: height) {
            current[0] = nil
            return host
        }
        let out = pool.acquire()
        for r in background { out.fill(r, with: .black) }
        for i in 0..<count {
            draw(participant: i, into: out)
            current[i] = nil
        }
        if let host {
            out.pts = host.pts
            out.captureTimeMicros = host.captureTimeMicros
        }
        return out
    }

    private func draw(participant i: Int, into out: VideoFrame) {
        let rect = layout.rects[i]
        let inner = rect.inner
        if let frame = current[i] {
            if let s = scalers[i], s.matches(sourceWidth: frame.width, sourceHeight: frame.height, target: inner,
                                             mode: modes[i]) {
                s.draw(frame, into: out)
            } else {
                let s = TileScaler(sourceWidth: frame.width, sourceHeight: frame.height, target: inner, mode: modes[i])
                scalers[i] = s
                s.draw(frame, into: out)
            }
        } else if let image = fills[i] {
            if fillFrames[i] == nil || fillFrames[i]!.width != inner.w || fillFrames[i]!.height != inner.h {
                fillFrames[i] = Compositor.fillFrame(image, width: inner.w, height: inner.h)
            }
            out.paste(fillFrames[i]!, x: inner.x, y: inner.y)
        } else {
            out.fill(inner, with: .grey)
        }
        out.drawBorder(rect, color: .white)
    }

    /// A fill image converted and cropped (aspect-fill) to a tile's size.
    static func fillFrame(_ image: RGBAImage, width: Int, height: Int) -> VideoFrame {
        let source = VideoFrame(rgba: image, background: .grey)
        let frame = VideoFrame(width: width, height: height)
        let target = MixRect(x: 0, y: 0, w: width, h: height)
        TileScaler(sourceWidth: source.width, sourceHeight: source.height, target: target, mode: .aspectFill)
            .draw(source, into: frame)
        return frame
    }

    /// Recomputes what depends on the rectangles. Compose thread (or init).
    private func applyLayout() {
        for i in scalers.indices {
            scalers[i] = nil
            fillFrames[i] = nil
        }
        let host = layout.rects[0]
        var bands: [MixRect] = []
        if host.y > 0 { bands.append(MixRect(x: 0, y: 0, w: width, h: host.y)) }
        if host.maxY < height { bands.append(MixRect(x: 0, y: host.maxY, w: width, h: height - host.maxY)) }
        if host.x > 0 { bands.append(MixRect(x: 0, y: host.y, w: host.x, h: host.h)) }
        if host.maxX < width { bands.append(MixRect(x: host.maxX, y: host.y, w: width - host.maxX, h: host.h)) }
        background = bands
    }

    /// Under `lock`.
    /// A layout of this canvas.
    private func layout(template: MixTemplate, options: MixOptions, cohosts: Int) throws(MixLayout.Error) -> MixLayout {
        try MixLayout(canvasWidth: width, canvasHeight: height, template: template, cohosts: cohosts, options: options)
    }

    /// Puts in the layout `make` builds from the pending one, under the lock so that two
    /// changes never lose one another.
    private func replaceLayout(_ make: (MixLayout) throws(MixLayout.Error) -> MixLayout) throws(MixLayout.Error) {
        try shared.withLock { (shared: inout Shared) throws(MixLayout.Error) in
            shared.replaceLayout(try make(shared.pendingLayout))
        }
    }

    private static func isParticipant(_ i: Int) -> Bool { i >= 0 && i < maxParticipants }

    /// Frames the output pool has allocated (stops growing once the mix is steady).
    var poolAllocations: Int { pool.allocations }
}
