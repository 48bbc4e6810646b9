import Testing
@testable import LiveRTMP

@Suite("Client and server session cores talking through the chunk codec in memory")
struct RTMPSessionCoreTests {
    /// Moves bytes both ways until neither side has output; returns the events each
    /// side produced.
    func pump(_ client: inout RTMPClientSessionCore, _ server: inout RTMPServerSessionCore)
        throws -> (client: [RTMPClientSessionCore.Event], server: [RTMPServerSessionCore.Event])
    {
        var clientEvents: [RTMPClientSessionCore.Event] = []
        var serverEvents: [RTMPServerSessionCore.Event] = []
        while client.pendingOutputCount > 0 || server.pendingOutputCount > 0 {
            let toServer = client.takeOutput()
            serverEvents += try server.feed(toServer)
            let toClient = server.takeOutput()
            clientEvents += try client.feed(toClient)
        }
        return (clientEvents, serverEvents)
    }

    @Test("connect's _result carries the server's announcement; a probe stops at connect (no createStream)")
    func connectAnnouncementAndProbe() throws {
        var configuration = RTMPServerSessionCore.Configuration()
        configuration.connectAnnouncement = ["lineSignalPort": 8123, "lineSignalPath": "/line", "code": "forged"]
        var server = RTMPServerSessionCore(configuration: configuration)
        var client = RTMPClientSessionCore(url: try RTMPURL(parsing: "rtmp://127.0.0.1/live/cam"), mode: .probe)
        try client.start()
        let (clientEvents, serverEvents) = try pump(&client, &server)
        #expect(clientEvents == [.connected])
        #expect(serverEvents.count == 1)
        let information = try #require(client.connectInformation)
        #expect(information["lineSignalPort"]?.numberValue == 8123)
        #expect(information["lineSignalPath"]?.stringValue == "/line")
        // An announcement cannot replace the status itself.
        #expect(information["code"]?.stringValue == RTMPStatus.Code.connectSuccess)
        // connect only: no createStream went out (a player or publisher is creatingStream here).
        #expect(client.state == .idle && client.streamID == 0)
    }

    @Test("publish: connect, releaseStream, FCPublish, createStream, publish, metadata and video reach the server")
    func publish() throws {
        let url = try RTMPURL(parsing: "rtmp://127.0.0.1/live/cam?token=abc")
        var client = RTMPClientSessionCore(url: url, mode: .publish)
        var server = RTMPServerSessionCore()
        try client.start()
        var (clientEvents, serverEvents) = try pump(&client, &server)
        #expect(clientEvents == [.connected])
        #expect(server.connectParameters?.app == "live")
        #expect(server.connectParameters?.tcUrl == "rtmp://127.0.0.1:1935/live")
        #expect(serverEvents.count == 2)
        #expect(serverEvents.last == .publishRequested(streamID: 1, name: "cam", query: "token=abc", type: .live))
        #expect(client.state == .starting)
        // The server decides; the client is then publishing.
        try server.acceptPublish(streamID: 1)
        (clientEvents, serverEvents) = try pump(&client, &server)
        #expect(clientEvents == [.publishing(streamID: 1)])
        #expect(server.decoder.chunkSize == 4096)  // the client's Set Chunk Size arrived
        // Media flows: metadata, sequence header, frames bigger than a chunk.
        let metadata = RTMPStreamMetadata(width: 1280, height: 720, framerate: 30, videoDataRateKbps: 2500)
        try client.sendMetadata(metadata)
        let frame = FLVVideoTag(frameType: .keyframe, avcPacketType: .nalUnits, data: ramp(10_000)).payload
        for index in 0..<3 { try client.sendVideo(frame, timestamp: UInt32(index * 33)) }
        (_, serverEvents) = try pump(&client, &server)
        #expect(serverEvents.count == 4)
        guard case .metadata(1, let data, _) = serverEvents.first else {
            Issue.record("expected metadata first, got \(serverEvents)")
            return
        }
        #expect(data == .onMetaData(metadata))
        let media = serverEvents.dropFirst().compactMap { event -> RTMPRawMessage? in
            if case .media(let raw) = event { return raw } else { return nil }
        }
        #expect(media.map(\.timestamp) == [0, 33, 66])
        #expect(media.allSatisfy { $0.payload == frame && $0.messageStreamID == 1 && $0.typeID == 9 })
        // Stopping: FCUnpublish and deleteStream end the publication once.
        try client.stop()
        (_, serverEvents) = try pump(&client, &server)
        #expect(serverEvents == [.unpublished(streamID: 1, name: "cam")])
    }

    @Test("a refused publish fails the client with the server's status")
    func publishRefused() throws {
        var client = RTMPClientSessionCore(url: try RTMPURL(parsing: "rtmp://h/live/taken"), mode: .publish)
        var server = RTMPServerSessionCore()
        try client.start()
        _ = try pump(&client, &server)
        try server.rejectPublish(streamID: 1)
        let (clientEvents, _) = try pump(&client, &server)
        #expect(clientEvents.count == 1)
        guard case .failed(let status) = clientEvents.first else {
            Issue.record("expected a failure, got \(clientEvents)")
            return
        }
        #expect(status.code == RTMPStatus.Code.publishBadName)
        #expect(client.state == .failed)
        #expect(throws: RTMPClientSessionCore.Error.notPublishing("sendVideo")) { try client.sendVideo([0x17], timestamp: 0) }
    }

    @Test("play: createStream, play and Set Buffer Length; relayed media reaches the player, ping answered")
    func play() throws {
        var client = RTMPClientSessionCore(url: try RTMPURL(parsing: "rtmp://h/live/inst/cam"), mode: .play)
        var server = RTMPServerSessionCore()
        try client.start()
        let (_, serverEvents) = try pump(&client, &server)
        #expect(server.connectParameters?.app == "live/inst")
        #expect(serverEvents.contains(.playRequested(streamID: 1, name: "cam", query: nil)))
        #expect(serverEvents.contains(.bufferLength(streamID: 1, milliseconds: 3000)))
        try server.acceptPlay(streamID: 1)
        var clientEvents: [RTMPClientSessionCore.Event]
        (clientEvents, _) = try pump(&client, &server)
        #expect(clientEvents.contains(.playing(streamID: 1)))
        #expect(clientEvents.contains(.status(RTMPStatus(code: RTMPStatus.Code.playReset, description: "Playing and resetting cam."))))
        #expect(client.state == .playing)
        // The relay sends shared, self-contained bytes on the player's connection.
        let metadata = RTMPStreamMetadata(width: 640, height: 360, framerate: 25, videoDataRateKbps: 800)
        var shared: [UInt8] = []
        let data = try RTMPMessage.data(.onMetaData(metadata)).raw(timestamp: 0, messageStreamID: 1)
        try RTMPChunkEncoder.appendSelfContained(data, chunkSize: server.outgoingChunkSize, to: &shared)
        server.didSendSelfContained(onChunkStreamID: data.chunkStreamID)
        let video = RTMPRawMessage(chunkStreamID: RTMPChunkStreamID.video, typeID: 9, messageStreamID: 1, timestamp: 40,
                                   payload: ramp(9000))
        try RTMPChunkEncoder.appendSelfContained(video, chunkSize: server.outgoingChunkSize, to: &shared)
        clientEvents = try client.feed(shared)
        #expect(clientEvents == [.metadata(metadata, timestamp: 0), .video(video)])
        // Ping request → ping response.
        try server.send(.userControl(.pingRequest(timestamp: 4242)))
        _ = try client.feed(server.takeOutput())
        let serverEvents2 = try server.feed(client.takeOutput())
        #expect(serverEvents2 == [.pingResponse(timestamp: 4242)])
    }

    @Test("the player acknowledges once the server's window of bytes has arrived")
    func acknowledgements() throws {
        var client = RTMPClientSessionCore(url: try RTMPURL(parsing: "rtmp://h/live/cam"), mode: .play)
        var server = RTMPServerSessionCore(configuration: .init(windowAcknowledgementSize: 20_000))
        try client.start()
        _ = try pump(&client, &server)
        try server.acceptPlay(streamID: 1)
        _ = try pump(&client, &server)
        for index in 0..<3 {
            try server.send(RTMPRawMessage(chunkStreamID: 7, typeID: 9, messageStreamID: 1, timestamp: UInt32(index * 40),
                                           payload: ramp(9000)))
        }
        let (_, serverEvents) = try pump(&client, &server)
        let acknowledged = serverEvents.compactMap { event -> UInt32? in
            if case .acknowledged(let n) = event { return n } else { return nil }
        }
        #expect(acknowledged.count == 1)
        #expect(UInt64(acknowledged[0]) == client.decoder.bytesReceived)
        #expect(acknowledged[0] >= 20_000)
    }

    @Test("commands before connect close the connection")
    func commandBeforeConnect() throws {
        var server = RTMPServerSessionCore()
        var encoder = RTMPChunkEncoder()
        let bytes = try encoder.encode(try RTMPMessage.command(.createStream(transactionID: 2)).raw())
        #expect(throws: RTMPServerSessionCore.Error.commandBeforeConnect("createStream")) { try server.feed(bytes) }
    }

    @Test("getStreamLength gets a numeric _result, which ffmpeg's player reads")
    func getStreamLength() throws {
        var server = RTMPServerSessionCore()
        var encoder = RTMPChunkEncoder()
        var bytes = try encoder.encode(try RTMPMessage.command(.connect(transactionID: 1,
            RTMPConnectParameters(app: "live", tcUrl: "rtmp://h:1935/live"))).raw())
        bytes += try encoder.encode(try RTMPMessage.command(.getStreamLength(transactionID: 3, streamName: "cam")).raw())
        _ = try server.feed(bytes)
        var decoder = RTMPChunkDecoder()
        decoder.feed(server.takeOutput())
        var last: RTMPMessage?
        while let raw = try decoder.nextMessage() { last = try RTMPMessage(decoding: raw) }
        #expect(last == .command(.result(transactionID: 3, properties: .null, information: 0)))
    }
}
