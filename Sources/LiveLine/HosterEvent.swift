import LiveCore

/// What the hoster's push reports (DESIGN.md §4, the anyRTC SDK's ARHosterRtmpDelegate,
/// plus its local-picture callbacks). Delivered in this order for a normal session:
/// `ok`, `status` once a second, `closed`; a lost connection adds `reconnecting(times:)`
/// … `ok` (or `failed`) in between; a first connect that fails gives `failed` alone.
/// The local audio level and the local picture's size come on their own schedule.
public enum HosterEvent: Sendable, Equatable {
    /// Publishing started, or started again after a reconnect (the anyRTC SDK: onRtmpStreamOk).
    case ok
    /// The connection was lost and retry number `times` (1, 2, …) is scheduled
    /// (the anyRTC SDK: onRtmpStreamReconnecting:(int)times).
    case reconnecting(times: Int)
    /// Once a second while publishing (the anyRTC SDK: onRtmpStreamStatus:delayTime netBand:).
    case status(HosterStatus)
    /// Publishing stopped for good: the first connect failed (100, network error: the
    /// server did not answer), the retries were used up (101, network disconnected) or the server
    /// refused the stream (104, 202, 213 …) (the anyRTC SDK: onRtmpStreamFailed:).
    case failed(LiveCode)
    /// The push was stopped (the anyRTC SDK: onRtmpStreamClosed).
    case closed
    /// The level of the hoster's own sound, 0–100 (`AudioLevel`), at most once per
    /// `showTime` ms (HosterConfiguration.audioLevelIntervalMilliseconds); none while the
    /// audio is off (the anyRTC SDK: onRTCLocalAudioActive:showTime:). On the audio thread.
    case localAudioActive(level: Int, showTime: Int)
    /// The first captured picture after `startPush`, at its size (the anyRTC SDK's
    /// onRTCFirstLocalVideoFrame:(CGSize)). On the capture thread, before the frame is sent.
    case firstLocalVideoFrame(width: Int, height: Int)
    /// The captured picture's size changed (a switch to a camera of another resolution;
    /// the anyRTC SDK's onRTCLocalVideoViewChanged:(CGSize)). The stream keeps its size:
    /// the new picture is fitted into it. On the capture thread.
    case localVideoViewChanged(width: Int, height: Int)

    /// The event's name in the CLI's JSON lines.
    public var name: String {
        switch self {
        case .ok: "ok"
        case .reconnecting: "reconnecting"
        case .status: "status"
        case .failed: "failed"
        case .closed: "closed"
        case .localAudioActive: "localAudioActive"
        case .firstLocalVideoFrame: "firstLocalVideoFrame"
        case .localVideoViewChanged: "localVideoViewChanged"
        }
    }

    /// The event's fields for a JSON line, besides its name (`status` has none: its
    /// figures go out as the stats line).
    public var fields: [(key: String, value: Int)] {
        switch self {
        case .reconnecting(let times): [("times", times)]
        case .failed(let code): [("code", code.rawValue)]
        case .localAudioActive(let level, let showTime): [("level", level), ("showTime", showTime)]
        case .firstLocalVideoFrame(let width, let height), .localVideoViewChanged(let width, let height):
            [("width", width), ("height", height)]
        case .ok, .closed, .status: []
        }
    }
}

/// The figures of one `HosterEvent.status`.
public struct HosterStatus: Sendable, Equatable {
    /// The send queue in ms of media: queued, or taken by the kernel but not yet
    /// acknowledged by the server (the anyRTC SDK: delayTime).
    public var delayMilliseconds = 0
    /// Bytes per second the kernel took over the last second (the anyRTC SDK: netBand).
    public var upstreamBytesPerSecond = 0
    /// The send queue in bytes (the publisher's, the connection's and the kernel's unacknowledged).
    public var queuedBytes = 0
    /// Bytes per second the server acknowledged over the last second: the throughput
    /// the network achieved.
    public var throughputBytesPerSecond = 0
    /// The part of `droppedFrames` congestion dropped (the queue past its bound, to the
    /// next keyframe), not those lost while disconnected.
    public var congestionDroppedFrames = 0
    /// What the adaptive bitrate is doing (`BitrateController.Phase`: probing, holding,
    /// draining, offline, settling); nil when it is off.
    public var abr: String?
    /// Frames dropped so far: by congestion control, and while disconnected.
    public var droppedFrames = 0
    /// The encoder's current target bitrate, in kbit/s (adaptive bitrate moves it).
    public var bitrateKbps = 0
    /// Reconnects that succeeded so far.
    public var reconnects = 0
    /// AAC frames sent on the current connection.
    public var sentAudioFrames = 0
    /// AAC frames lost: while disconnected, before the AAC header, or past the hard cap
    /// of a stalled connection (congestion drops video, never audio).
    public var droppedAudioFrames = 0

    public init() {}
}
