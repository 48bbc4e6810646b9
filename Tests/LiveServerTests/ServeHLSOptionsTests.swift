import Foundation
import LiveTestSupport
import Testing

/// Whether the relay on `port` relays frames of some stream.
func relaysFrames(port: UInt16) -> Bool {
    guard let body = try? httpGet(port: port, "/api/streams").body,
          let streams = try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [[String: Any]] else { return false }
    return streams.contains { ($0["frames"] as? Int ?? 0) > 0 }
}

/// The segment durations a playlist lists (its EXTINF values, in ms).
func playlistDurations(_ text: String) -> [Int] {
    text.split(separator: "\n").compactMap { line in
        line.hasPrefix("#EXTINF:") ? Double(line.dropFirst(8).split(separator: ",")[0]).map { Int(($0 * 1000).rounded()) } : nil
    }
}

@Suite("liveline serve: HLS options", .serialized, .enabled(if: ffmpegAvailable, "ffmpeg is not installed"))
struct ServeHLSOptionsTests {
    @Test("--hls-segment-ms 2000 gives 2 s segments of a stream with 1 s keyframes; --hls off answers 404; bad values are usage errors")
    func options() throws {
        let serve = try ChildProcess(BuildProducts.liveline, ["serve", "--rtmp", "127.0.0.1:0", "--http", "127.0.0.1:0",
                                                             "--hls-segment-ms", "2000"])
        defer { serve.signal(SIGTERM); _ = serve.wait(timeout: 10) }
        let ports = try servePorts(serve)
        let publisher = try ffmpegAVPublisher("rtmp://127.0.0.1:\(ports.rtmp)/live/long", seconds: 8)
        defer { publisher.signal(SIGTERM); _ = publisher.wait(timeout: 5) }
        #expect(eventually(8) { relaysFrames(port: ports.http) })
        let playlist = try httpGet(port: ports.http, "/live/long.m3u8")
        #expect(playlist.status == 200, "\(playlist.body) \(serve.stderr)")
        #expect(playlist.body.contains("#EXT-X-TARGETDURATION:2\n"))
        let durations = playlistDurations(playlist.body)
        #expect(!durations.isEmpty && durations.allSatisfy { (1900...2100).contains($0) }, "\(playlist.body)")

        let off = try ChildProcess(BuildProducts.liveline, ["serve", "--rtmp", "127.0.0.1:0", "--http", "127.0.0.1:0", "--hls", "off"])
        defer { off.signal(SIGTERM); _ = off.wait(timeout: 10) }
        let offPorts = try servePorts(off)
        let offPublisher = try ffmpegAVPublisher("rtmp://127.0.0.1:\(offPorts.rtmp)/live/plain", seconds: 3)
        defer { offPublisher.signal(SIGTERM); _ = offPublisher.wait(timeout: 5) }
        #expect(eventually(8) { relaysFrames(port: offPorts.http) })
        let none = try httpGet(port: offPorts.http, "/live/plain.m3u8")
        #expect(none.status == 404 && none.body == "no route for /live/plain.m3u8\n", "\(none.body)")

        for arguments in [["--hls", "maybe"], ["--hls-segment-ms", "50"], ["--hls-segment-ms", "x"],
                          ["--hls", "off", "--hls-segment-ms", "1000"]] {
            let bad = try ChildProcess(BuildProducts.liveline, ["serve"] + arguments)
            #expect(bad.wait(timeout: 10) == 2, "\(arguments)")
            #expect(bad.stderr.contains(arguments.last == "1000" ? "--hls-segment-ms needs HLS on" : arguments[0]), "\(bad.stderr)")
        }
        let help = try ChildProcess(BuildProducts.liveline, ["serve", "--help"])
        #expect(help.wait(timeout: 10) == 0)
        #expect(help.stdout.contains("--hls on|off") && help.stdout.contains("--hls-segment-ms MS") && help.stdout.contains(".m3u8"))
    }
}
