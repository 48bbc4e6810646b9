import Foundation
import Testing
@testable import LiveServer

/// ffprobe and ffmpeg, readers nobody here wrote, on the relay's HTTP-FLV.
@Suite("HTTP-FLV read by ffprobe and ffmpeg", .serialized, .enabled(if: ffmpegAvailable, "ffmpeg is not installed"))
struct FLVFFmpegTests {
    @Test("ffmpeg pushes testsrc2 and a sine in AAC; ffprobe reads http://…/live/x.flv: h264 640x360 and aac, frames counted over 3 s; ffmpeg decodes it without a word")
    func probeHTTPFLV() throws {
        let relay = try startRelay()
        defer { relay.shutdown() }
        let publisher = try ChildProcess(ffmpegPath, [
            "-hide_banner", "-loglevel", "error", "-re", "-f", "lavfi", "-i", "testsrc2=size=640x360:rate=30",
            "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000", "-t", "7",
            "-c:v", "libx264", "-preset", "veryfast", "-tune", "zerolatency", "-g", "30", "-c:a", "aac", "-b:a", "96k",
            "-f", "flv", "rtmp://127.0.0.1:\(relay.rtmpPort)/live/x",
        ])
        defer { publisher.signal(SIGKILL); _ = publisher.wait(timeout: 5) }
        #expect(try eventually(6) { try apiStreams(relay).first?.frames ?? 0 > 10 })
        let url = "http://127.0.0.1:\(relay.httpPort)/live/x.flv"
        let probe = try ChildProcess(ffprobePath, [
            "-v", "error", "-read_intervals", "%+3", "-count_frames",
            "-show_entries", "stream=codec_name,width,height,nb_read_frames", "-of", "json", url,
        ])
        let player = try ChildProcess(ffmpegPath, ["-hide_banner", "-v", "error", "-i", url, "-t", "2", "-f", "null", "-"])
        var transports: [PlayerTransport] = []
        _ = try eventually(5) {
            transports = try apiStreams(relay).first?.playerDetails.map(\.transport) ?? []
            return transports.count == 2
        }
        #expect(transports == [.httpFLV, .httpFLV])
        let probed = probe.wait(timeout: 15)
        let played = player.wait(timeout: 15)
        #expect(probed == 0, "ffprobe: \(probe.stderr)")
        #expect(played == 0, "ffmpeg player: \(player.stderr)")
        #expect(player.stderr.isEmpty, "ffmpeg player reported: \(player.stderr)")

        let json = try #require(try JSONSerialization.jsonObject(with: Data(probe.stdout.utf8)) as? [String: Any])
        let streams = try #require(json["streams"] as? [[String: Any]])
        let video = try #require(streams.first { $0["codec_name"] as? String == "h264" }, "\(streams)")
        let audio = try #require(streams.first { $0["codec_name"] as? String == "aac" }, "\(streams)")
        #expect(video["width"] as? Int == 640)
        #expect(video["height"] as? Int == 360)
        let frames = Int(video["nb_read_frames"] as? String ?? "") ?? 0
        let audioFrames = Int(audio["nb_read_frames"] as? String ?? "") ?? 0
        print("ffprobe read \(frames) video and \(audioFrames) audio frames of HTTP-FLV in 3 s")
        // 3 s of 30 fps (the GOP cache's frames come at once, the rest live).
        #expect(frames >= 75)
        #expect(audioFrames >= 100)
    }
}
