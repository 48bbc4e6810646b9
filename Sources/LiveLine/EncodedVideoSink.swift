import LiveCodec
import LiveCore

/// Where encoded video goes: a recording now, the RTMP publisher and the relay later.
/// Called on the encode thread, in order: `open` once, `write` per packet, `close` once.
public protocol EncodedVideoSink: AnyObject {
    func open(stream: VideoStreamInfo) throws
    func write(_ packet: EncodedVideoPacket) throws
    func close() throws
}

/// Records the stream to an .flv or .mp4 file (`--record`).
public final class RecordingSink: EncodedVideoSink {
    public let path: String
    private var recorder: MediaRecorder?

    public init(path: String) throws {
        let lower = path.lowercased()
        guard lower.hasSuffix(".flv") || lower.hasSuffix(".mp4") else {
            throw LiveError(.invalidParams, "recording '\(path)': the file name must end in .flv or .mp4")
        }
        self.path = path
    }

    public func open(stream: VideoStreamInfo) throws {
        recorder = try MediaRecorder(path: path, stream: stream)
    }

    public func write(_ packet: EncodedVideoPacket) throws {
        try recorder?.write(packet)
    }

    public func close() throws {
        try recorder?.finish()
        recorder = nil
    }
}
