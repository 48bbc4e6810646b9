import Foundation
import LiveCodec
import LiveCore
import Synchronization

/// Where the hoster's encoded media goes: the RTMP publisher, a recording.
///
/// The pipeline calls `open(video:audio:)` once before anything else, then `write` per
/// packet, then `close` once after the last packet of either kind. Video packets come
/// on the encode thread, audio packets on the audio thread, so a sink that takes both
/// must let the two `write`s run at the same time. A sink that only knows video
/// implements `open(stream:)` and the video `write`: the extension opens it for the
/// video track and ignores audio.
public protocol EncodedVideoSink: AnyObject {
    func open(stream: VideoStreamInfo) throws
    func write(_ packet: EncodedVideoPacket) throws
    func close() throws
    /// Opens the sink for the tracks the stream carries (nil: that track is absent; an
    /// audio-only live has no video).
    func open(video: VideoStreamInfo?, audio: AudioStreamInfo?) throws
    /// One AAC frame, on the audio thread.
    func write(_ packet: EncodedAudioPacket) throws
}

extension EncodedVideoSink {
    /// Video-only sinks: opened for the video track; a stream without video never opens them.
    public func open(video: VideoStreamInfo?, audio: AudioStreamInfo?) throws {
        if let video { try open(stream: video) }
    }

    /// Video-only sinks ignore audio.
    public func write(_ packet: EncodedAudioPacket) throws {}
}

/// Records the stream to an .flv or .mp4 file (`--record`), with the tracks it carries:
/// video, AAC audio, or both on one timeline (the first keyframe is time 0; audio before
/// it is not kept). Video and audio arrive on their own threads: the recorder is used
/// under a lock. A failed write (a full disk) ends the recording, not the push: the file
/// keeps what reached it, the error is logged and kept in `failure`, and later packets
/// are skipped.
public final class RecordingSink: EncodedVideoSink, Sendable {
    public let path: String
    /// The recorder while it records, and why it stopped early.
    private struct State {
        var recorder: MediaRecorder?
        var failure: Error?
    }

    private let state = Mutex(State())

    public init(path: String) throws {
        let lower = path.lowercased()
        guard lower.hasSuffix(".flv") || lower.hasSuffix(".mp4") else {
            throw LiveError(.invalidParams, "recording '\(path)': the file name must end in .flv or .mp4")
        }
        try OutputFile.checkWritable(path, what: "recording")
        self.path = path
    }

    /// Why the recording stopped early; nil while it goes on.
    public var failure: Error? {
        state.withLock { $0.failure }
    }

    public func open(stream: VideoStreamInfo) throws {
        try open(video: stream, audio: nil)
    }

    public func open(video: VideoStreamInfo?, audio: AudioStreamInfo?) throws {
        let made = try MediaRecorder(path: path, video: video, audio: audio)
        state.withLock { $0.recorder = made }
    }

    public func write(_ packet: EncodedVideoPacket) throws {
        record { try $0.write(packet) }
    }

    public func write(_ packet: EncodedAudioPacket) throws {
        record { try $0.write(audio: packet) }
    }

    public func close() throws {
        try state.withLock { state in
            try state.recorder?.finish()
            state.recorder = nil
        }
    }

    private func record(_ write: (MediaRecorder) throws -> Void) {
        state.withLock { state in
            guard let recorder = state.recorder else { return }
            do {
                try write(recorder)
            } catch {
                state.failure = error
                try? recorder.finish()
                state.recorder = nil
                Log.error("recording to \(path) stopped: \(error)")
            }
        }
    }
}
