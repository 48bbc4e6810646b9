import LiveCore
import Testing
@testable import LiveRTMP

@Suite("RTMP error messages: in words, with the anyRTC SDK's code of a refusal")
struct RTMPErrorMessageTests {
    @Test("what a peer sent wrong is told in the protocol's words, never as a Swift type or method")
    func protocolErrorsInWords() {
        let errors: [any Error & CustomStringConvertible] = [
            RTMPChunkDecoder.Error.missingPreviousHeader(chunkStreamID: 3, format: 1),
            RTMPChunkDecoder.Error.invalidChunkSize(0),
            AMF0Decoder.Error.truncated(offset: 3),
            AMF0Decoder.Error.unsupportedMarker(0x11, offset: 0),
            RTMPHandshake.Error.unsupportedVersion(72),
            RTMPHandshake.Error.outOfOrder("feed before start"),
            RTMPCommand.Error.missingName,
            RTMPCommand.Error.missingArgument(command: "play", argument: "stream name"),
            RTMPUserControlEvent.Error.truncated(eventType: 0, length: 2),
            FLVAudioTag.Error.empty,
            AACAudioSpecificConfig.Error.truncated,
            RTMPServerSessionCore.Error.repeatedConnect,
            RTMPMessage.Error.truncated(typeID: 1, length: 2),
            RTMPMessage.Error.notEncodable("too long"),
            FLVVideoTag.Error.empty,
            FLVVideoTag.Error.notAVC(codecID: 2),
            FLVVideoTag.Error.wrongPacketType(expected: .sequenceHeader, actual: .nalUnits),
            RTMPChunkEncoder.Error.invalidChunkSize(0),
            RTMPChunkEncoder.Error.invalidChunkStreamID(1),
            RTMPClientSessionCore.Error.notPublishing("sendVideo"),
        ]
        let typeNames = ["RTMPChunkDecoder", "AMF0Decoder", "RTMPHandshake", "RTMPCommand", "RTMPUserControlEvent", "FLVAudioTag",
                         "AACAudioSpecificConfig", "RTMPServerSessionCore", "RTMPMessage", "FLVVideoTag", "RTMPChunkEncoder",
                         "RTMPClientSessionCore", "sendVideo", "sequenceHeader", "nalUnits", "(decoding:)", "(parsing:)", ".feed", ".decode", ".nextMessage"]
        for error in errors {
            let text = error.description
            #expect(!text.isEmpty)
            for name in typeNames { #expect(!text.contains(name), "\(text)") }
        }
        #expect(RTMPHandshake.Error.unsupportedVersion(6).description.contains("RTMP version 6"))
        #expect(RTMPHandshake.Error.unsupportedVersion(72).description.contains("HTTP port"))
        #expect(RTMPHandshake.Error.unsupportedVersion(0x16).description.contains("TLS"))
    }

    static func refused(_ description: String, code: String = RTMPStatus.Code.publishBadName) -> RTMPClientError {
        .rejected(url: "rtmp://h:1935/live/x", RTMPStatus(level: "error", code: code, description: description))
    }

    @Test("a refusal's code: the one a LiveLine relay puts first in its reason, else 102 (live error); none for other failures")
    func refusalCode() {
        #expect(Self.refused("202 authentication failed: bad signature").refusalCode == .authFailed)
        #expect(Self.refused("104 unauthorized: token does not allow publish on \"live/x\"").refusalCode == .unauthorized)
        #expect(Self.refused("live/x is already being published").refusalCode == .liveError)
        #expect(Self.refused("").refusalCode == .liveError)
        // Digits that are no code, or a code of success, do not count.
        #expect(Self.refused("999 bottles").refusalCode == .liveError)
        #expect(Self.refused("0 ok").refusalCode == .liveError)
        #expect(Self.refused("2021 was a year").refusalCode == .liveError)
        #expect(Self.refused("202 authentication failed", code: RTMPStatus.Code.connectRejected).refusalCode == .authFailed)
        #expect(RTMPClientError.timedOut(url: "rtmp://h:1935/live/x", what: "connect").refusalCode == nil)
        #expect(RTMPClientError.connectionLost(url: "rtmp://h:1935/live/x", nil).refusalCode == nil)
    }
}
