import LiveCapture
import LiveCore
import LiveSignal
import Synchronization

/// The hoster's share (the anyRTC SDK's screen share and its `ARShareDelegate`):
/// a picture, usually a screen (`screen:DISPLAY`, see `ScreenSpec`), shared into the
/// program.
///
/// Layout: the shared picture takes the host's place in the mix template (the whole
/// canvas in `full`, the big rectangle in `bigSmall`, the first cell in `equal`),
/// fitted aspect-fit so nothing of it is cropped, and the host's camera becomes one
/// more small tile after the co-hosts': the SDK's own model of one big picture and
/// small ones, so a share never covers a co-host and every template keeps its geometry.
/// While a share is on the line accepts one co-host fewer (the camera's tile counts).
///
/// Events: `onShareEvent` gets `.enable` once the share started or could not
/// (onRTCShareEnable), and `.closed` when it ends; the line's room hears `shareOpen`
/// and `shareClose` (onRTCShareOpen / onRTCShareClose), a guest that joins later hears
/// the open share at once, and a line that reconnects is told again.
extension Hoster {
    /// The hoster's share events (the anyRTC SDK's ARShareDelegate): `.enable` on the
    /// caller's thread when `startShare` fails before the line is asked, else on the
    /// line's loop thread (or the caller's, without a line); `.closed` on the thread that
    /// ended the share. Set before `startShare`.
    public var onShareEvent: (@Sendable (ShareEvent) -> Void)? {
        get { shareState.handler }
        set { shareState.handler = newValue }
    }

    /// Shares the picture of `source` (`screen::99`, `screen::99+0,0@640x360`, or any
    /// other source spec such as `file:slides.mp4`) into the program; `type` and
    /// `shareInfo` (≤ 1024 bytes) go to the room as the SDK's share type and info (the
    /// type is the app's own number, passed through). Throws `.invalidParams` for a spec
    /// that does not parse or a shareInfo that is too long; everything else, success or
    /// not, is reported as `.enable` on `onShareEvent`. Works before and during a push.
    public func startShare(source text: String, type: Int = 0, shareInfo: String = "") throws {
        let spec = try SourceSpec(parsing: text)
        guard shareInfo.utf8.count <= LineLimits().maxShareInfo else {
            throw LiveError(.invalidParams, "shareInfo is \(shareInfo.utf8.count) bytes; at most \(LineLimits().maxShareInfo)")
        }
        let c = options.configuration
        guard c.livingMediaMode == .video else {
            return shareState.report(.enable(false, reason: "an audio-only live has no picture to share into"))
        }
        guard let id = shareState.open(source: spec.description, type: type, info: shareInfo) else {
            return shareState.report(.enable(false, reason: "a picture is already shared: stopShare first"))
        }
        do {
            let source = try spec.makeSource(width: c.width, height: c.height, fps: c.fps, realTime: c.realTime)
            try mixStage().startShare(source: source) { [weak self] error in self?.shareEnded(id: id, error) }
        } catch {
            _ = shareState.close(id: id)
            return shareState.report(.enable(false, reason: "\((error as? LiveError)?.detail ?? "\(error)")"))
        }
        updateLineCapacity()
        if currentLine == nil {
            shareState.enabled(id: id)
        } else {
            announceShare()
        }
    }

    /// Ends the share (LiveLine's own call: the anyRTC SDK has only the share's callbacks,
    /// and this is the close its onRTCShareClose tells the room): the camera is the main picture again, the
    /// room hears `shareClose` and `onShareEvent` `.closed` ("stopped"). No-op without one.
    public func stopShare() {
        endShare(id: nil, reason: "stopped")
    }

    /// What is shared (the source spec, such as `screen::99`), nil without a share.
    public var sharedSource: String? { shareState.current?.source }

    // MARK: - Internal

    /// Tells the line about the share on, if any (after it opened or reopened: the server
    /// ignores a share it already knows). The first answer reports `.enable`.
    func announceShare() {
        guard let share = shareState.current, let line = currentLine else { return }
        var open = LineRequest(op: .shareOpen)
        open.shareType = share.type
        open.shareInfo = share.info
        let request = open
        line.send { [self] client in
            client.send(request) { [weak self] reply in
                guard let self else { return }
                switch reply.liveCode {
                case .ok, .networkDisconnected:
                    // A line that is down hears it when it is back (the share is in the picture already).
                    self.shareState.enabled(id: share.id)
                default:
                    let code = reply.liveCode ?? .unknown
                    self.endShare(id: share.id, reason: nil)
                    self.shareState.report(.enable(false, reason: "the line refused the share: \(reply.message ?? code.message)"))
                }
            }
        }
    }

    /// The share's source failed or the push ended (the share feed's thread).
    private func shareEnded(id: Int, _ error: (any Swift.Error)?) {
        endShare(id: id, reason: error.map { ($0 as? LiveError)?.detail ?? "\($0)" } ?? "pushEnded")
    }

    /// Ends share `id` (nil: whichever is on); `reason` nil reports nothing to the hoster.
    private func endShare(id: Int?, reason: String?) {
        guard shareState.close(id: id) != nil else { return }
        currentMix?.stopShare()
        updateLineCapacity()
        currentLine?.send { client in client.send(LineRequest(op: .shareClose)) }
        if let reason { shareState.report(.closed(userId: "", reason: reason)) }
    }

    /// The line accepts no more co-hosts than the mix shows, the camera's tile counted.
    private func updateLineCapacity() {
        guard let capacity = currentMix?.lineCapacity, let line = currentLine else { return }
        let refusal = LineSession.refusal { [weak self] event in self?.reportLine(event) }
        line.send { $0.setMaxCohosts(capacity, reply: refusal) }
    }
}

/// The hoster's share: the event handler and the share on, if any. Thread-safe.
final class HosterShare: Sendable {
    struct Open: Sendable {
        let id: Int
        let source: String
        let type: Int
        let info: String
        /// `.enable(true)` was reported.
        var enabled = false
    }

    private struct State {
        var handler: (@Sendable (ShareEvent) -> Void)?
        var open: Open?
        var nextId = 0
    }

    private let state = Mutex(State())

    var handler: (@Sendable (ShareEvent) -> Void)? {
        get { state.withLock { $0.handler } }
        set { state.withLock { $0.handler = newValue } }
    }

    var current: Open? { state.withLock { $0.open } }

    /// Records a new share; nil when one is on.
    func open(source: String, type: Int, info: String) -> Int? {
        state.withLock { state in
            guard state.open == nil else { return nil }
            state.nextId += 1
            state.open = Open(id: state.nextId, source: source, type: type, info: info)
            return state.nextId
        }
    }

    /// Forgets share `id` (nil: whichever is on) and returns it; nil when it is not on.
    func close(id: Int?) -> Open? {
        state.withLock { state in
            guard let open = state.open, id == nil || open.id == id else { return nil }
            state.open = nil
            return open
        }
    }

    /// Reports `.enable(true)` for share `id` the first time it is called while it is on.
    func enabled(id: Int) {
        let report = state.withLock { state -> Bool in
            guard state.open?.id == id, state.open?.enabled == false else { return false }
            state.open?.enabled = true
            return true
        }
        if report { self.report(.enable(true, reason: "")) }
    }

    func report(_ event: ShareEvent) {
        state.withLock { $0.handler }?(event)
    }
}
