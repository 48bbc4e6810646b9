import Testing
@testable import LiveRTMP

/// RTMPServerSessionCore and the goodbyes other clients say: what they send to stop must
/// end the stream without ending the connection as malformed (nginx-rtmp accepts all of it).
@Suite("RTMPServerSessionCore with the stop commands real clients send")
struct RTMPServerSessionCoreInteropTests {
    typealias Client = RTMPServerSessionCoreHostileTests.Client

    /// A connected client publishing `name` on stream 1.
    func publishing(_ name: String) throws -> (RTMPServerSessionCore, Client) {
        var server = RTMPServerSessionCore()
        var client = Client()
        _ = try server.feed(try client.connect() + client.bytes(.createStream(transactionID: 2)))
        let events = try server.feed(try client.bytes(.publish(transactionID: 0, streamName: name, type: .live), streamID: 1))
        #expect(events == [.publishRequested(streamID: 1, name: name, query: nil, type: .live)])
        try server.acceptPublish(streamID: 1)
        _ = try client.received(from: &server)
        return (server, client)
    }

    @Test("GStreamer's rtmp2sink stop: FCUnpublish, then deleteStream with the name on stream 0; one unpublish, no error")
    func gstreamerPublisherStop() throws {
        var (server, client) = try publishing("x")
        // gst/rtmp2/rtmp/rtmpclient.c (1.22), the default stop-commands: both on message stream 0.
        var events = try server.feed(try client.bytes(.fcUnpublish(transactionID: 0, streamName: "x")))
        #expect(events == [.unpublished(streamID: 1, name: "x")])
        events = try server.feed(try client.bytes(.other(name: "deleteStream", transactionID: 0, commandObject: .null,
                                                         arguments: [.string("x")])))
        #expect(events.isEmpty)
        // The connection is still in good standing: it can publish again.
        events = try server.feed(try client.bytes(.createStream(transactionID: 3)))
        #expect(events.isEmpty)
    }

    @Test("deleteStream by name alone ends a publication and a play of that name")
    func deleteByName() throws {
        var (server, client) = try publishing("x")
        var events = try server.feed(try client.bytes(.deleteStreamNamed(transactionID: 0, streamName: "x?token=t")))
        #expect(events == [.unpublished(streamID: 1, name: "x")])

        _ = try server.feed(try client.bytes(.createStream(transactionID: 4)))
        events = try server.feed(try client.bytes(.play(transactionID: 0, streamName: "y"), streamID: 2))
        #expect(events == [.playRequested(streamID: 2, name: "y", query: nil)])
        try server.acceptPlay(streamID: 2)
        events = try server.feed(try client.bytes(.deleteStreamNamed(transactionID: 0, streamName: "y")))
        #expect(events == [.playStopped(streamID: 2, name: "y")])
        // Another name, or a deleteStream with nothing usable, ends nothing and breaks nothing.
        events = try server.feed(try client.bytes(.deleteStreamNamed(transactionID: 0, streamName: "z")))
        #expect(events.isEmpty)
        events = try server.feed(try client.bytes(.other(name: "deleteStream", transactionID: 0, commandObject: .null,
                                                         arguments: [])))
        #expect(events.isEmpty)
    }
}
