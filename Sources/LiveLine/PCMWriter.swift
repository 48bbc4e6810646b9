import Foundation
import Glibc
import LiveCore

/// Writes decoded audio as 16-bit signed little-endian PCM, channels interleaved:
/// `liveline guest --pcm` (the samples alone) and `--wav` (a RIFF/WAVE file).
///
/// The first frame fixes the rate and channel count; a later frame of another shape (a
/// new publisher) is left out and counted, since neither format can change mid-stream.
/// The WAV header is written first with its sizes unknown (0xFFFFFFFF, as a stream
/// header); `finish` fixes them when the output is a file that can seek, so a WAV on
/// standard output stays a streaming one that players read to its end. A reader that
/// went away (EPIPE) is `Error.readerClosed`; ignore SIGPIPE in the process.
/// Confined to the thread that writes (the guest's decode thread).
public final class PCMWriter {
    public enum Format: Sendable {
        /// RIFF/WAVE, PCM 16-bit.
        case wav
        /// s16le interleaved samples, no header.
        case raw
    }

    public enum Error: Swift.Error, CustomStringConvertible, Equatable, Sendable {
        case open(path: String, errno: Int32)
        case write(path: String, errno: Int32)
        case readerClosed(path: String)

        public var description: String {
            switch self {
            case .open(let path, let code):
                "cannot open \(path) for the audio: \(String(cString: strerror(code))) (errno \(code))"
            case .write(let path, let code):
                "writing the audio to \(Self.shown(path)) failed: \(String(cString: strerror(code))) (errno \(code))"
            case .readerClosed(let path): "the reader of the audio on \(Self.shown(path)) went away"
            }
        }

        private static func shown(_ path: String) -> String { path == "-" ? "standard output" : path }
    }

    /// The path given, "-" for standard output.
    public let path: String
    public let format: Format
    private let fd: Int32
    private let ownsDescriptor: Bool
    /// Fixed by the first frame (0 before).
    public private(set) var sampleRate = 0
    public private(set) var channelCount = 0
    /// Frames written, and the sample bytes (the header not counted).
    public private(set) var framesWritten = 0
    public private(set) var bytesWritten: UInt64 = 0
    /// Frames left out because their rate or channel count differed from the first's.
    public private(set) var framesSkipped = 0
    private var buffer: [UInt8] = []

    /// Opens `path` for writing (truncating it), or standard output for "-".
    public init(path: String, format: Format) throws {
        self.path = path
        self.format = format
        guard let output = OutputFile.openForWriting(path) else { throw Error.open(path: path, errno: errno) }
        (fd, ownsDescriptor) = output
    }

    deinit {
        if ownsDescriptor { Glibc.close(fd) }
    }

    /// The 44-byte header of a PCM 16-bit WAV; `dataBytes` nil: sizes unknown (streaming).
    public static func wavHeader(sampleRate: Int, channelCount: Int, dataBytes: UInt64?) -> [UInt8] {
        func le32(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> ($0 * 8)) } }
        func le16(_ value: UInt16) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }
        let data = dataBytes.map { UInt32(min($0, UInt64(UInt32.max - 36))) } ?? UInt32.max
        let riff = dataBytes == nil ? UInt32.max : data + 36
        let blockAlign = UInt16(channelCount * 2)
        return Array("RIFF".utf8) + le32(riff) + Array("WAVEfmt ".utf8) + le32(16) + le16(1) + le16(UInt16(channelCount))
            + le32(UInt32(sampleRate)) + le32(UInt32(sampleRate) * UInt32(blockAlign)) + le16(blockAlign) + le16(16)
            + Array("data".utf8) + le32(data)
    }

    /// `frame`'s samples as s16le interleaved bytes (clipped to full scale, rounded).
    public static func interleavedS16(_ frame: AudioFrame, into out: inout [UInt8]) {
        let count = frame.sampleCount, channels = frame.channelCount
        out.removeAll(keepingCapacity: true)
        out.reserveCapacity(count * channels * 2)
        frame.samples.withUnsafeBufferPointer { samples in
            for index in 0..<count {
                for channel in 0..<channels {
                    let value = Int16((min(1, max(-1, samples[channel * count + index])) * 32767).rounded())
                    let bits = UInt16(bitPattern: value)
                    out.append(UInt8(bits & 0xFF))
                    out.append(UInt8(bits >> 8))
                }
            }
        }
    }

    public func write(_ frame: AudioFrame) throws {
        if framesWritten == 0, sampleRate == 0 {
            sampleRate = frame.sampleRate
            channelCount = frame.channelCount
            if format == .wav {
                try writeAll(Self.wavHeader(sampleRate: sampleRate, channelCount: channelCount, dataBytes: nil))
            }
        } else if frame.sampleRate != sampleRate || frame.channelCount != channelCount {
            framesSkipped += 1
            return
        }
        Self.interleavedS16(frame, into: &buffer)
        try writeAll(buffer)
        framesWritten += 1
        bytesWritten += UInt64(buffer.count)
    }

    /// Fixes the WAV header's sizes when the output is a file that can seek.
    public func finish() throws {
        guard format == .wav, sampleRate > 0, ownsDescriptor, lseek(fd, 0, SEEK_SET) == 0 else { return }
        try writeAll(Self.wavHeader(sampleRate: sampleRate, channelCount: channelCount, dataBytes: bytesWritten))
    }

    private func writeAll(_ bytes: [UInt8]) throws {
        let code = bytes.withUnsafeBytes { Descriptor.writeAll(fd, $0) }
        switch code {
        case 0: return
        case EPIPE: throw Error.readerClosed(path: path)
        case let code: throw Error.write(path: path, errno: code)
        }
    }
}
