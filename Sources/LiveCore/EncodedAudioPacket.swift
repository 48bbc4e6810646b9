/// One encoded AAC frame as it leaves the encoder: raw AAC (no ADTS header; the stream's
/// AudioSpecificConfig travels separately, as FLV and MP4 carry it), with its timing.
public struct EncodedAudioPacket: Sendable, Equatable {
    public let data: [UInt8]
    /// Presentation time of the frame's first sample.
    public let pts: MediaTime
    public let duration: MediaTime

    public init(data: [UInt8], pts: MediaTime, duration: MediaTime) {
        self.data = data
        self.pts = pts
        self.duration = duration
    }
}

/// What a decoder or muxer needs to know about an AAC stream before its first packet.
public struct AudioStreamInfo: Sendable, Equatable {
    public var sampleRate: Int
    public var channelCount: Int
    /// Target bitrate in bits per second.
    public var bitrate: Int
    /// The AudioSpecificConfig (ISO/IEC 14496-3 §1.6.2.1): the encoder's global header.
    public var audioSpecificConfig: [UInt8]

    public init(sampleRate: Int, channelCount: Int, bitrate: Int, audioSpecificConfig: [UInt8]) {
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        self.bitrate = bitrate
        self.audioSpecificConfig = audioSpecificConfig
    }
}
