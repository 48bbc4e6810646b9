import LiveNet
import Testing
@testable import LiveRTMP
@testable import LiveServer

@Suite("GOPCache with audio: the audio since the keyframe, in timestamp order, counted in the caps")
struct GOPCacheAudioTests {
    func message(_ kind: RelayMessage.Kind, at timestamp: UInt32, size: Int = 100) throws -> RelayMessage {
        let audio = kind == .audio || kind == .audioHeader
        let typeID: UInt8 = audio ? 8 : kind == .metadata ? 18 : 9
        var scratch: [UInt8] = []
        return try RelayMessage(kind: kind, raw: RTMPRawMessage(chunkStreamID: audio ? 6 : 7, typeID: typeID, messageStreamID: 1,
                                                                  timestamp: timestamp, payload: [UInt8](repeating: 1, count: size)),
                                chunkSize: 4096, scratch: &scratch)
    }

    func stamps(_ cache: GOPCache) -> [String] {
        cache.messages.map { ($0.kind == .audio ? "a" : $0.kind == .keyframe ? "K" : "v") + "\($0.raw.timestamp)" }
    }

    @Test("interleaved audio and video: the replay is the keyframe, then both streams in arrival (= timestamp) order")
    func interleaved() throws {
        var cache = GOPCache()
        cache.add(try message(.videoHeader, at: 0))
        cache.add(try message(.audioHeader, at: 0))
        cache.add(try message(.keyframe, at: 0))
        for ms in stride(from: 0, to: 120, by: 20) {
            cache.add(try message(.audio, at: UInt32(ms + 3)))
            if ms % 40 == 0, ms > 0 { cache.add(try message(.interframe, at: UInt32(ms))) }
        }
        #expect(stamps(cache) == ["K0", "a3", "a23", "v40", "a43", "a63", "v80", "a83", "a103"])
        #expect(cache.replay.prefix(2).map(\.kind) == [.videoHeader, .audioHeader])
    }

    @Test("audio that arrives ahead of its keyframe moves into the new GOP behind it; audio stamped before the keyframe does not")
    func audioAheadOfVideo() throws {
        var cache = GOPCache()
        cache.add(try message(.keyframe, at: 0))
        cache.add(try message(.audio, at: 10))
        cache.add(try message(.interframe, at: 40))
        // The publisher's audio runs 60 ms ahead: 1950…2010 arrive before the keyframe at 2000.
        for ms in [1950, 1971, 1992, 2013] { cache.add(try message(.audio, at: UInt32(ms))) }
        cache.add(try message(.keyframe, at: 2000))
        #expect(stamps(cache) == ["K2000", "a2013"])
        // Audio behind the video (arriving after a later frame) is put in timestamp order,
        // and audio stamped before the keyframe is not cached.
        cache.add(try message(.interframe, at: 2040))
        cache.add(try message(.audio, at: 2034))
        cache.add(try message(.audio, at: 1999))
        cache.add(try message(.audio, at: 2055))
        #expect(stamps(cache) == ["K2000", "a2013", "a2034", "v2040", "a2055"])
        let times = cache.messages.map { Int32(bitPattern: $0.raw.timestamp &- 2000) }
        #expect(times == times.sorted())
    }

    @Test("audio that ran ahead of the first keyframe, or one after an overflow, is kept for it, up to the lead allowed")
    func leadAudioBeforeFirstKeyframe() throws {
        var cache = GOPCache(limits: .init(maxAudioLeadMilliseconds: 100))
        cache.add(try message(.videoHeader, at: 0))
        for ms in stride(from: 0, through: 300, by: 20) { cache.add(try message(.audio, at: UInt32(ms))) }
        // Only the newest 100 ms are held, and counted.
        #expect(cache.leadAudio.map(\.raw.timestamp) == [200, 220, 240, 260, 280, 300])
        #expect(cache.byteCount == cache.leadAudio.reduce(0) { $0 + $1.heldBytes })
        #expect(cache.replay.map(\.kind) == [.videoHeader])  // never replayed on its own
        cache.add(try message(.keyframe, at: 250))
        #expect(stamps(cache) == ["K250", "a260", "a280", "a300"])
        #expect(cache.leadAudio.isEmpty)
        #expect(cache.byteCount == cache.messages.reduce(0) { $0 + $1.heldBytes })
    }

    @Test("an audio-only stream caches no audio; a headers-only cache (0 ms) holds none either")
    func audioOnlyAndHeadersOnly() throws {
        var radio = GOPCache()
        radio.add(try message(.audioHeader, at: 0))
        for ms in stride(from: 0, to: 2000, by: 21) { radio.add(try message(.audio, at: UInt32(ms))) }
        #expect(!radio.hasVideo)
        #expect(radio.byteCount == 0)
        #expect(radio.replay.map(\.kind) == [.audioHeader])

        var headersOnly = GOPCache(limits: .init(maxDurationMilliseconds: 0))
        headersOnly.add(try message(.videoHeader, at: 0))
        headersOnly.add(try message(.audio, at: 10))
        headersOnly.add(try message(.keyframe, at: 0))
        headersOnly.add(try message(.audio, at: 20))
        #expect(headersOnly.byteCount == 0)
        #expect(headersOnly.replay.map(\.kind) == [.videoHeader])
    }

    @Test("order and 'before the keyframe' hold across the 32-bit timestamp wrap")
    func timestampWrap() throws {
        var cache = GOPCache()
        cache.add(try message(.keyframe, at: 0xFFFF_FFF0))
        cache.add(try message(.audio, at: 0xFFFF_FFE0))  // before the keyframe: not cached
        cache.add(try message(.interframe, at: 0x0000_0010))
        cache.add(try message(.audio, at: 0x0000_0005))  // after the wrap, before the frame
        cache.add(try message(.audio, at: 0xFFFF_FFF8))
        #expect(cache.messages.map(\.raw.timestamp) == [0xFFFF_FFF0, 0xFFFF_FFF8, 0x0000_0005, 0x0000_0010])
    }

    @Test("audio counts in the byte and message caps: a GOP that audio pushes over a cap is abandoned")
    func audioInTheCaps() throws {
        let frame = try message(.keyframe, at: 0, size: 1000)
        let sound = try message(.audio, at: 5, size: 400)
        var bytes = GOPCache(limits: .init(maxBytes: frame.heldBytes + 2 * sound.heldBytes))
        bytes.add(frame)
        bytes.add(try message(.audio, at: 5, size: 400))
        bytes.add(try message(.audio, at: 26, size: 400))
        #expect(bytes.byteCount == frame.heldBytes + 2 * sound.heldBytes)
        bytes.add(try message(.audio, at: 47, size: 400))
        #expect(bytes.messages.isEmpty)
        #expect(bytes.overflowCount == 1)
        #expect(bytes.byteCount == 0)
        // Waiting for the next keyframe, audio is lead audio, still counted.
        bytes.add(try message(.audio, at: 68, size: 400))
        #expect(bytes.leadAudio.count == 1)
        #expect(bytes.byteCount == sound.heldBytes)

        var count = GOPCache(limits: .init(maxMessages: 3))
        count.add(try message(.keyframe, at: 0))
        count.add(try message(.audio, at: 1))
        count.add(try message(.audio, at: 2))
        #expect(count.messages.count == 3)
        count.add(try message(.audio, at: 3))
        #expect(count.messages.isEmpty)
        for ms in 4..<20 { count.add(try message(.audio, at: UInt32(ms))) }
        #expect(count.leadAudio.map(\.raw.timestamp) == [17, 18, 19])
    }

    @Test("a stream's audio is charged to the server-wide budget with its video, and given back")
    func sharedBudgetCountsAudio() throws {
        let group = try EventLoopGroup(count: 1, name: "gop-audio-budget")
        defer { group.shutdown() }
        let budget = ByteBudget(limit: 1 << 20)
        let stream = RelayStream(key: StreamKey(app: "live", name: "av"), chunkSize: 4096,
                                 gopLimits: GOPCache.Limits(sharedBudget: budget))
        let source = RelayBudgetTests.Source(loop: group.loops[0])
        _ = stream.claim(source, address: "s", authorized: false, nowMicros: 0, quietMicros: 1)
        try stream.relay(RTMPRawMessage(chunkStreamID: 7, typeID: 9, messageStreamID: 1, timestamp: 0,
                                        payload: [0x17, 1] + [UInt8](repeating: 0, count: 1000)),
                         kind: .keyframe, from: source, nowMicros: 1)
        let videoOnly = budget.usedBytes
        for index in 0..<10 {
            try stream.relay(RTMPRawMessage(chunkStreamID: 6, typeID: 8, messageStreamID: 1, timestamp: UInt32(index * 21),
                                            payload: [0xAF, 1] + [UInt8](repeating: 0, count: 300)),
                             kind: .audio, from: source, nowMicros: 2)
        }
        #expect(budget.usedBytes > videoOnly + 10 * 300)
        #expect(budget.usedBytes == stream.stats(nowMicros: 2).cachedBytes)
        stream.endPublishing(source, notifyPlayers: false)
        #expect(budget.usedBytes == 0)
    }
}

@Suite("The audio a stream reports: codec, rate, channels from the AAC header or the FLV tag byte")
struct StreamAudioFormatTests {
    @Test("AAC: rate and channels from the AudioSpecificConfig, whatever the FLV tag byte says")
    func aac() {
        // AAC-LC, 48 kHz (index 3), stereo: 0x11 0x90.
        let stereo = StreamAudioFormat(tagByte: 0xAF, aacHeader: [0xAF, 0x00, 0x11, 0x90])
        #expect(stereo == StreamAudioFormat(codec: "aac", sampleRate: 48000, channels: 2))
        // AAC-LC, 44.1 kHz (index 4), mono: 0x12 0x08.
        let mono = StreamAudioFormat(tagByte: 0xAF, aacHeader: [0xAF, 0x00, 0x12, 0x08])
        #expect(mono == StreamAudioFormat(codec: "aac", sampleRate: 44100, channels: 1))
        // Frames without a header yet, a truncated or a reserved-frequency header: unknown.
        #expect(StreamAudioFormat(tagByte: 0xAF, aacHeader: nil) == StreamAudioFormat(codec: "aac", sampleRate: nil, channels: nil))
        #expect(StreamAudioFormat(tagByte: 0xAF, aacHeader: [0xAF, 0x00, 0x11]).sampleRate == nil)
        #expect(StreamAudioFormat(tagByte: 0xAF, aacHeader: [0xAF, 0x00, 0x16, 0x90]).sampleRate == nil)  // index 13
        // A header longer than the fields is read only as far as they go.
        let long = [0xAF, 0x00, 0x11, 0x90] + [UInt8](repeating: 0xFF, count: 100_000)
        #expect(StreamAudioFormat(tagByte: 0xAF, aacHeader: long).sampleRate == 48000)
    }

    @Test("any bytes at all give a format or unknown fields, never a trap")
    func hostileBytes() {
        var generator = SystemRandomNumberGenerator()
        for length in 0..<12 {
            for _ in 0..<2000 {
                let header = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
                let format = StreamAudioFormat(tagByte: header.first ?? 0xAF, aacHeader: header)
                #expect(!format.codec.isEmpty)
                #expect(format.sampleRate.map { $0 > 0 && $0 < 1 << 24 } ?? true)
                #expect(format.channels.map { (1...8).contains($0) } ?? true)
            }
        }
    }

    @Test("other formats: the FLV sound format's name, rate and channel bits")
    func otherFormats() {
        #expect(StreamAudioFormat(tagByte: 0x2F, aacHeader: nil) == StreamAudioFormat(codec: "mp3", sampleRate: 44100, channels: 2))
        #expect(StreamAudioFormat(tagByte: 0x2A, aacHeader: nil) == StreamAudioFormat(codec: "mp3", sampleRate: 22050, channels: 1))
        #expect(StreamAudioFormat(tagByte: 0xB2, aacHeader: nil) == StreamAudioFormat(codec: "speex", sampleRate: 16000, channels: 1))
        #expect(StreamAudioFormat(tagByte: 0x72, aacHeader: nil).codec == "g711_alaw")
        #expect(StreamAudioFormat(tagByte: 0x92, aacHeader: nil).codec == "format 9")
    }

    @Test("a relayed stream reports its audio and the audio's own bitrate; a video-only one reports none")
    func relayStreamStats() throws {
        let group = try EventLoopGroup(count: 1, name: "audio-stats")
        defer { group.shutdown() }
        let stream = RelayStream(key: StreamKey(app: "live", name: "av"), chunkSize: 4096, gopLimits: GOPCache.Limits())
        let source = RelayBudgetTests.Source(loop: group.loops[0])
        _ = stream.claim(source, address: "s", authorized: false, nowMicros: 0, quietMicros: 1)
        try stream.relay(RTMPRawMessage(chunkStreamID: 7, typeID: 9, messageStreamID: 1, timestamp: 0,
                                        payload: [0x17, 1] + [UInt8](repeating: 0, count: 1000)),
                         kind: .keyframe, from: source, nowMicros: 1)
        #expect(stream.stats(nowMicros: 1).audioCodec == nil)
        #expect(stream.stats(nowMicros: 1).audioBitrate == nil)
        try stream.relay(RTMPRawMessage(chunkStreamID: 6, typeID: 8, messageStreamID: 1, timestamp: 0, payload: [0xAF, 0, 0x11, 0x90]),
                         kind: .audioHeader, from: source, nowMicros: 2)
        // 47 AAC frames of 250 bytes in one second: 94,000 bits/s of audio.
        for index in 0..<47 {
            try stream.relay(RTMPRawMessage(chunkStreamID: 6, typeID: 8, messageStreamID: 1, timestamp: UInt32(index * 21),
                                            payload: [0xAF, 1] + [UInt8](repeating: 0, count: 248)),
                             kind: .audio, from: source, nowMicros: UInt64(3 + index * 21_000))
        }
        try stream.relay(RTMPRawMessage(chunkStreamID: 7, typeID: 9, messageStreamID: 1, timestamp: 1000,
                                        payload: [0x27, 1] + [UInt8](repeating: 0, count: 98)),
                         kind: .interframe, from: source, nowMicros: 1_000_000)
        let stats = stream.stats(nowMicros: 1_000_001)
        #expect(stats.audioCodec == "aac")
        #expect(stats.audioSampleRate == 48000)
        #expect(stats.audioChannels == 2)
        let audioBitrate = try #require(stats.audioBitrate)
        #expect(abs(audioBitrate - (47 * 250 + 4) * 8) < 200, "\(audioBitrate)")
        #expect(stats.bitrate > audioBitrate)
        // Stale rates read 0 once the stream stops sending.
        #expect(stream.stats(nowMicros: 5_000_000).audioBitrate == 0)
    }
}
