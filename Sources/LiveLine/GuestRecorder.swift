import LiveCodec
import LiveCore
import LiveRTMP

/// Writes the packets a guest receives to a file as they are, without decoding or
/// re-encoding: `liveline guest --record` (.flv, .mp4) and `--out` (.nut, .mkv, or NUT on
/// standard output for "-"). H.264 is turned from AVCC back to Annex B for
/// `MediaRecorder`, the stream's SPS/PPS its global header; AAC frames go in as they
/// came, the AudioSpecificConfig their global header.
///
/// The file is created at the first keyframe after a decoder configuration, with the
/// size of the first decoded frame (or the metadata's), and starts at 0 there; the audio
/// track is in it when the AAC header came before that keyframe (publishers send both
/// headers first). A stream the guest knows to be audio-only (`audioOnly`) starts the
/// file at its first audio frame, without a video track.
///
/// A relay's replayed GOP is squeezed into the moment it arrived (`RecordingTimeline`),
/// so the file lasts as long as the play, not the play plus the cached GOP; audio is
/// placed with the shift of the latest video packet, so both tracks keep one origin and
/// stay in sync. When the configuration changes mid-stream, its SPS/PPS are put in front
/// of the next keyframe so decoders of the file switch with it. A packet whose NAL
/// lengths run past its end (a publisher can send anything) is left out and counted;
/// only a failed write stops the recording. Confined to the guest's decode thread.
public final class GuestRecorder {
    /// The file's name as given ("-": standard output).
    public let path: String
    private let container: MediaRecorder.Container
    private var recorder: MediaRecorder?
    private var configuration: H264Bitstream.AVCDecoderConfiguration?
    private var configurationChanged = false
    private var audioConfiguration: (asc: [UInt8], config: AACAudioSpecificConfig)?
    private var timeline = RecordingTimeline()

    /// A recorder for `--record`: `path` must end in .flv or .mp4.
    public convenience init(path: String) throws {
        try self.init(path: path, containers: [.flv, .mp4], what: "recording")
    }

    /// A recorder writing `path` in one of `containers` (by its extension; "-" is NUT);
    /// `what` names the output in the message when it is another.
    public init(path: String, containers: Set<MediaRecorder.Container>, what: String) throws {
        guard let container = MediaRecorder.Container(path: path), containers.contains(container) else {
            let names = containers.map { $0 == .matroska ? ".mkv" : ".\($0.rawValue)" }.sorted().joined(separator: ", ")
            throw LiveError(.invalidParams, "\(what) '\(path)': the file name must end in one of \(names)")
        }
        self.path = path
        self.container = container
    }

    /// Video packets written.
    public var packetsWritten: Int { recorder?.packetsWritten ?? 0 }
    /// Audio frames written.
    public var audioPacketsWritten: Int { recorder?.audioPacketsWritten ?? 0 }
    /// Whether the file was created with an audio track.
    public var hasAudio: Bool { recorder?.audio != nil }
    /// Malformed packets left out of the recording.
    public private(set) var packetsSkipped = 0

    public func setConfiguration(_ configuration: H264Bitstream.AVCDecoderConfiguration) {
        if recorder != nil, configuration != self.configuration { configurationChanged = true }
        self.configuration = configuration
    }

    /// The stream's AAC header; taken into the file when it is created after it.
    public func setAudioConfiguration(asc: [UInt8], _ config: AACAudioSpecificConfig) {
        audioConfiguration = (asc, config)
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
            recorder = try MediaRecorder(path: path, container: container, video: VideoStreamInfo(
                width: width, height: height, fps: max(1, fps), bitrate: 0, extradata: configuration.annexB),
                audio: audioStreamInfo)
        }
        guard recorder?.video != nil else { return }
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

    /// Writes one received AAC frame. `audioOnly`: the stream has no video, so the file
    /// starts here without a video track.
    public func write(audio packet: RTMPAudioPacket, audioOnly: Bool) throws {
        guard let audio = audioStreamInfo else { return }
        if recorder == nil {
            guard audioOnly else { return }
            recorder = try MediaRecorder(path: path, container: container, video: nil, audio: audio)
        }
        // A header that changed mid-stream (another publisher) cannot change the track.
        guard let recorder, let track = recorder.audio, track.audioSpecificConfig == audio.audioSpecificConfig else {
            return
        }
        let duration = MediaTime(micros: 1024 * 1_000_000 / Int64(track.sampleRate))
        let pts: Int64
        if recorder.video != nil {
            // Before the first video packet there is no origin yet: too early.
            guard let placed = timeline.placeBeside(pts: packet.pts.micros) else { return }
            pts = placed
        } else {
            pts = timeline.place(dts: packet.pts.micros, pts: packet.pts.micros, arrivalMicros: packet.receivedMicros).pts
        }
        try recorder.write(audio: EncodedAudioPacket(data: packet.data, pts: MediaTime(micros: pts), duration: duration))
    }

    /// The audio track the file gets when created now (nil without an AAC header).
    private var audioStreamInfo: AudioStreamInfo? {
        guard let audioConfiguration else { return nil }
        return AudioStreamInfo(sampleRate: audioConfiguration.config.sampleRate,
                               channelCount: audioConfiguration.config.channelConfiguration, bitrate: 0,
                               audioSpecificConfig: audioConfiguration.asc)
    }

    public func finish() throws {
        try recorder?.finish()
    }
}
