import Testing
@testable import LiveRTMP

@Suite("Bytes captured from ffmpeg 5.1")
struct FFmpegCaptureTests {
    @Test("the server finds the digest in ffmpeg's real C1", arguments: [FFmpegCapture.publishC0C1, FFmpegCapture.playC0C1])
    func digestC1(c0c1: [UInt8]) throws {
        var server = RTMPHandshakeServer(random: SeededBytes(seed: 1).next)
        let step = try server.feed(c0c1)
        #expect(step.output.count == 3073)
        #expect(server.clientUsedDigest)
        #expect(server.clientSchema == .digestFirst)
    }

    @Test("ffmpeg's publishing connect decodes at every split, and LiveLine writes the same AMF0 bytes")
    func publishConnect() throws {
        let bytes = FFmpegCapture.publishAfterHandshake
        let expected = try decodeMessages([bytes[...]])
        #expect(expected.count == 1)
        for result in try decodeAtEverySplit(bytes) { #expect(result == expected) }
        let raw = try #require(expected.first)
        #expect(raw.chunkStreamID == 3 && raw.typeID == 20 && raw.payload.count == 140)
        guard case .command(.connect(1, let parameters, [])) = try RTMPMessage(decoding: raw) else {
            Issue.record("not a connect: \(raw)")
            return
        }
        #expect(parameters.app == "live")
        #expect(parameters.tcUrl == "rtmp://127.0.0.1:40549/live")
        #expect(parameters.flashVer == "FMLE/3.0 (compatible; Lavf59.27.100)")
        let ours = RTMPConnectParameters(app: "live", tcUrl: "rtmp://127.0.0.1:40549/live",
                                         flashVer: "FMLE/3.0 (compatible; Lavf59.27.100)")
        #expect(AMF0Encoder.encode(RTMPCommand.connect(transactionID: 1, ours).values) == raw.payload)
    }

    @Test("ffmpeg's playing connect carries the capability fields, byte for byte as LiveLine writes them")
    func playConnect() throws {
        let messages = try decodeMessages([FFmpegCapture.playAfterHandshake[...]])
        let raw = try #require(messages.first)
        guard case .command(.connect(1, let parameters, [])) = try RTMPMessage(decoding: raw) else {
            Issue.record("not a connect: \(raw)")
            return
        }
        #expect(parameters.object["capabilities"] == 15)
        let ours = RTMPConnectParameters(app: "live", tcUrl: "rtmp://127.0.0.1:38801/live", flashVer: "LNX 9,0,124,2",
                                         forPlaying: true)
        #expect(AMF0Encoder.encode(RTMPCommand.connect(transactionID: 1, ours).values) == raw.payload)
    }

    @Test("the server core answers ffmpeg's connect with window, bandwidth, chunk size and _result")
    func serverAnswersConnect() throws {
        var server = RTMPServerSessionCore()
        let events = try server.feed(FFmpegCapture.publishAfterHandshake)
        #expect(events.count == 1)
        #expect(server.connectParameters?.app == "live")
        var decoder = RTMPChunkDecoder()
        decoder.feed(server.takeOutput())
        var answers: [RTMPMessage] = []
        while let raw = try decoder.nextMessage() { answers.append(try RTMPMessage(decoding: raw)) }
        #expect(answers.count == 4)
        #expect(answers.prefix(3) == [.windowAcknowledgementSize(5_000_000), .setPeerBandwidth(size: 5_000_000, limit: .dynamic),
                                      .setChunkSize(4096)])
        #expect(answers.last == .command(.connectResult(transactionID: 1)))
    }
}
