import LiveRTMP

/// A relayed stream's audio as `/api/streams` reports it: the codec, and the sample
/// rate and channels when they are known. AAC's come from its sequence header (the
/// AudioSpecificConfig; the FLV tag's own rate and channel bits are fixed for AAC and
/// say nothing), every other format's from the FLV AUDIODATA header byte (FLV spec
/// v10.1 §E.4.2.1).
///
/// Pure value, read from bytes the publisher sent: only a bounded prefix of a header
/// is parsed, and anything unreadable leaves a field unknown (nil).
public struct StreamAudioFormat: Equatable, Sendable {
    /// "aac", or the FLV sound format's name ("mp3", "speex", "nellymoser", …).
    public var codec: String
    public var sampleRate: Int?
    public var channels: Int?

    /// The most bytes of an AudioSpecificConfig read: its object type, frequency and
    /// channel fields take at most 43 bits (an escaped type and an explicit frequency).
    static let maxConfigBytes = 6

    public init(codec: String, sampleRate: Int?, channels: Int?) {
        self.codec = codec
        self.sampleRate = sampleRate
        self.channels = channels
    }

    /// The format of a stream whose audio messages start with `tagByte`; for AAC,
    /// `aacHeader` is the payload of its sequence header (nil: none seen yet).
    public init(tagByte: UInt8, aacHeader: [UInt8]?) {
        let format = tagByte >> 4
        codec = Self.name(ofSoundFormat: format)
        if format == FLVAudioTag.SoundFormat.aac {
            let config = aacHeader.flatMap { header in
                try? AACAudioSpecificConfig(parsing: Array(header.dropFirst(2).prefix(Self.maxConfigBytes)))
            }
            sampleRate = config.map(\.sampleRate).flatMap { $0 > 0 ? $0 : nil }
            // 0: the channels are described in the stream itself (a program config element).
            channels = config.map(\.channelConfiguration).flatMap { (1...7).contains($0) ? ($0 == 7 ? 8 : $0) : nil }
            return
        }
        channels = tagByte & 1 == 1 ? 2 : 1
        switch format {
        case 4: sampleRate = 16000
        case 5, 14: sampleRate = 8000
        case 11: sampleRate = 16000
        case 7, 8: sampleRate = 8000
        default: sampleRate = [5512, 11025, 22050, 44100][Int((tagByte >> 2) & 3)]
        }
    }

    /// FLV SoundFormat names (§E.4.2.1), lower case as ffprobe spells codecs where it can.
    static func name(ofSoundFormat format: UInt8) -> String {
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
