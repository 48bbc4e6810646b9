import Foundation
import LiveTestSupport
import Testing

/// `liveline guest --record` against a relay that replays its GOP cache to new players.
@Suite("liveline guest --record", .serialized)
struct GuestRecordTests {
    @Test("4 s of guest --record, joining 4 s into a 5 s GOP the relay caches: a ~4 s file that starts at a keyframe")
    func recordingLastsAsLongAsThePlay() throws {
        let server = try Server()
        defer { server.background.stop() }
        let url = server.url("gop")
        // A keyframe every 5 s; -t bounds ffmpeg should a signal not reach it.
        let ffmpeg = try Background("/usr/bin/ffmpeg", [
            "-nostdin", "-v", "error", "-re", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=30", "-t", "14",
            "-c:v", "libx264", "-preset", "veryfast", "-tune", "zerolatency", "-g", "150", "-f", "flv", url,
        ])
        defer { kill(ffmpeg.process.processIdentifier, SIGKILL); ffmpeg.process.waitUntilExit() }
        // The relay's cache now holds the ~4 s since the stream's first keyframe.
        Thread.sleep(forTimeInterval: 4.5)
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("rec.flv").path
        let result = try CLI.liveline("guest", url, "--duration", "4", "--record", file)
        #expect(result.status == 0, "\(result.stderr)")
        // Before: the replayed GOP kept its own timing, and the file ran ~8 s.
        let duration = try FFprobe.duration(file)
        // At most the 4 s of the run (less its connect time on a busy machine).
        #expect(duration > 2 && duration < 4.6, "a 4 s run recorded \(duration) s")
        let first = try CLI.run(FFprobe.path, ["-v", "error", "-select_streams", "v:0", "-read_intervals", "%+#1",
                                               "-show_entries", "packet=pts_time,flags", "-of", "csv=p=0", file])
        let fields = first.stdout.split(separator: "\n").first?.split(separator: ",") ?? []
        #expect(fields.count == 2 && Double(fields[0]) == 0 && fields[1].hasPrefix("K"), "first packet: \(first.stdout)")
    }
}
