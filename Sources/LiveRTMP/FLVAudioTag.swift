/// The body of an RTMP audio message: an FLV AUDIODATA tag body (FLV spec v10.1
/// §E.4.2.1), with the AACAUDIODATA of AAC (§E.4.2.2). LiveLine publishes and plays
/// AAC; the relay relays every format.
public struct FLVAudioTag: Equatable, Sendable {
    /// SoundFormat values LiveLine names (the high nibble).
    public enum SoundFormat {
        public static let mp3: UInt8 = 2
        public static let aac: UInt8 = 10
        public static let speex: UInt8 = 11

        /// The names of the SoundFormat values (§E.4.2.1), lower case as ffprobe spells
        /// codecs where it can ("aac", "mp3", "speex", "g711_alaw", …; "format N" otherwise).
        public static func name(_ format: UInt8) -> String {
            switch format {
            case 0: "pcm"
            case 1: "adpcm"
            case 2: "mp3"
            case 3: "pcm_le"
            case 4: "nellymoser_16k"
            case 5: "nellymoser_8k"
            case 6: "nellymoser"
            case 7: "g711_alaw"
            case 8: "g711_mulaw"
            case 10: "aac"
            case 11: "speex"
            case 14: "mp3_8k"
            case 15: "device_specific"
            default: "format \(format)"
            }
        }
    }

    /// AACPacketType.
    public enum AACPacketType: UInt8, Sendable {
        case sequenceHeader = 0, raw = 1
    }

    /// Why an audio tag body cannot be read.
    public enum Error: Swift.Error, CustomStringConvertible, Equatable, Sendable {
        case empty
        case truncatedAACHeader
        case invalidAACPacketType(UInt8)

        public var description: String {
            switch self {
            case .empty: "FLV audio tag: empty audio payload"
            case .truncatedAACHeader: "FLV audio tag: AAC payload without its packet type"
            case .invalidAACPacketType(let v): "FLV audio tag: AAC packet type \(v) is not 0 or 1"
            }
        }
    }

    public var soundFormat: UInt8
    /// 0 = 5.5 kHz, 1 = 11 kHz, 2 = 22 kHz, 3 = 44 kHz (AAC always says 3).
    public var soundRate: UInt8
    /// 0 = 8-bit, 1 = 16-bit samples.
    public var soundSize: UInt8
    public var stereo: Bool
    /// For AAC: sequence header (AudioSpecificConfig) or raw frame; nil otherwise.
    public var aacPacketType: AACPacketType?
    /// The AudioSpecificConfig, a raw AAC frame, or another codec's data.
    public var data: [UInt8]

    public init(soundFormat: UInt8 = SoundFormat.aac, soundRate: UInt8 = 3, soundSize: UInt8 = 1, stereo: Bool = true,
                aacPacketType: AACPacketType?, data: [UInt8])
    {
        self.soundFormat = soundFormat
        self.soundRate = soundRate
        self.soundSize = soundSize
        self.stereo = stereo
        self.aacPacketType = aacPacketType
        self.data = data
    }

    public init(parsing payload: [UInt8]) throws {
        guard let first = payload.first else { throw Error.empty }
        soundFormat = first >> 4
        soundRate = (first >> 2) & 3
        soundSize = (first >> 1) & 1
        stereo = first & 1 == 1
        if soundFormat == SoundFormat.aac {
            guard payload.count >= 2 else { throw Error.truncatedAACHeader }
            guard let type = AACPacketType(rawValue: payload[1]) else { throw Error.invalidAACPacketType(payload[1]) }
            aacPacketType = type
            data = Array(payload[2...])
        } else {
            aacPacketType = nil
            data = Array(payload.dropFirst())
        }
    }

    public var isSequenceHeader: Bool { soundFormat == SoundFormat.aac && aacPacketType == .sequenceHeader }

    public var payload: [UInt8] {
        var out = [soundFormat << 4 | (soundRate & 3) << 2 | (soundSize & 1) << 1 | (stereo ? 1 : 0)]
        if soundFormat == SoundFormat.aac { out.append(aacPacketType?.rawValue ?? 1) }
        return out + data
    }
}

/// The fields of an MPEG-4 AudioSpecificConfig (ISO/IEC 14496-3 §1.6.2.1) a player needs.
public struct AACAudioSpecificConfig: Equatable, Sendable {
    public enum Error: Swift.Error, CustomStringConvertible, Equatable, Sendable {
        case truncated
        case invalidSamplingFrequencyIndex(UInt8)

        public var description: String {
            switch self {
            case .truncated: "AAC audio config: too short"
            case .invalidSamplingFrequencyIndex(let i): "AAC audio config: sampling frequency index \(i) is reserved"
            }
        }
    }

    static let frequencies = [96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025, 8000, 7350]

    /// 2 = AAC LC, 5 = SBR (HE-AAC)…
    public var audioObjectType: Int
    public var sampleRate: Int
    public var channelConfiguration: Int

    public init(audioObjectType: Int, sampleRate: Int, channelConfiguration: Int) {
        self.audioObjectType = audioObjectType
        self.sampleRate = sampleRate
        self.channelConfiguration = channelConfiguration
    }

    public init(parsing bytes: [UInt8]) throws {
        var bit = 0
        func read(_ count: Int) throws -> Int {
            var value = 0
            for _ in 0..<count {
                guard bit < bytes.count * 8 else { throw Error.truncated }
                value = value << 1 | Int((bytes[bit >> 3] >> (7 - UInt8(bit & 7))) & 1)
                bit += 1
            }
            return value
        }
        var type = try read(5)
        if type == 31 { type = 32 + (try read(6)) }
        audioObjectType = type
        let index = try read(4)
        if index == 15 {
            sampleRate = try read(24)
        } else {
            guard index < Self.frequencies.count else { throw Error.invalidSamplingFrequencyIndex(UInt8(index)) }
            sampleRate = Self.frequencies[index]
        }
        channelConfiguration = try read(4)
    }
}
