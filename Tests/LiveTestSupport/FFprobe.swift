import Foundation
import Testing

/// ffprobe, installed by scripts/setup, as the independent judge of what was written.
public enum FFprobe {
    public static let path = "/usr/bin/ffprobe"

    /// The first video stream of `file`: codec, size and the frames ffprobe counted
    /// (-1 when it could not count them). `format` forces the demuxer (`-f`).
    public static func firstVideoStream(_ file: String, format: String? = nil) throws
        -> (codec: String, width: Int, height: Int, frames: Int)
    {
        var arguments = ["-v", "error"]
        if let format { arguments += ["-f", format] }
        arguments += ["-select_streams", "v:0", "-count_frames",
                      "-show_entries", "stream=codec_name,width,height,nb_read_frames", "-of", "json", file]
        let result = try ProcessOutput.run(path, arguments)
        #expect(result.status == 0, "ffprobe \(file): \(result.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any])
        let stream = try #require((json["streams"] as? [[String: Any]])?.first)
        return (stream["codec_name"] as? String ?? "",
                stream["width"] as? Int ?? 0,
                stream["height"] as? Int ?? 0,
                Int(stream["nb_read_frames"] as? String ?? "") ?? -1)
    }
}

extension FFprobe {
    /// The container's duration in seconds as ffprobe reads it (`format=duration`).
    public static func duration(_ file: String) throws -> Double {
        let result = try ProcessOutput.run(path, ["-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", file])
        #expect(result.status == 0, "ffprobe \(file): \(result.stderr)")
        return try #require(Double(result.text.trimmingCharacters(in: .whitespacesAndNewlines)), "ffprobe said '\(result.text)'")
    }
}
