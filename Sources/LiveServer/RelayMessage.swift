import LiveNet
import LiveRTMP
import Synchronization

/// One message of a relayed stream, as every player gets it: the raw message (its
/// timestamp already on the stream's timeline) and its chunks, encoded once into a
/// shared buffer for message stream 1 at the relay's chunk size. Players on message
/// stream 1 (ffmpeg, LiveLine and nginx-rtmp clients all play on the first stream they
/// create) are sent that buffer as is; any other player has the raw message encoded on
/// its own connection.
///
/// Immutable once made, so any loop thread may read it.
public final class RelayMessage: Sendable {
    /// What the relay needs to know about a message to cache and drop it correctly.
    public enum Kind: Equatable, Sendable {
        /// onMetaData.
        case metadata
        /// An AVC sequence header (AVCDecoderConfigurationRecord).
        case videoHeader
        /// An AAC sequence header (AudioSpecificConfig).
        case audioHeader
        /// A video frame a decoder can start at.
        case keyframe
        /// Any other video message (inter frames, end of sequence, other codecs' frames).
        case interframe
        /// Any other audio message.
        case audio

        /// Headers and metadata: small, needed by every player, never dropped on purpose.
        public var isHeader: Bool { self == .metadata || self == .videoHeader || self == .audioHeader }
        /// Frames counted when dropped.
        public var isVideoFrame: Bool { self == .keyframe || self == .interframe }

        /// Reads the kind from the first bytes of an audio or video payload (FLV spec
        /// v10.1 §E.4.2.1, §E.4.3.1), without parsing the rest.
        public static func classify(typeID: UInt8, payload: [UInt8]) -> Kind {
            if typeID == RTMPMessage.TypeID.video {
                guard let first = payload.first else { return .interframe }
                let frameType = first >> 4
                let codec = first & 0x0F
                if codec == FLVVideoTag.CodecID.avc, payload.count >= 2, payload[1] == FLVVideoTag.AVCPacketType.sequenceHeader.rawValue {
                    return .videoHeader
                }
                // 5 is "video info / command frame": not a picture.
                return frameType == 1 || frameType == 4 ? .keyframe : .interframe
            }
            if typeID == RTMPMessage.TypeID.audio {
                guard let first = payload.first else { return .audio }
                if first >> 4 == FLVAudioTag.SoundFormat.aac, payload.count >= 2, payload[1] == 0 { return .audioHeader }
                return .audio
            }
            return .metadata
        }
    }

    /// The message stream id the shared encoding is made for.
    public static let sharedMessageStreamID: UInt32 = 1

    public let kind: Kind
    /// The message with the stream's (rebased) timestamp, on message stream 1.
    public let raw: RTMPRawMessage
    /// `raw` chunked at `chunkSize`, self-contained (format 0 then format 3), so the
    /// same bytes are valid on every connection whatever it sent before.
    public let encoded: SharedBytes
    public let chunkSize: Int
    /// The message framed for HTTP-FLV and WebSocket viewers, kept weakly (`flvFramed`).
    let flvCache = Mutex(FLVFramedCache())

    /// The most capacity a stream's scratch buffer keeps between messages: one huge
    /// message must not cost its size for the rest of the stream's life.
    public static let retainedScratchCapacity = 1 << 20

    /// Encodes `raw` once; `scratch` is a reusable buffer (its capacity is kept up to
    /// `retainedScratchCapacity`).
    public init(kind: Kind, raw: RTMPRawMessage, chunkSize: Int, scratch: inout [UInt8]) throws {
        var message = raw
        message.messageStreamID = Self.sharedMessageStreamID
        scratch.removeAll(keepingCapacity: true)
        try RTMPChunkEncoder.appendSelfContained(message, chunkSize: chunkSize, to: &scratch)
        self.kind = kind
        self.raw = message
        self.chunkSize = chunkSize
        encoded = SharedBytes(scratch)
        if scratch.capacity > Self.retainedScratchCapacity { scratch = [] }
    }

    /// Bytes of payload (what bitrates count).
    public var payloadCount: Int { raw.payload.count }

    /// Bytes this message holds: its payload and its shared encoding (what cache caps count).
    public var heldBytes: Int { raw.payload.count + encoded.count }
}
