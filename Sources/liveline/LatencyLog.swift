import Foundation
import LiveCore
import LiveLine

/// `guest --latency-log FILE`: one line per shown frame that carries a capture time,
/// "WALL_MICROS CAPTURE_MICROS LATENCY_MS" (wall clock when shown, the frame's capture
/// time from its SEI, their difference), for plotting glass-to-glass against time.
/// The guest's sink: written on its decode thread only.
final class LatencyLog: GuestVideoSink {
    private let file: UnsafeMutablePointer<FILE>

    /// Opens (truncates) `path`; fails with a message naming it.
    init(path: String) throws {
        guard let file = fopen(path, "w") else {
            throw LatencyLogError(description: "cannot write the latency log \(path): \(String(cString: strerror(errno)))")
        }
        self.file = file
    }

    /// Frames are logged at the size they come in.
    var size: (width: Int, height: Int)? { nil }

    func render(_ frame: VideoFrame) {
        guard frame.captureTimeMicros != 0 else { return }
        let now = Clock.wallMicros()
        let latency = Double(Int64(bitPattern: now &- frame.captureTimeMicros)) / 1000
        fputs(String(format: "%llu %llu %.1f\n", now, frame.captureTimeMicros, latency), file)
    }

    /// Writes out what is buffered; the log stays open (the play may still show a frame).
    func flush() { fflush(file) }

    deinit { fclose(file) }
}

/// The latency log cannot be opened (exit 1).
struct LatencyLogError: Error, CustomStringConvertible {
    let description: String
}
