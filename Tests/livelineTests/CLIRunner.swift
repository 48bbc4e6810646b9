import Foundation
import LiveTestSupport
import Testing

/// Runs the built `liveline` executable (it sits next to the test bundle) and the
/// ffmpeg tools installed by scripts/setup.
enum CLI {
    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    static var liveline: String { BuildProducts.liveline }

    /// The package root, for media/.
    static var packageRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    @discardableResult
    static func run(_ executable: String, _ arguments: [String]) throws -> Result {
        let output = try ProcessOutput.run(executable, arguments)
        return Result(status: output.status, stdout: output.text, stderr: output.stderr)
    }

    static func liveline(_ arguments: String...) throws -> Result { try run(liveline, arguments) }

    static func temporaryDirectory() throws -> URL { try makeTemporaryDirectory(prefix: "liveline-test-") }

    /// ffprobe's view of the first video stream: codec, size and the frames it counted.
    static func probe(_ path: String) throws -> (codec: String, width: Int, height: Int, frames: Int) {
        try FFprobe.firstVideoStream(path)
    }

    /// Decodes frame `index` of a video file to packed RGB24 at its own size, with ffmpeg.
    static func rgbFrame(_ path: String, index: Int, width: Int, height: Int) throws -> [UInt8] {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let raw = dir.appendingPathComponent("frame.rgb").path
        let result = try run("/usr/bin/ffmpeg", [
            "-v", "error", "-i", path, "-vf", "select=eq(n\\,\(index))", "-frames:v", "1",
            "-f", "rawvideo", "-pix_fmt", "rgb24", raw,
        ])
        #expect(result.status == 0, "ffmpeg: \(result.stderr)")
        let data = try Data(contentsOf: URL(fileURLWithPath: raw))
        #expect(data.count == width * height * 3)
        return [UInt8](data)
    }
}
