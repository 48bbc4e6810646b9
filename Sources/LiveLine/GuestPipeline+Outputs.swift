import Foundation
import LiveAuth
import LiveCapture
import LiveCodec
import LiveCore
import LiveNet
import LiveRTMP
import Synchronization

extension GuestPipeline {
    /// Opens the outputs written from the first frame on (the others open in `init`).
    func openOutputs() throws {
        if let path = configuration.y4mPath { y4m = try Y4MWriter(path: path) }
        if let path = configuration.wavPath { wav = try PCMWriter(path: path, format: .wav) }
        if let path = configuration.pcmPath { pcm = try PCMWriter(path: path, format: .raw) }
    }

    /// Finishes and closes every output at the end of the run (decode thread); returns
    /// the first failure that should fail the run (a recording's is reported, not returned).
    func finishOutputs() -> Swift.Error? {
        var failure: Swift.Error?
        // A recording that cannot be closed (a full disk) failed like one whose write
        // failed: reported as such, not as the end of playing.
        if let recorder {
            do {
                try recorder.finish()
            } catch {
                stopRecording(recorder, after: error)
            }
        }
        do {
            try wav?.finish()
            // A write to --out failed (or its reader went away): that ended the run already.
            if let out, !outFailed {
                do {
                    try out.finish()
                } catch {
                    let outError = OutError(path: out.path, cause: error)
                    if !outError.readerClosed { throw outError }
                }
            }
            if let path = configuration.snapshotPath, let frame = lastFrame {
                let image = try Scaler().rgbaImage(from: frame)
                try ImageFile.writePNG(image, path: path)
                shared.withLock { $0.stats.snapshotWritten = true }
            }
        } catch {
            failure = error
        }
        y4m = nil
        (wav, pcm, out) = (nil, nil, nil)
        return failure
    }

    /// A failed `--out` write. Unlike the recording, it ends the run (it is the output
    /// asked for), as a stop when the reader of standard output went away.
    struct OutError: Swift.Error, CustomStringConvertible, ReaderClosing {
        let path: String
        let cause: Swift.Error

        var readerClosed: Bool { path == "-" && (cause as? FFmpegError)?.code == -EPIPE }
        var description: String { "writing --out \(path == "-" ? "to standard output" : path) failed: \(cause)" }
    }

    func writeOut(_ body: (GuestRecorder) throws -> Void) throws {
        guard let out else { return }
        do {
            try body(out)
        } catch {
            outFailed = true
            throw OutError(path: out.path, cause: error)
        }
        shared.withLock { $0.stats.outPackets = out.packetsWritten + out.audioPacketsWritten }
    }

    /// An onMetaData number as a whole number in `range`, nil when it is missing or is
    /// not a number there: the publisher controls it (NaN, infinity and 1e300 included),
    /// and `Int(_:)` of those traps.
    static func wholeNumber(_ value: Double?, in range: ClosedRange<Int>) -> Int? {
        guard let value, value >= Double(range.lowerBound), value <= Double(range.upperBound) else { return nil }
        return Int(value.rounded())
    }

    /// A failed recording write (a full disk) ends the recording, not the playing: the
    /// file is closed with what reached it, the reason kept in the stats and reported.
    func stopRecording(_ failed: GuestRecorder, after error: Swift.Error) {
        try? failed.finish()
        recorder = nil
        let message = "recording to \(failed.path) stopped: \(error)"
        shared.withLock { $0.stats.recordingError = message }
        onEvent?(.recordingFailed(message: message))
    }
}


/// An output's error that may say its reader went away (EPIPE on standard output).
protocol ReaderClosing: Swift.Error {
    var readerClosed: Bool { get }
}

extension PCMWriter.Error: ReaderClosing {
    var readerClosed: Bool { if case .readerClosed = self { true } else { false } }
}

extension Y4MWriter.Error: ReaderClosing {
    var readerClosed: Bool { if case .readerClosed = self { true } else { false } }
}
