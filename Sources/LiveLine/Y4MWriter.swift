import Foundation
import Glibc
import LiveCodec
import LiveCore

/// Writes decoded frames as a YUV4MPEG2 stream (what `ffplay -`, `ffmpeg -f
/// yuv4mpegpipe` and mpv read): the header `YUV4MPEG2 W.. H.. F..:.. Ip A1:1 C420jpeg`
/// once, then per frame `FRAME\n` and the Y, U and V planes without padding.
///
/// A y4m stream has one size; when the stream's size changes, later frames are scaled
/// (aspect kept, black bars) into the size of the first, so a player keeps playing.
/// Each frame leaves in one `write` loop from a reused buffer. A reader that went away
/// (EPIPE) is reported as `Error.readerClosed`; ignore SIGPIPE in the process.
/// Confined to the thread that writes (the guest's decode thread).
public final class Y4MWriter {
    public enum Error: Swift.Error, CustomStringConvertible, Equatable, Sendable {
        case open(path: String, errno: Int32)
        case write(path: String, errno: Int32)
        case readerClosed(path: String)

        public var description: String {
            switch self {
            case .open(let path, let code):
                "cannot open \(path) for the y4m video: \(String(cString: strerror(code))) (errno \(code))"
            case .write(let path, let code):
                "writing the y4m video to \(Self.shown(path)) failed: \(String(cString: strerror(code))) (errno \(code))"
            case .readerClosed(let path): "the reader of the y4m video on \(Self.shown(path)) went away"
            }
        }

        /// "-" is standard output.
        private static func shown(_ path: String) -> String {
            path == "-" ? "standard output" : path
        }
    }

    /// The path given, "-" for standard output.
    public let path: String
    private let fd: Int32
    private let ownsDescriptor: Bool
    /// Frames per second for the header as numerator and denominator.
    public private(set) var frameRate: (Int, Int) = (30, 1)
    /// The highest frame rate `setFrameRate` takes.
    public static let maxFrameRate = 1000.0
    /// The stream's size, fixed by the first frame (0 before).
    public private(set) var width = 0
    public private(set) var height = 0
    public private(set) var framesWritten = 0
    /// Frames that had to be scaled to the first frame's size.
    public private(set) var scaledFrames = 0
    private var buffer: UnsafeMutableRawBufferPointer?
    private var fitted: VideoFrame?
    private var scaler: Scaler?

    /// Opens `path` for writing (truncating it), or standard output for "-".
    public init(path: String) throws {
        self.path = path
        guard let output = OutputFile.openForWriting(path) else { throw Error.open(path: path, errno: errno) }
        (fd, ownsDescriptor) = output
    }

    deinit {
        buffer?.deallocate()
        if ownsDescriptor { Glibc.close(fd) }
    }

    /// Sets the header's frame rate (before the first frame): integers as N:1, NTSC-style
    /// rates (29.97…) as N000:1001.
    /// Rates outside 0…`maxFrameRate` (a publisher's onMetaData can say anything, 1e300
    /// included) keep the current one.
    public func setFrameRate(_ fps: Double) {
        guard framesWritten == 0, fps > 0, fps <= Y4MWriter.maxFrameRate else { return }
        if abs(fps - fps.rounded()) < 0.01 {
            frameRate = (Int(fps.rounded()), 1)
        } else {
            frameRate = (Int((fps * 1001).rounded()), 1001)
        }
    }

    /// The header line for the current size and rate.
    public var header: String {
        "YUV4MPEG2 W\(width) H\(height) F\(frameRate.0):\(frameRate.1) Ip A1:1 C420jpeg\n"
    }

    public func write(_ frame: VideoFrame) throws {
        var source = frame
        if framesWritten == 0 {
            width = frame.width
            height = frame.height
            let frameBytes = width * height * 3 / 2
            let headerBytes = Array(header.utf8)
            let block = UnsafeMutableRawBufferPointer.allocate(byteCount: max(headerBytes.count, 6) + frameBytes, alignment: 16)
            buffer = block
            headerBytes.withUnsafeBytes { block.copyMemory(from: $0) }
            try writeAll(UnsafeRawBufferPointer(rebasing: block[0..<headerBytes.count]))
        } else if frame.width != width || frame.height != height {
            if fitted == nil {
                fitted = VideoFrame(width: width, height: height)
                scaler = Scaler()
            }
            fitted!.fill(YUVColor(y: 16, u: 128, v: 128))
            try scaler!.scale(frame, into: fitted!, mode: .aspectFit)
            source = fitted!
            scaledFrames += 1
        }
        guard let buffer else { return }
        let out = buffer.baseAddress!.assumingMemoryBound(to: UInt8.self)
        var offset = 0
        for byte in "FRAME\n".utf8 {
            out[offset] = byte
            offset += 1
        }
        for p in 0..<3 {
            let w = source.planeWidth(p), rows = source.planeHeight(p)
            let plane = source.plane(p), stride = source.stride(p)
            for row in 0..<rows {
                (out + offset).update(from: plane + row * stride, count: w)
                offset += w
            }
        }
        try writeAll(UnsafeRawBufferPointer(start: buffer.baseAddress, count: offset))
        framesWritten += 1
    }

    private func writeAll(_ bytes: UnsafeRawBufferPointer) throws {
        switch Descriptor.writeAll(fd, bytes) {
        case 0: return
        case EPIPE: throw Error.readerClosed(path: path)
        case let code: throw Error.write(path: path, errno: code)
        }
    }
}
