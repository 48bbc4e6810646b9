import LiveCore

/// One raw AAC frame as an RTMP player received it, with its timing widened past the
/// 32-bit wrap of RTMP timestamps (the same widening as the video's).
public struct RTMPAudioPacket: Sendable, Equatable {
    /// A raw AAC frame (no ADTS header): the FLV tag's data after its 2-byte header.
    public let data: [UInt8]
    /// Presentation time of the frame's first sample (audio has no reordering: dts = pts).
    public let pts: MediaTime
    /// Monotonic time (µs) the message was complete.
    public let receivedMicros: UInt64

    public init(data: [UInt8], pts: MediaTime, receivedMicros: UInt64) {
        self.data = data
        self.pts = pts
        self.receivedMicros = receivedMicros
    }
}

/// What one RTMP audio message means to a player, read with checks and bounds: the
/// publisher controls every byte, so a header that no decoder should be opened with
/// (too long, a reserved or absurd rate, more than two channels) and an oversized frame
/// are errors here, before anything reaches FFmpeg. Pure.
public enum RTMPAudioMessage: Equatable, Sendable {
    /// The AAC sequence header: the AudioSpecificConfig as sent and as read.
    case configuration(AACAudioSpecificConfig, bytes: [UInt8])
    /// A raw AAC frame.
    case frame([UInt8])
    /// Audio in a format LiveLine does not decode (`FLVAudioTag.SoundFormat`: mp3, speex…).
    case unsupported(soundFormat: UInt8)
    /// An AAC message with no data (nothing to decode).
    case empty

    /// The longest AudioSpecificConfig accepted (an AAC-LC one is 2 bytes, HE-AAC 4–7).
    public static let maxConfigurationBytes = 64
    /// The longest raw frame accepted: AAC's 6144 bits per channel for 8 channels.
    public static let maxFrameBytes = 6144
    /// The sample rates accepted, in Hz.
    public static let sampleRates = 7350...96000

    /// Why an audio message is refused.
    public enum Error: Swift.Error, CustomStringConvertible, Equatable, Sendable {
        case tag(FLVAudioTag.Error)
        case configuration(AACAudioSpecificConfig.Error)
        case configurationTooLong(Int)
        case unsupportedConfiguration(sampleRate: Int, channels: Int)
        case frameTooLong(Int)

        public var description: String {
            switch self {
            case .tag(let error): "\(error)"
            case .configuration(let error): "\(error)"
            case .configurationTooLong(let count):
                "AAC audio config: \(count) bytes, more than \(RTMPAudioMessage.maxConfigurationBytes)"
            case .unsupportedConfiguration(let rate, let channels):
                "AAC audio config: \(rate) Hz with channel configuration \(channels) (mono or stereo, 7350–96000 Hz are played)"
            case .frameTooLong(let count): "AAC frame of \(count) bytes, more than \(RTMPAudioMessage.maxFrameBytes)"
            }
        }
    }

    /// Reads an RTMP audio message's payload (an FLV AUDIODATA body).
    public init(parsing payload: [UInt8]) throws {
        let tag: FLVAudioTag
        do {
            tag = try FLVAudioTag(parsing: payload)
        } catch let error as FLVAudioTag.Error {
            throw Error.tag(error)
        }
        guard tag.soundFormat == FLVAudioTag.SoundFormat.aac else {
            self = .unsupported(soundFormat: tag.soundFormat)
            return
        }
        guard !tag.data.isEmpty else {
            self = .empty
            return
        }
        if tag.isSequenceHeader {
            guard tag.data.count <= Self.maxConfigurationBytes else { throw Error.configurationTooLong(tag.data.count) }
            let config: AACAudioSpecificConfig
            do {
                config = try AACAudioSpecificConfig(parsing: tag.data)
            } catch let error as AACAudioSpecificConfig.Error {
                throw Error.configuration(error)
            }
            guard Self.sampleRates.contains(config.sampleRate), (1...2).contains(config.channelConfiguration) else {
                throw Error.unsupportedConfiguration(sampleRate: config.sampleRate, channels: config.channelConfiguration)
            }
            self = .configuration(config, bytes: tag.data)
        } else {
            guard tag.data.count <= Self.maxFrameBytes else { throw Error.frameTooLong(tag.data.count) }
            self = .frame(tag.data)
        }
    }
}
