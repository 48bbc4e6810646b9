import Testing
@testable import LiveRTMP

/// What a player makes of an RTMP audio message (`RTMPAudioMessage`): checked and bounded.
@Suite("RTMP audio messages as a player reads them")
struct RTMPAudioMessageTests {
    /// AAC-LC, 48 kHz (index 3), mono: 00010 0011 0001 000.
    static let monoASC: [UInt8] = [0x11, 0x88]
    /// AAC-LC, 44.1 kHz (index 4), stereo.
    static let stereoASC: [UInt8] = [0x12, 0x10]

    @Test("the AAC sequence header gives the AudioSpecificConfig as sent and as read")
    func sequenceHeader() throws {
        let message = try RTMPAudioMessage(parsing: [0xAF, 0x00] + Self.monoASC)
        #expect(message == .configuration(AACAudioSpecificConfig(audioObjectType: 2, sampleRate: 48000, channelConfiguration: 1),
                                          bytes: Self.monoASC))
        let stereo = try RTMPAudioMessage(parsing: FLVAudioTag(aacPacketType: .sequenceHeader, data: Self.stereoASC).payload)
        guard case .configuration(let config, _) = stereo else { Issue.record("\(stereo)"); return }
        #expect(config.sampleRate == 44100 && config.channelConfiguration == 2)
    }

    @Test("a raw frame is delivered as it came; an AAC message without data is empty")
    func rawFrame() throws {
        #expect(try RTMPAudioMessage(parsing: [0xAF, 0x01, 0x21, 0x10, 0x04]) == .frame([0x21, 0x10, 0x04]))
        #expect(try RTMPAudioMessage(parsing: [0xAF, 0x01]) == .empty)
    }

    @Test("MP3 and Speex are unsupported, not errors", arguments: [FLVAudioTag.SoundFormat.mp3, FLVAudioTag.SoundFormat.speex])
    func otherCodecs(format: UInt8) throws {
        #expect(try RTMPAudioMessage(parsing: [format << 4 | 0x0F, 0xFF, 0xFB]) == .unsupported(soundFormat: format))
        #expect(FLVAudioTag.SoundFormat.name(format) == (format == 2 ? "mp3" : "speex"))
    }

    @Test("hostile headers and frames are refused with a reason")
    func hostile() throws {
        // Empty, and AAC without its packet type.
        #expect(throws: RTMPAudioMessage.Error.tag(.empty)) { try RTMPAudioMessage(parsing: []) }
        #expect(throws: RTMPAudioMessage.Error.tag(.truncatedAACHeader)) { try RTMPAudioMessage(parsing: [0xAF]) }
        #expect(throws: RTMPAudioMessage.Error.tag(.invalidAACPacketType(7))) { try RTMPAudioMessage(parsing: [0xAF, 7, 1]) }
        // A config cut short, a reserved rate index, 3 channels, an absurd explicit rate.
        #expect(throws: RTMPAudioMessage.Error.configuration(.truncated)) { try RTMPAudioMessage(parsing: [0xAF, 0, 0x11]) }
        #expect(throws: RTMPAudioMessage.Error.configuration(.invalidSamplingFrequencyIndex(13))) {
            try RTMPAudioMessage(parsing: [0xAF, 0, 0x16, 0x88])
        }
        #expect(throws: RTMPAudioMessage.Error.unsupportedConfiguration(sampleRate: 48000, channels: 3)) {
            try RTMPAudioMessage(parsing: [0xAF, 0, 0x11, 0x98])
        }
        // Index 15, then 24 bits of rate (0xFFFFFF), then mono.
        #expect(throws: RTMPAudioMessage.Error.unsupportedConfiguration(sampleRate: 0xFF_FFFF, channels: 1)) {
            try RTMPAudioMessage(parsing: [0xAF, 0, 0x17, 0xFF, 0xFF, 0xFF, 0x88])
        }
        let long = [UInt8](repeating: 0x11, count: RTMPAudioMessage.maxConfigurationBytes + 1)
        #expect(throws: RTMPAudioMessage.Error.configurationTooLong(long.count)) { try RTMPAudioMessage(parsing: [0xAF, 0] + long) }
        let frame = [UInt8](repeating: 0, count: RTMPAudioMessage.maxFrameBytes + 1)
        #expect(throws: RTMPAudioMessage.Error.frameTooLong(frame.count)) { try RTMPAudioMessage(parsing: [0xAF, 1] + frame) }
        // The reasons read as sentences, with no type names.
        #expect("\(RTMPAudioMessage.Error.unsupportedConfiguration(sampleRate: 48000, channels: 3))".contains("mono or stereo"))
    }

    @Test("arbitrary bytes never trap: every prefix of valid and mangled messages parses or throws")
    func arbitraryBytes() {
        var generator = SystemRandomNumberGenerator()
        let seeds: [[UInt8]] = [[0xAF, 0x00] + Self.monoASC, [0xAF, 0x01, 0x21, 0x10], [0x2F, 0xFF, 0xFB], [0xAF, 0, 0x17, 0xFF]]
        for seed in seeds {
            for length in 0...seed.count { _ = try? RTMPAudioMessage(parsing: Array(seed.prefix(length))) }
            for _ in 0..<2000 {
                var bytes = seed + (0..<Int.random(in: 0...12, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
                bytes[Int.random(in: 0..<bytes.count, using: &generator)] = .random(in: 0...255, using: &generator)
                _ = try? RTMPAudioMessage(parsing: bytes)
            }
        }
    }
}
