import Testing
@testable import LiveRTMP

@Suite("RTMPServerSessionCore against hostile clients: names capped, nothing decoded before its time")
struct RTMPServerSessionCoreHostileTests {
    /// The client side of a test: an encoder for what it sends, a decoder for what the
    /// server answers (header compression spans messages, so both persist).
    struct Client {
        var encoder = RTMPChunkEncoder()
        var decoder = RTMPChunkDecoder()

        /// The messages the server sent since the last call, decoded.
        mutating func received(from server: inout RTMPServerSessionCore) throws -> [RTMPMessage] {
            decoder.feed(server.takeOutput())
            var messages: [RTMPMessage] = []
            while let raw = try decoder.nextMessage() { messages.append(try RTMPMessage(decoding: raw)) }
            return messages
        }

        mutating func bytes(_ command: RTMPCommand, streamID: UInt32 = 0) throws -> [UInt8] {
            try encoder.encode(try RTMPMessage.command(command).raw(messageStreamID: streamID))
        }

        mutating func connect(app: String = "live") throws -> [UInt8] {
            try bytes(.connect(transactionID: 1, RTMPConnectParameters(app: app, tcUrl: "rtmp://h:1935/live")))
        }
    }

    func statuses(_ messages: [RTMPMessage]) -> [RTMPStatus] {
        messages.compactMap { if case .command(.onStatus(let status)) = $0 { status } else { nil } }
    }

    /// A server core with a connected client that created stream 1.
    func connected() throws -> (RTMPServerSessionCore, Client) {
        var server = RTMPServerSessionCore()
        var client = Client()
        _ = try server.feed(try client.connect() + client.bytes(.createStream(transactionID: 2)))
        _ = try client.received(from: &server)
        return (server, client)
    }

    @Test("play and publish with a name over 256 bytes or a query over 4 KiB are refused with a status; no event")
    func longNames() throws {
        var (server, client) = try connected()
        let long = String(repeating: "n", count: 257)
        var events = try server.feed(try client.bytes(.play(transactionID: 0, streamName: long), streamID: 1))
        #expect(events.isEmpty)
        var status = try #require(statuses(try client.received(from: &server)).first)
        #expect(status.code == RTMPStatus.Code.playFailed)
        #expect(status.description == "stream name longer than 256 bytes")
        events = try server.feed(try client.bytes(.publish(transactionID: 0, streamName: "cam?" + String(repeating: "q", count: 4097),
                                                           type: .live), streamID: 1))
        #expect(events.isEmpty)
        status = try #require(statuses(try client.received(from: &server)).first)
        #expect(status.code == RTMPStatus.Code.publishBadName)
        #expect(status.description == "query longer than 4096 bytes")
        // Control characters and empty names are refused; 256 bytes and a 4 KiB query pass.
        events = try server.feed(try client.bytes(.play(transactionID: 0, streamName: "a\nb"), streamID: 1))
        #expect(events.isEmpty)
        #expect(statuses(try client.received(from: &server)).first?.description == "stream name with control characters")
        let longest = String(repeating: "n", count: 256)
        let query = String(repeating: "q", count: 4096)
        events = try server.feed(try client.bytes(.play(transactionID: 0, streamName: "\(longest)?\(query)"), streamID: 1))
        #expect(events == [.playRequested(streamID: 1, name: longest, query: query)])
    }

    @Test("connect with an app name over 256 bytes gets _error NetConnection.Connect.Rejected and stays unconnected")
    func longApp() throws {
        var server = RTMPServerSessionCore()
        var client = Client()
        let events = try server.feed(try client.connect(app: String(repeating: "a", count: 300)))
        #expect(events.isEmpty)
        #expect(!server.isConnected)
        let answer = try #require(try client.received(from: &server).last)
        guard case .command(.error(1, _, let information)) = answer else {
            Issue.record("expected _error, got \(answer)")
            return
        }
        #expect(information["code"]?.stringValue == RTMPStatus.Code.connectRejected)
        #expect(information["description"]?.stringValue == "app name longer than 256 bytes")
    }

    @Test("before connect only connect is decoded: a play with garbage after its name closes as 'play before connect'")
    func onlyConnectBeforeConnect() throws {
        var server = RTMPServerSessionCore()
        // "play" then an unsupported AMF0 marker (0x11, the AMF3 switch) the decoder would choke on.
        let payload: [UInt8] = [0x02, 0x00, 0x04] + Array("play".utf8) + [0x11, 0x11, 0x11]
        var encoder = RTMPChunkEncoder()
        let bytes = try encoder.encode(RTMPRawMessage(chunkStreamID: 3, typeID: 20, messageStreamID: 0, timestamp: 0,
                                                      payload: payload))
        #expect(throws: RTMPServerSessionCore.Error.commandBeforeConnect("play")) { try server.feed(bytes) }
    }

    @Test("the name a refused command carries into errors and logs is short and printable")
    func errorExcerpt() throws {
        var server = RTMPServerSessionCore()
        let name = "x\nERROR forged line" + String(repeating: "y", count: 10_000)
        var encoder = RTMPChunkEncoder()
        let bytes = try encoder.encode(RTMPRawMessage(chunkStreamID: 3, typeID: 20, messageStreamID: 0, timestamp: 0,
                                                      payload: AMF0Encoder.encode([.string(name)])))
        let excerpt = "x?ERROR forged line" + String(repeating: "y", count: 45) + "…"
        #expect(throws: RTMPServerSessionCore.Error.commandBeforeConnect(excerpt)) { try server.feed(bytes) }
    }

    @Test("data, media and aggregates on a stream that is not publishing are dropped undecoded")
    func dataNotDecodedUnlessPublishing() throws {
        let garbage: [UInt8] = [0x02, 0x00, 0x0A] + Array("onMetaData".utf8) + [0x11, 0xFF]
        var server = RTMPServerSessionCore()
        var encoder = RTMPChunkEncoder()
        for typeID in [RTMPMessage.TypeID.dataAMF0, RTMPMessage.TypeID.aggregate] {
            let bytes = try encoder.encode(RTMPRawMessage(chunkStreamID: 5, typeID: typeID, messageStreamID: 1, timestamp: 0,
                                                          payload: garbage))
            #expect(try server.feed(bytes).isEmpty)
        }
        var (connected, client) = try connected()
        let bytes = try client.encoder.encode(RTMPRawMessage(chunkStreamID: 5, typeID: 18, messageStreamID: 1, timestamp: 0,
                                                             payload: garbage))
        #expect(try connected.feed(bytes).isEmpty)
    }

    @Test("a second connect closes the connection")
    func repeatedConnect() throws {
        var (server, client) = try connected()
        #expect(throws: RTMPServerSessionCore.Error.repeatedConnect) { try server.feed(try client.connect()) }
    }

    @Test("the command name is read without decoding the rest, for types 20 and 17")
    func commandName() {
        let amf0: [UInt8] = [0x02, 0x00, 0x07] + Array("connect".utf8) + [0xFF]
        #expect(RTMPCommand.name(ofMessage: RTMPRawMessage(chunkStreamID: 3, typeID: 20, messageStreamID: 0, timestamp: 0,
                                                           payload: amf0)) == "connect")
        #expect(RTMPCommand.name(ofMessage: RTMPRawMessage(chunkStreamID: 3, typeID: 17, messageStreamID: 0, timestamp: 0,
                                                           payload: [0] + amf0)) == "connect")
        #expect(RTMPCommand.name(ofMessage: RTMPRawMessage(chunkStreamID: 3, typeID: 20, messageStreamID: 0, timestamp: 0,
                                                           payload: [0x02, 0x00, 0x09, 0x61])) == nil)
        #expect(RTMPCommand.name(ofMessage: RTMPRawMessage(chunkStreamID: 3, typeID: 20, messageStreamID: 0, timestamp: 0,
                                                           payload: [0x05])) == nil)
    }
}
