import Testing
@testable import LiveRTMP

@Suite("RTMPCommand: typed AMF0 commands")
struct RTMPCommandTests {
    static let commands: [RTMPCommand] = [
        .connect(transactionID: 1, RTMPConnectParameters(app: "live", tcUrl: "rtmp://127.0.0.1:1935/live")),
        .connectResult(transactionID: 1),
        .error(transactionID: 1, properties: .null, information: .object(RTMPStatus(level: "error", code: "NetConnection.Connect.Rejected").object)),
        .releaseStream(transactionID: 2, streamName: "cam"), .fcPublish(transactionID: 3, streamName: "cam"),
        .fcUnpublish(transactionID: 9, streamName: "cam"), .createStream(transactionID: 4),
        .createStreamResult(transactionID: 4, streamID: 1), .deleteStream(transactionID: 10, streamID: 1),
        .deleteStreamNamed(transactionID: 11, streamName: "cam"),
        .closeStream(transactionID: 0), .publish(transactionID: 5, streamName: "cam?token=x", type: .live),
        .publish(transactionID: 5, streamName: "cam", type: .record),
        .play(transactionID: 5, streamName: "cam", start: -2000, duration: -1, reset: true),
        .getStreamLength(transactionID: 6, streamName: "cam"),
        .onStatus(RTMPStatus(code: RTMPStatus.Code.publishStart, description: "Start publishing", extra: ["details": "cam"])),
        .onFCPublish(RTMPStatus(code: RTMPStatus.Code.publishStart)),
        .other(name: "_checkbw", transactionID: 7, commandObject: .null, arguments: []),
    ]

    @Test("every command round-trips through AMF0 bytes", arguments: 0..<commands.count)
    func roundTrip(index: Int) throws {
        let command = Self.commands[index]
        let bytes = AMF0Encoder.encode(command.values)
        #expect(try RTMPCommand(decoding: AMF0Decoder.decodeAll(bytes)) == command)
    }

    @Test("ffmpeg's publish command, hand-written bytes")
    func ffmpegPublishBytes() throws {
        var bytes: [UInt8] = [0x02, 0x00, 0x07] + Array("publish".utf8)
        bytes += [0x00, 0x40, 0x14, 0, 0, 0, 0, 0, 0]  // transaction 5
        bytes += [0x05]
        bytes += [0x02, 0x00, 0x01, 0x78]  // "x"
        bytes += [0x02, 0x00, 0x04] + Array("live".utf8)
        #expect(try RTMPCommand(decoding: AMF0Decoder.decodeAll(bytes)) == .publish(transactionID: 5, streamName: "x", type: .live))
        #expect(AMF0Encoder.encode(RTMPCommand.publish(transactionID: 5, streamName: "x", type: .live).values) == bytes)
    }

    @Test("play without optional arguments takes the spec defaults")
    func playDefaults() throws {
        let command = try RTMPCommand(decoding: ["play", 3, nil, "cam"])
        #expect(command == .play(transactionID: 3, streamName: "cam", start: -2, duration: -1, reset: true))
    }

    @Test("connect parameters keep their order and typed fields")
    func connectParameters() throws {
        let parameters = RTMPConnectParameters(app: "live?token=1", tcUrl: "rtmp://h:1935/live?token=1", forPlaying: true)
        #expect(parameters.object.names == ["app", "flashVer", "tcUrl", "fpad", "capabilities", "audioCodecs",
                                            "videoCodecs", "videoFunction"])
        #expect(parameters.app == "live?token=1")
        #expect(RTMPCommand.createStreamResult(transactionID: 2, streamID: 7).createdStreamID == 7)
    }

    @Test("commands missing required arguments are errors")
    func errors() throws {
        #expect(throws: RTMPCommand.Error.missingName) { try RTMPCommand(decoding: [1]) }
        #expect(throws: RTMPCommand.Error.missingArgument(command: "publish", argument: "stream name")) {
            try RTMPCommand(decoding: ["publish", 1, nil])
        }
    }

    @Test("deleteStream as real clients send it: an id (ffmpeg), a name (GStreamer's rtmp2sink) or nothing usable")
    func deleteStreamForms() throws {
        #expect(try RTMPCommand(decoding: ["deleteStream", 4, nil, 1]) == .deleteStream(transactionID: 4, streamID: 1))
        // GStreamer 1.22, gst/rtmp2/rtmp/rtmpclient.c: deleteStream, transaction 0, null, the stream's name.
        #expect(try RTMPCommand(decoding: ["deleteStream", 0, nil, "x"]) == .deleteStreamNamed(transactionID: 0, streamName: "x"))
        let bare = try RTMPCommand(decoding: ["deleteStream", 5, nil])
        #expect(bare == .other(name: "deleteStream", transactionID: 5, commandObject: .null, arguments: []))
        #expect(bare.name == "deleteStream")
    }

    @Test("@setDataFrame metadata becomes onMetaData for players")
    func metadata() throws {
        let metadata = RTMPStreamMetadata(width: 1280, height: 720, framerate: 30, videoDataRateKbps: 2500)
        let data = try RTMPData(decoding: AMF0Decoder.decodeAll(AMF0Encoder.encode(RTMPData.setDataFrame(handler: "onMetaData", metadata: metadata).values)))
        #expect(data.metadata?.width == 1280)
        #expect(data.metadata?.videoCodecID == 7)
        #expect(data.forPlayers == .onMetaData(metadata))
    }
}
