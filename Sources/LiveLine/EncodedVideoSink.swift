import LiveCodec
import LiveCore

/// Where encoded video goes: a recording now, the RTMP publisher and the relay later.
/// Called on the encode thread, in order: `open` once, `write` per packet, `close` once.
public protocol EncodedVideoSink: AnyObject {
    func open(stream: VideoStreamInfo) throws
    func write(_ packet: EncodedVideoPacket) throws
    func close() throws
}

/// Records the stream to an .flv or .mp4 file (`--record`). A failed write (a full
/// disk) ends the recording, not the push: the file keeps what reached it, the error is
/// logged and kept in `failure`, and later packets are skipped.
public final class RecordingSink: EncodedVideoSink {
    public let path: String
    private var recorder: MediaRecorder?
    /// Why the recording stopped early; nil while it goes on.
    public private(set) var failure: Error?

    public init(path: String) throws {
        let lower = path.lowercased()
        guard lower.hasSuffix(".flv") || lower.hasSuffix(".mp4") else {
            throw LiveError(.invalidParams, "recording '\(path)': the file name must end in .flv or .mp4")
        }
        try OutputFile.checkWritable(path, what: "recording")
        self.path = path
    }

    public func open(stream: VideoStreamInfo) throws {
        recorder = try MediaRecorder(path: path, stream: stream)
    }

    public func write(_ packet: EncodedVideoPacket) throws {
        guard let recorder else { return }
        do {
            try recorder.write(packet)
        } catch {
            failure = error
            try? recorder.finish()
            self.recorder = nil
            Log.error("recording to \(path) stopped: \(error)")
        }
    }

    public func close() throws {
        try recorder?.finish()
        recorder = nil
    }
}
