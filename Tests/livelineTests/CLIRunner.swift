import Foundation
import Testing

/// Runs the built `liveline` executable (it sits next to the test bundle) and the
/// ffmpeg tools installed by scripts/setup.
enum CLI {
    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    static var buildDirectory: URL {
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var url = URL(fileURLWithPath: exe)
        while url.path != "/" {
            url.deleteLastPathComponent()
            if FileManager.default.isExecutableFile(atPath: url.appendingPathComponent("liveline").path) { return url }
        }
        return URL(fileURLWithPath: ".build/debug")
    }

    static var liveline: String { buildDirectory.appendingPathComponent("liveline").path }

    /// The package root, for media/.
    static var packageRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    @discardableResult
    static func run(_ executable: String, _ arguments: [String]) throws -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        // Read both pipes while the process runs so neither can fill up and block it.
        final class Collected: @unchecked Sendable { var data = Data() }  // written once, read after the group waits
        let errData = Collected()
        let group = DispatchGroup()
        group.enter()
        DispatchQueue.global().async {
            errData.data = err.fileHandleForReading.readDataToEndOfFile()
            group.leave()
        }
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        group.wait()
        process.waitUntilExit()
        return Result(status: process.terminationStatus,
                      stdout: String(decoding: outData, as: UTF8.self),
                      stderr: String(decoding: errData.data, as: UTF8.self))
    }

    static func liveline(_ arguments: String...) throws -> Result { try run(liveline, arguments) }

    static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("liveline-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// ffprobe's view of the first video stream: codec, size and the frames it counted.
    static func probe(_ path: String) throws -> (codec: String, width: Int, height: Int, frames: Int) {
        let result = try run("/usr/bin/ffprobe", [
            "-v", "error", "-select_streams", "v:0", "-count_frames",
            "-show_entries", "stream=codec_name,width,height,nb_read_frames", "-of", "json", path,
        ])
        #expect(result.status == 0, "ffprobe: \(result.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let stream = try #require((json["streams"] as? [[String: Any]])?.first)
        return (stream["codec_name"] as? String ?? "",
                stream["width"] as? Int ?? 0,
                stream["height"] as? Int ?? 0,
                Int(stream["nb_read_frames"] as? String ?? "") ?? -1)
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
