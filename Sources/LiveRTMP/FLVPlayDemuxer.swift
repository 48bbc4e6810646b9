import LiveCodec
import LiveCore

/// Turns the audio and video payloads a player receives (FLV tag bodies, as RTMP
/// messages or HTTP-FLV tags carry them) into player events, with the checks both
/// players share: H.264 only, the AVC and AAC sequence headers read and checked, AAC
/// frames only after a valid AAC header, timestamps widened past their 32-bit wrap.
/// Pure: the caller passes the receive time; one per play, on the player's loop.
struct FLVPlayDemuxer {
    /// What one payload gives.
    enum Output {
        case none
        case event(RTMPPlayer.Event)
        /// Not delivered (counted); the first reason of the play is given to log.
        case ignored(warning: String?)
        /// The stream cannot be played on.
        case failure(RTMPClientError)
    }

    let url: String
    /// The length size the stream's configuration announced (4 unless it said otherwise).
    private(set) var lengthSize = 4
    private(set) var videoPackets = 0
    /// Audio messages received, all of them.
    private(set) var audioPackets = 0
    private(set) var ignoredAudioPackets = 0
    private var lastTimestamp: UInt32 = 0
    private var timestampEpoch: Int64 = 0
    private var sawTimestamp = false
    /// An AAC header was delivered (and no refused one since): frames may follow.
    private var audioConfigured = false
    private var warnedAboutAudio = false

    init(url: String) {
        self.url = url
    }

    mutating func video(_ payload: [UInt8], timestamp: UInt32, receivedMicros: UInt64) -> Output {
        // A video message with only the frame-type byte (some servers' "video info")
        // carries nothing to decode.
        guard payload.count > 1 else { return .none }
        let tag: FLVVideoTag
        do {
            tag = try FLVVideoTag(parsing: payload)
        } catch {
            return .failure(.protocolViolation(url: url, reason: "\(error)"))
        }
        guard tag.codecID == FLVVideoTag.CodecID.avc else {
            return .failure(.unsupportedCodec(url: url, codecID: tag.codecID))
        }
        switch tag.avcPacketType {
        case .sequenceHeader:
            do {
                let configuration = try tag.decoderConfiguration()
                lengthSize = configuration.lengthSize
                return .event(.decoderConfiguration(avcC: tag.data, configuration))
            } catch {
                return .failure(.protocolViolation(url: url, reason: "AVC sequence header: \(error)"))
            }
        case .nalUnits:
            let dts = widen(timestamp)
            videoPackets += 1
            return .event(.video(RTMPVideoPacket(avcc: tag.data, dts: MediaTime(milliseconds: dts),
                                                 pts: MediaTime(milliseconds: dts + Int64(tag.compositionTime)),
                                                 isKeyframe: tag.isKeyframe, receivedMicros: receivedMicros)))
        case .endOfSequence, nil:
            return .none
        }
    }

    mutating func audio(_ payload: [UInt8], timestamp: UInt32, receivedMicros: UInt64) -> Output {
        audioPackets += 1
        let message: RTMPAudioMessage
        do {
            message = try RTMPAudioMessage(parsing: payload)
        } catch {
            audioConfigured = false
            return ignoreAudio("\(error); audio is ignored until a valid AAC header")
        }
        switch message {
        case .configuration(let config, let bytes):
            audioConfigured = true
            return .event(.audioConfiguration(asc: bytes, config))
        case .frame(let data):
            guard audioConfigured else { return ignoreAudio("AAC frames before any AAC header are ignored") }
            let pts = widen(timestamp)
            return .event(.audio(RTMPAudioPacket(data: data, pts: MediaTime(milliseconds: pts), receivedMicros: receivedMicros)))
        case .unsupported(let format):
            return ignoreAudio("\(FLVAudioTag.SoundFormat.name(format)) audio is not played (AAC only); it is ignored")
        case .empty:
            return .none
        }
    }

    /// Counts an audio message not delivered; the first reason is handed out to log.
    private mutating func ignoreAudio(_ why: String) -> Output {
        ignoredAudioPackets += 1
        guard !warnedAboutAudio else { return .ignored(warning: nil) }
        warnedAboutAudio = true
        return .ignored(warning: why)
    }

    /// The 32-bit timestamp as a 64-bit millisecond count: a jump back by more than half
    /// the range is a wrap.
    private mutating func widen(_ timestamp: UInt32) -> Int64 {
        if sawTimestamp, timestamp < lastTimestamp, lastTimestamp - timestamp > UInt32.max / 2 {
            timestampEpoch += 1 << 32
        }
        sawTimestamp = true
        lastTimestamp = timestamp
        return timestampEpoch + Int64(timestamp)
    }
}
