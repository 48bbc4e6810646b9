import LiveCore

/// What the guest's player reports (DESIGN.md §4, seed: ARGuestRtmpDelegate). In order
/// for a normal session: `ok`, `firstFrame`, `status` once a second, `closed`; a stall
/// adds `buffering(0)` … `buffering(100)`, a lost connection `reconnecting(times:)`.
public enum GuestEvent: Sendable, Equatable {
    /// Connected and playing (seed: onRtmpPlayerOk). Servers, liveline serve and
    /// nginx-rtmp among them, also answer the play of a name nobody publishes (yet) so:
    /// `firstFrame` says the stream is there, `closed(102)` after the timeout that it is not.
    case ok
    /// The first decoded frame, with its size (seed: onRtmpPlayerStart).
    case firstFrame(width: Int, height: Int)
    /// The first decoded audio, with its rate and channels (LiveLine's own: with
    /// `firstFrame`, or alone for an audio-only stream, it says the stream is there).
    case firstAudio(sampleRate: Int, channels: Int)
    /// The stream's (the hoster's) audio level 0–100 over the audio decoded since the
    /// last one (`AudioLevel`: 0 at −60 dBFS, 100 at full scale), at most once every
    /// `showTime` ms (seed: onRTCHosterAudioActive:audioLevel:showTime:).
    case hosterAudioActive(level: Int, showTime: Int)
    /// While co-hosting: a marker beep (the test source's 3 kHz onset) was heard on the
    /// hear stream, at stream time `ptsMicros`, decoded at wall-clock time `wallMicros`
    /// (µs since 1970). With the hoster's capture-clock zero it gives the mouth-to-ear
    /// delay (LiveLine's own, for measuring).
    case beepHeard(ptsMicros: Int64, wallMicros: Int64)
    /// Once a second after the first frame (seed: onRtmpPlayerStatus:cacheTime bitrate:).
    case status(GuestStatus)
    /// 0 when the picture stalls, 100 when it moves again (seed: onRtmpPlayerLoading:).
    case buffering(percent: Int)
    /// The connection was lost; retry number `times` is scheduled (LiveLine's own: the
    /// seed's player reconnects silently).
    case reconnecting(times: Int)
    /// The recording (`recordPath`) stopped on a failed write, e.g. a full disk: the file
    /// keeps what was written and playing goes on (LiveLine's own).
    case recordingFailed(message: String)
    /// Playing ended: `.ok` after stopPlay or when the hoster stopped; 102 (live error)
    /// when the server refused the play or nothing was published there within the
    /// timeout (a missing stream); 101 when the connection failed or its retries were
    /// used up; a file's or the decoder's code when an output failed (seed:
    /// onRtmpPlayerClosed:).
    case closed(LiveCode)

    /// The event's name in the CLI's JSON lines.
    public var name: String {
        switch self {
        case .ok: "ok"
        case .firstFrame: "firstFrame"
        case .firstAudio: "firstAudio"
        case .hosterAudioActive: "hosterAudioActive"
        case .beepHeard: "beepHeard"
        case .status: "status"
        case .buffering: "buffering"
        case .reconnecting: "reconnecting"
        case .recordingFailed: "recordingFailed"
        case .closed: "closed"
        }
    }
}

/// The figures of one `GuestEvent.status`.
public struct GuestStatus: Sendable, Equatable {
    /// Media received but not yet shown, in ms (seed: cacheTime).
    public var cacheMilliseconds = 0
    /// Bytes per second received over the last second (the seed's bitrate, in bytes).
    public var bytesPerSecond = 0
    /// Frames shown in the last second.
    public var fps = 0.0
    /// Frames skipped by latency control or dropped to a keyframe so far.
    public var droppedFrames = 0
    /// Reconnects that succeeded so far.
    public var reconnects = 0

    public init() {}
}
