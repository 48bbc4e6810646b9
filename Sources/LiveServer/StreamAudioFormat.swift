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
        codec = FLVAudioTag.SoundFormat.name(format)
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
}
