import LiveCodec
import LiveCore
import LiveNet
import LiveRTMP

/// Pushes the hoster's encoded stream to an RTMP server (`liveline host RTMP_URL`).
///
/// `open` runs its own event loop, connects and publishes, waiting at most the connect
/// timeout (a refused or silent server is an error naming the URL, never a hang), then
/// queues onMetaData and the AVC sequence header. `write` hands each packet to the
/// publisher (non-blocking; the publisher drops to the next keyframe when the network
/// falls behind) and throws once the publisher has failed, which ends the pipeline.
/// `close` unpublishes, lets the queue drain for a moment and stops the loop.
/// Called on the encode thread.
public final class RTMPPublishSink: EncodedVideoSink {
    public let url: RTMPURL
    public let configuration: RTMPPublisher.Configuration
    private var loop: EventLoop?
    public private(set) var publisher: RTMPPublisher?

    public init(url: RTMPURL, configuration: RTMPPublisher.Configuration = RTMPPublisher.Configuration()) {
        self.url = url
        self.configuration = configuration
    }

    /// The publisher's figures (zero before `open`).
    public var stats: RTMPPublisher.Stats { publisher?.stats ?? RTMPPublisher.Stats() }

    public func open(stream: VideoStreamInfo) throws {
        let loop = try EventLoop(name: "liveline-rtmp")
        loop.start()
        self.loop = loop
        let publisher = RTMPPublisher(url: url, loop: loop, configuration: configuration)
        self.publisher = publisher
        publisher.start()
        do {
            try publisher.waitUntilPublished()
        } catch {
            publisher.abort()
            loop.shutdown()
            self.loop = nil
            self.publisher = nil
            throw LiveError(.networkError, "RTMP publish failed: \(error)")
        }
        publisher.send(metadata: RTMPStreamMetadata(width: stream.width, height: stream.height, framerate: Double(stream.fps),
                                                    videoDataRateKbps: Double(stream.bitrate) / 1000))
        try publisher.send(sequenceHeader: stream.extradata)
    }

    public func write(_ packet: EncodedVideoPacket) throws {
        guard let publisher else { return }
        if let error = publisher.error { throw LiveError(.networkDisconnected, "RTMP publish stopped: \(error)") }
        publisher.send(packet)
    }

    public func close() throws {
        guard let publisher, let loop else { return }
        publisher.close()
        if !publisher.waitUntilClosed(timeout: .seconds(3)) { publisher.abort() }
        publisher.waitUntilClosed(timeout: .seconds(1))
        loop.shutdown()
        self.loop = nil
    }
}
