import LiveSignal

/// The anyRTC SDK's share callbacks (`ARShareDelegate`) as LiveLine reports them. The
/// hoster kit reports its own share on `Hoster.onShareEvent`; every guest on the line
/// hears the room's on `onLineEvent`, as `LineSessionEvent.share`.
///
/// In LiveLine the hoster shares: the shared picture (a screen, `screen:DISPLAY`, or any
/// other source) becomes the main picture of the program it pushes, with its camera in a
/// small tile, so every player sees it; the line tells the room.
public enum ShareEvent: Sendable, Equatable {
    /// Whether the hoster's share could start (the SDK's onRTCShareEnable(enable)):
    /// true once the picture is in the mix and the line (if any) took it; false with why
    /// not (the source does not open, the mix has no room for the camera's tile, the line
    /// refused, a share is already on). H.
    case enable(Bool, reason: String)
    /// Someone shares a picture (the SDK's onRTCShareOpen(type, shareInfo, userId,
    /// userData)): the type and information the sharer gave, and who it is. A guest that
    /// joins while a share is on hears it at once. G.
    case opened(type: Int, shareInfo: String, userId: String, userData: String)
    /// The share ended (the SDK's onRTCShareClose): G, when the sharer closed it (the
    /// userId is the sharer's); H, when its own share ended: `stopShare` ("stopped"),
    /// the push ended ("pushEnded") or the source failed (its error), userId empty.
    case closed(userId: String, reason: String)

    /// The event's name in the CLI's JSON lines.
    public var name: String {
        switch self {
        case .enable: "shareEnable"
        case .opened: "shareOpen"
        case .closed: "shareClose"
        }
    }

    /// The event's fields for a JSON line, besides its name.
    public var fields: [(key: String, value: LineFieldValue)] {
        switch self {
        case .enable(let enabled, let reason):
            [("enable", .bool(enabled))] + (reason.isEmpty ? [] : [("reason", .text(reason))])
        case .opened(let type, let shareInfo, let userId, let userData):
            [("type", .int(type)), ("shareInfo", .text(shareInfo)), ("userId", .text(userId)), ("userData", .text(userData))]
        case .closed(let userId, let reason):
            [("userId", .text(userId))] + (reason.isEmpty ? [] : [("reason", .text(reason))])
        }
    }

    /// The event for the line's `shareOpen` / `shareClose`; nil for any other.
    init?(_ event: LineEvent) {
        switch event.event {
        case .shareOpen:
            self = .opened(type: event.shareType ?? 0, shareInfo: event.shareInfo ?? "", userId: event.userId ?? "",
                           userData: event.userData ?? "")
        case .shareClose:
            self = .closed(userId: event.userId ?? "", reason: "")
        default:
            return nil
        }
    }
}
