import Foundation
import LiveCore
import LiveRTMP
import LiveTestSupport
import Testing
@testable import LiveLine

/// The guest's late outputs (the snapshot at the end, the recording from the first
/// keyframe) are checked when the pipeline is made, before anything is played.
@Suite("GuestPipeline output paths")
struct GuestOutputPathTests {
    static func configuration(snapshot: String? = nil, record: String? = nil) throws -> GuestPipeline.Configuration {
        var configuration = GuestPipeline.Configuration(url: try RTMPURL(parsing: "rtmp://127.0.0.1:1/live/x"))
        configuration.snapshotPath = snapshot
        configuration.recordPath = record
        return configuration
    }

    @Test("a folder that does not exist, or a path that is a folder, is refused at once")
    func refused() throws {
        let directory = try makeTemporaryDirectory(prefix: "liveline-paths-")
        defer { try? FileManager.default.removeItem(at: directory) }
        let folder = directory.appendingPathComponent("shot.png").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        for (snapshot, record, says) in [("/nonexistent-folder/a.png", nil, "there is no folder '/nonexistent-folder'"),
                                         (nil, "/nonexistent-folder/a.mp4", "there is no folder '/nonexistent-folder'"),
                                         (folder, nil, "is a folder")] {
            let error = try #require(throws: LiveError.self) {
                try GuestPipeline(configuration: try Self.configuration(snapshot: snapshot, record: record))
            }
            #expect(error.detail.contains(says), "\(error)")
        }
    }

    @Test("a new file in a writable folder, a relative name and an existing writable file are fine")
    func accepted() throws {
        let directory = try makeTemporaryDirectory(prefix: "liveline-paths-")
        defer { try? FileManager.default.removeItem(at: directory) }
        let existing = directory.appendingPathComponent("old.flv").path
        #expect(FileManager.default.createFile(atPath: existing, contents: Data()))
        let full = directory.appendingPathComponent("full.mp4").path
        try FileManager.default.createSymbolicLink(atPath: full, withDestinationPath: "/dev/full")
        for (snapshot, record) in [(directory.appendingPathComponent("new.png").path, existing), ("relative.png", full)] {
            _ = try GuestPipeline(configuration: try Self.configuration(snapshot: snapshot, record: record))
        }
        #expect(!FileManager.default.fileExists(atPath: "relative.png"), "checking must not create the file")
    }
}
