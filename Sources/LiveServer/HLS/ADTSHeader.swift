/// The 7-byte ADTS header (ISO/IEC 13818-7 §6.2, no CRC) an AAC frame needs in an MPEG
/// transport stream, made from the stream's AudioSpecificConfig (ISO/IEC 14496-3
/// §1.6.2.1): its object type, sampling frequency index and channel configuration.
///
/// Pure value, read from what a publisher sent: only the first two bytes are parsed.
struct ADTSHeader: Equatable {
    /// Why an AudioSpecificConfig cannot be described in ADTS.
    enum Error: Swift.Error, CustomStringConvertible, Equatable {
        case truncated
        /// ADTS has two bits for the profile: object types 1–4 only.
        case unsupportedObjectType(Int)
        /// Index 15 (an explicit 24-bit frequency) has no ADTS form.
        case explicitFrequency

        var description: String {
            switch self {
            case .truncated: "AAC audio config: too short"
            case .unsupportedObjectType(let type): "AAC object type \(type) cannot be carried in ADTS"
            case .explicitFrequency: "AAC audio config with an explicit sampling frequency cannot be carried in ADTS"
            }
        }
    }

    /// ADTS frame_length has 13 bits.
    static let maxFrameLength = (1 << 13) - 1
    static let size = 7

    let objectType: Int
    let frequencyIndex: Int
    let channelConfiguration: Int

    init(audioSpecificConfig config: some Collection<UInt8>) throws(Error) {
        guard config.count >= 2 else { throw .truncated }
        let first = Int(config[config.startIndex])
        let second = Int(config[config.index(after: config.startIndex)])
        let type = first >> 3
        guard (1...4).contains(type) else { throw .unsupportedObjectType(type) }
        let index = (first & 0x07) << 1 | second >> 7
        guard index < 13 else { throw .explicitFrequency }
        objectType = type
        frequencyIndex = index
        channelConfiguration = (second >> 3) & 0x0F
    }

    /// The header for a raw frame of `payloadCount` bytes; nil when the frame is too long for ADTS.
    func bytes(payloadCount: Int) -> [UInt8]? {
        let length = Self.size + payloadCount
        guard payloadCount > 0, length <= Self.maxFrameLength else { return nil }
        return [
            0xFF, 0xF1,  // syncword, MPEG-4, layer 0, no CRC
            UInt8((objectType - 1) << 6 | frequencyIndex << 2 | (channelConfiguration >> 2) & 1),
            UInt8((channelConfiguration & 3) << 6 | length >> 11),
            UInt8((length >> 3) & 0xFF),
            UInt8((length & 7) << 5 | 0x1F),  // buffer fullness 0x7FF: variable rate
            0xFC,  // one raw data block
        ]
    }
}
