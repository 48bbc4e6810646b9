import Foundation
import LiveCore

/// Media files made by ffmpeg for a test, in a fresh directory the test removes.
struct MediaFixture {
    let directory: URL

    init(_ label: String) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("ll-\(label)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    /// The path of `name` in the directory.
    func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    /// Runs ffmpeg with `arguments` and then the output `name`; returns its path.
    @discardableResult
    func make(_ name: String, _ arguments: [String]) throws -> String {
        let output = path(name)
        let ffmpeg = Process()
        ffmpeg.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
        ffmpeg.arguments = ["-hide_banner", "-loglevel", "error", "-y"] + arguments + [output]
        try ffmpeg.run()
        ffmpeg.waitUntilExit()
        guard ffmpeg.terminationStatus == 0 else {
            throw LiveError(.exception, "ffmpeg exited with \(ffmpeg.terminationStatus) making \(output)")
        }
        return output
    }

    func remove() { try? FileManager.default.removeItem(at: directory) }
}
