import LiveCodec
import LiveCore
import LiveRTMP

/// Records the packets a guest receives to an .flv or .mp4 file as they are, without
/// decoding or re-encoding (`liveline guest --record`): AVCC back to Annex B for
/// `MediaRecorder`, the stream's SPS/PPS as its global header.
///
/// The file is created at the first keyframe after a decoder configuration, with the
/// size of the first decoded frame (or the metadata's), and starts at 0 there. A relay's
/// replayed GOP is squeezed into the moment it arrived (`RecordingTimeline`), so the file
/// lasts as long as the play, not the play plus the cached GOP. When the configuration changes
/// mid-stream, its SPS/PPS are put in front of the next keyframe so decoders of the
/// file switch with it. A packet whose NAL lengths run past its end (a publisher can send
/// anything) is left out and counted; only a failed write stops the recording. Confined
/// to the guest's decode thread.
public final class GuestRecorder {
    public let path: String
    private var recorder: MediaRecorder?
    private var configuration: H264Bitstream.AVCDecoderConfiguration?
    private var configurationChanged = false
    private var timeline = RecordingTimeline()

    public init(path: String) throws {
        let lower = path.lowercased()
        guard lower.hasSuffix(".flv") || lower.hasSuffix(".mp4") else {
            throw LiveError(.invalidParams, "recording '\(path)': the file name must end in .flv or .mp4")
        }
        self.path = path
    }

    public var packetsWritten: Int { recorder?.packetsWritten ?? 0 }
    /// Malformed packets left out of the recording.
    public private(set) var packetsSkipped = 0

    public func setConfiguration(_ configuration: H264Bitstream.AVCDecoderConfiguration) {
        if recorder != nil, configuration != self.configuration { configurationChanged = true }
        self.configuration = configuration
    }

    /// A play started again (a reconnect): the relay may replay its GOP once more.
    public func playStarted() {
        timeline.playStarted()
    }

    /// Writes one received packet; `width`/`height` size the file when it is created.
    public func write(_ packet: RTMPVideoPacket, width: Int, height: Int, fps: Int) throws {
        guard let configuration else { return }
        if recorder == nil {
            guard packet.isKeyframe, width > 0, height > 0 else { return }
            recorder = try MediaRecorder(path: path, stream: VideoStreamInfo(
                width: width, height: height, fps: max(1, fps), bitrate: 0, extradata: configuration.annexB))
        }
        guard var annexB = try? H264Bitstream.annexB(fromAVCC: packet.avcc, lengthSize: configuration.lengthSize) else {
            packetsSkipped += 1
            return
        }
        if configurationChanged, packet.isKeyframe {
            annexB = configuration.annexB + annexB
            configurationChanged = false
        }
        let (dts, pts) = timeline.place(dts: packet.dts.micros, pts: packet.pts.micros, arrivalMicros: packet.receivedMicros)
        try recorder!.write(EncodedVideoPacket(data: annexB, pts: MediaTime(micros: pts), dts: MediaTime(micros: dts),
                                               isKeyframe: packet.isKeyframe, captureTimeMicros: 0))
    }

    public func finish() throws {
        try recorder?.finish()
    }
}
