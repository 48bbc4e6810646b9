import Foundation
import LiveCore
import LiveRTMP

/// What the guest's player reports (DESIGN.md §4, the anyRTC SDK's ARGuestRtmpDelegate and
/// the player callbacks of ARGuestRtcDelegate). In order for a normal session: `ok`,
/// `firstFrame`, `status` once a second, `closed`; a stall adds `buffering(0)`, rising
/// percents and `buffering(100)`, a lost connection `reconnecting(times:)`, a new picture
/// size `sizeChanged`.
public enum GuestEvent: Sendable, Equatable {
    /// Connected and playing (the anyRTC SDK's onRtmpPlayerOk). Servers, liveline serve and
    /// nginx-rtmp among them, also answer the play of a name nobody publishes (yet) so:
    /// `firstFrame` says the stream is there, `closed(102)` after the timeout that it is not.
    case ok
    /// The first decoded frame, with its size (the anyRTC SDK's onRtmpPlayerStart and
    /// onRTCFirstPlayerVideoFrame:).
    case firstFrame(width: Int, height: Int)
    /// The program's picture size changed mid-stream (the hoster's mix changed its
    /// resolution, a new publisher): the first frame of the new size, with it (the anyRTC
    /// SDK's onRTCPlayerViewChanged:). A `GuestVideoSink` with its own size keeps it, the
    /// new picture fitted by the render mode.
    case sizeChanged(width: Int, height: Int)
    /// The first decoded audio, with its rate and channels (LiveLine's own: with
    /// `firstFrame`, or alone for an audio-only stream, it says the stream is there).
    case firstAudio(sampleRate: Int, channels: Int)
    /// The stream's (the hoster's) audio level 0–100 over the audio decoded since the
    /// last one (`AudioLevel`: 0 at −60 dBFS, 100 at full scale), at most once every
    /// `showTime` ms (the anyRTC SDK's onRTCHosterAudioActive:audioLevel:showTime:).
    case hosterAudioActive(level: Int, showTime: Int)
    /// While co-hosting: a marker beep (the test source's 3 kHz onset) was heard on the
    /// hear stream, at stream time `ptsMicros`, decoded at wall-clock time `wallMicros`
    /// (µs since 1970). With the hoster's capture-clock zero it gives the mouth-to-ear
    /// delay (LiveLine's own, for measuring).
    case beepHeard(ptsMicros: Int64, wallMicros: Int64)
    /// Once a second after the first frame (the anyRTC SDK's onRtmpPlayerStatus:bitrate:).
    case status(GuestStatus)
    /// The anyRTC SDK's onRtmpPlayerLoading:. 0 when the picture stalls (no frame for
    /// half a second); once pictures arrive again they are held until they span the
    /// buffer target (`Guest.Options.bufferTargetMilliseconds`, or until the first has
    /// waited that long), the percent of it rising as they come; 100 when they are shown.
    /// Without latency control (target 0) it goes from 0 to 100 when a frame is shown.
    case buffering(percent: Int)
    /// The connection was lost; retry number `times` is scheduled (LiveLine's own: the
    /// anyRTC SDK's player reconnects silently).
    case reconnecting(times: Int)
    /// The recording (`recordPath`) stopped on a failed write, e.g. a full disk: the file
    /// keeps what was written and playing goes on (LiveLine's own).
    case recordingFailed(message: String)
    /// Playing ended: `.ok` after stopPlay or when the hoster stopped; 102 (live error)
    /// when the server refused the play or nothing was published there within the
    /// timeout (a missing stream); 101 when the connection failed or its retries were
    /// used up; the token provider's code (202, 212 when it gave none within the
    /// timeout); a file's or the decoder's code when an output failed (the anyRTC SDK's
    /// onRtmpPlayerClosed:).
    case closed(LiveCode)

    /// The event's name in the CLI's JSON lines.
    public var name: String {
        switch self {
        case .ok: "ok"
        case .firstFrame: "firstFrame"
        case .sizeChanged: "sizeChanged"
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
    /// Media received but not yet shown, in ms (the anyRTC SDK's cacheTime).
    public var cacheMilliseconds = 0
    /// Bytes per second received over the last second (the anyRTC SDK's bitrate, in bytes).
    public var bytesPerSecond = 0
    /// Frames shown in the last second.
    public var fps = 0.0
    /// Frames skipped by latency control or dropped to a keyframe so far.
    public var droppedFrames = 0
    /// Reconnects that succeeded so far.
    public var reconnects = 0

    public init() {}
}

/// Why a guest's play ended (`Guest.playEnd`; LiveLine's own: the anyRTC SDK reports only
/// onRtmpPlayerClosed's code).
public enum GuestEndReason: Sendable, Equatable {
    /// `PlayOptions.frameLimit` frames were decoded.
    case frameLimit
    /// `PlayOptions.duration` passed.
    case duration
    /// The hoster stopped publishing.
    case streamEnded
    /// `stopPlay`, or the reader of a standard-output output went away.
    case stopped
    /// See `Guest.PlayEnd.error`.
    case failed
}

/// A failed play (with `LiveError`s of a token provider and output errors).
public enum GuestPlayError: Error, CustomStringConvertible, Sendable {
    /// Playing started but neither video nor audio came within the timeout.
    case noMedia(url: String, seconds: Double)
    /// The connect or the play failed or was refused.
    case player(RTMPClientError)

    public var description: String {
        switch self {
        case .noMedia(let url, let seconds):
            "\(url): no video or audio within \(String(format: "%g", seconds)) s of play start (is the stream being published?)"
        case .player(let error): "\(error)"
        }
    }
}
