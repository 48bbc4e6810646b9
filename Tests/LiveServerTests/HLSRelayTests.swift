import Foundation
import LiveAuth
import LiveTestSupport
import Testing
@testable import LiveServer

/// A relay on free ports with HLS `limits` (and tokens when `auth`).
func startHLSRelay(_ limits: HLSService.Limits = HLSService.Limits(), auth: Bool = false) throws -> RelayServer {
    var rtmp = RTMPServer.Configuration(port: 0)
    if auth { rtmp.auth = TokenVerifier(secret: TestTokens.secret) }
    var configuration = RelayServer.Configuration(rtmp: rtmp, httpPort: 0, loops: 2)
    configuration.hls = limits
    return try RelayServer(configuration: configuration)
}

/// ffmpeg pushing testsrc2 (640x360, 30 fps, a keyframe a second) and a 440 Hz tone in AAC, in real time.
func ffmpegAVPublisher(_ url: String, seconds: Double, bitrate: String? = nil) throws -> ChildProcess {
    try ChildProcess(ffmpegPath, [
        "-hide_banner", "-loglevel", "error", "-re", "-f", "lavfi", "-i", "testsrc2=size=640x360:rate=30",
        "-re", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000", "-t", String(seconds),
        "-c:v", "libx264", "-preset", "ultrafast", "-tune", "zerolatency", "-g", "30",
    ] + (bitrate.map { ["-b:v", $0, "-maxrate", $0, "-bufsize", $0] } ?? []) + [
        "-c:a", "aac", "-b:a", "64k", "-f", "flv", url,
    ])
}

/// The segment URIs and media sequence of a playlist.
func playlistEntries(_ text: String) -> (sequence: Int?, uris: [String]) {
    let lines = text.split(separator: "\n").map(String.init)
    let sequence = lines.first { $0.hasPrefix("#EXT-X-MEDIA-SEQUENCE:") }.flatMap { Int($0.dropFirst(22)) }
    return (sequence, lines.filter { !$0.hasPrefix("#") && !$0.isEmpty })
}

@Suite("HLS from the relay: ffprobe and ffmpeg read the playlist of an ffmpeg push", .serialized,
       .enabled(if: ffmpegAvailable, "ffmpeg is not installed"))
struct HLSRelayTests {
    @Test("ffprobe finds h264 640x360 and aac in the m3u8; ffmpeg decodes 3 s of it; the first request waited for a segment")
    func probeAndDecode() throws {
        let relay = try startHLSRelay()
        defer { relay.shutdown() }
        let publisher = try ffmpegAVPublisher("rtmp://127.0.0.1:\(relay.rtmpPort)/live/cam", seconds: 12)
        defer { publisher.signal(SIGTERM); _ = publisher.wait(timeout: 5) }
        #expect(try eventually(8) { try apiStreams(relay).first?.frames ?? 0 > 0 })
        let (status, text) = try httpGet(port: relay.httpPort, "/live/cam.m3u8")
        #expect(status == 200, "\(text)")
        #expect(text.hasPrefix("#EXTM3U\n") && text.contains("#EXT-X-TARGETDURATION:1\n"), "\(text)")
        #expect(playlistEntries(text).uris.first?.hasPrefix("cam/") == true, "\(text)")
        let url = "http://127.0.0.1:\(relay.httpPort)/live/cam.m3u8"
        let probe = try ChildProcess(ffprobePath, ["-v", "error", "-show_entries", "stream=codec_name,width,height", "-of", "json", url])
        #expect(probe.wait(timeout: 20) == 0, "ffprobe: \(probe.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(probe.stdout.utf8)) as? [String: Any])
        let streams = try #require(json["streams"] as? [[String: Any]])
        let video = try #require(streams.first { $0["codec_name"] as? String == "h264" }, "\(probe.stdout)")
        #expect(video["width"] as? Int == 640 && video["height"] as? Int == 360)
        #expect(streams.contains { $0["codec_name"] as? String == "aac" }, "\(probe.stdout)")

        let decoder = try ChildProcess(ffmpegPath, ["-hide_banner", "-v", "error", "-i", url, "-t", "3", "-progress", "pipe:1", "-f", "null", "-"])
        #expect(decoder.wait(timeout: 25) == 0, "ffmpeg: \(decoder.stderr)")
        let frames = decoder.stdout.split(separator: "\n").compactMap { $0.hasPrefix("frame=") ? Int($0.dropFirst(6)) : nil }.last ?? 0
        print("ffmpeg decoded \(frames) frames of 3 s of HLS; its errors: \(decoder.stderr.isEmpty ? "none" : decoder.stderr)")
        #expect(frames >= 80)
        #expect(decoder.stderr.isEmpty, "\(decoder.stderr)")
        #expect(try apiStreams(relay).first?.playerDetails.contains { $0.address == "hls" } == true)
        let metrics = try httpGet(port: relay.httpPort, "/metrics").body
        #expect(metrics.contains("\nliveline_hls_streams 1\n") && metrics.contains("\nliveline_hls_budget_refusals_total 0\n"))
        let held = metrics.split(separator: "\n").first { $0.hasPrefix("liveline_hls_bytes ") }.flatMap { Int($0.split(separator: " ")[1]) }
        #expect((held ?? 0) > 10_000, "\(metrics)")
    }

    @Test("the media sequence advances, segments that left the window answer 404, and the stream's end removes it all")
    func windowAdvancesAndEnds() throws {
        let relay = try startHLSRelay(HLSService.Limits(windowSegments: 2))
        defer { relay.shutdown() }
        let publisher = try ffmpegAVPublisher("rtmp://127.0.0.1:\(relay.rtmpPort)/live/moving", seconds: 7)
        #expect(try eventually(8) { try apiStreams(relay).first?.frames ?? 0 > 0 })
        let first = try httpGet(port: relay.httpPort, "/live/moving.m3u8")
        #expect(first.status == 200, "\(first.body)")
        let (firstSequence, firstURIs) = playlistEntries(first.body)
        let oldest = try #require(firstURIs.first)
        let segment = try httpGet(port: relay.httpPort, "/live/\(oldest)")
        #expect(segment.status == 200 && segment.body.utf8.first == 0x47)
        usleep(3_200_000)
        let later = try httpGet(port: relay.httpPort, "/live/moving.m3u8")
        let (laterSequence, laterURIs) = playlistEntries(later.body)
        #expect(try #require(laterSequence) >= (firstSequence ?? 0) + 2, "\(first.body)\n\(later.body)")
        #expect(laterURIs.count == 2 && !laterURIs.contains(oldest))
        #expect(try httpGet(port: relay.httpPort, "/live/\(oldest)").status == 404)
        #expect(try httpGet(port: relay.httpPort, "/live/\(try #require(laterURIs.last))").status == 200)

        // ffmpeg ends its push (deleteStream): the stream's HLS goes at once.
        #expect(publisher.wait(timeout: 15) == 0, "\(publisher.stderr)")
        #expect(eventually(3) { relay.hls?.streamCount == 0 })
        #expect(try httpGet(port: relay.httpPort, "/live/moving.m3u8").status == 404)
        #expect(try httpGet(port: relay.httpPort, "/live/\(try #require(laterURIs.last))").status == 404)
        #expect(try eventually(3) { try apiStreams(relay).isEmpty }, "the HLS player left the relayed stream")
        #expect(relay.hls?.heldBytes == 0 && relay.hls?.budget.usedBytes == 0)
    }

    @Test("memory: at 4 Mb/s (about 0.5 MB a segment) a 1.2 MB window lists 2 segments, not 6, and the stream holds at most its cap")
    func memoryBound() throws {
        let limits = HLSService.Limits(windowSegments: 6, maxWindowBytes: 1_200_000, maxSegmentBytes: 1_000_000)
        let relay = try startHLSRelay(limits)
        defer { relay.shutdown() }
        let publisher = try ChildProcess(ffmpegPath, [
            "-hide_banner", "-loglevel", "error", "-re", "-f", "lavfi", "-i", "testsrc2=size=1280x720:rate=30", "-t", "9",
            "-c:v", "libx264", "-preset", "ultrafast", "-tune", "zerolatency", "-g", "30", "-b:v", "4M", "-maxrate", "4M",
            "-bufsize", "4M", "-f", "flv", "rtmp://127.0.0.1:\(relay.rtmpPort)/live/heavy",
        ])
        defer { publisher.signal(SIGTERM); _ = publisher.wait(timeout: 5) }
        #expect(try eventually(8) { try apiStreams(relay).first?.frames ?? 0 > 0 })
        #expect(try httpGet(port: relay.httpPort, "/live/heavy.m3u8").status == 200)
        var peak = 0
        let deadline = Date().addingTimeInterval(5)
        while Date() < deadline {
            peak = max(peak, relay.hls?.heldBytes ?? 0)
            _ = try httpGet(port: relay.httpPort, "/live/heavy.m3u8")
            usleep(100_000)
        }
        print("HLS held at most \(peak) bytes for a 4 Mb/s stream (cap \(limits.maxBytesPerStream))")
        #expect(peak > 0 && peak <= limits.maxBytesPerStream)
        let playlist = try httpGet(port: relay.httpPort, "/live/heavy.m3u8").body
        #expect((1...2).contains(playlistEntries(playlist).uris.count), "\(playlist)")
    }

    @Test("segmenting stops after idleTimeout without requests (a request starts it again) and publisherGrace after the publisher's connection dropped")
    func stops() throws {
        let relay = try startHLSRelay(HLSService.Limits(idleTimeout: .seconds(1), publisherGrace: .milliseconds(600)))
        defer { relay.shutdown() }
        let publisher = try ffmpegAVPublisher("rtmp://127.0.0.1:\(relay.rtmpPort)/live/quiet", seconds: 20)
        defer { publisher.signal(SIGKILL); _ = publisher.wait(timeout: 5) }
        #expect(try eventually(8) { try apiStreams(relay).first?.frames ?? 0 > 0 })
        let before = try httpGet(port: relay.httpPort, "/live/quiet.m3u8")
        #expect(before.status == 200)
        #expect(try apiStreams(relay).first?.players == 1)
        #expect(eventually(4) { relay.hls?.streamCount == 0 })
        #expect(try apiStreams(relay).first?.players == 0, "the HLS player left the relayed stream")
        let again = try httpGet(port: relay.httpPort, "/live/quiet.m3u8")
        #expect(again.status == 200)
        #expect(relay.hls?.streamCount == 1)
        // Segmented again: new numbers past the old ones, so no segment URL names other
        // media than a cache may still hold for it.
        let (oldSequence, oldURIs) = playlistEntries(before.body)
        let (newSequence, newURIs) = playlistEntries(again.body)
        #expect(try #require(newSequence) >= (oldSequence ?? 0) + oldURIs.count, "\(before.body)\n\(again.body)")
        #expect(Set(oldURIs).isDisjoint(with: newURIs))

        publisher.signal(SIGKILL)
        _ = publisher.wait(timeout: 5)
        #expect(relay.hls?.streamCount == 1, "kept for the publisher's return")
        #expect(eventually(3) { relay.hls?.streamCount == 0 })
        #expect(try httpGet(port: relay.httpPort, "/live/quiet.m3u8").status == 404)
    }

    @Test("an audio-only push (AAC 48 kHz stereo, no video): ffprobe finds aac alone in the m3u8, segments of about 1 s")
    func audioOnly() throws {
        let relay = try startHLSRelay()
        defer { relay.shutdown() }
        let publisher = try ChildProcess(ffmpegPath, [
            "-hide_banner", "-loglevel", "error", "-re", "-f", "lavfi", "-i", "sine=frequency=1000:sample_rate=48000", "-t", "8",
            "-ac", "2", "-c:a", "aac", "-b:a", "96k", "-f", "flv", "rtmp://127.0.0.1:\(relay.rtmpPort)/live/radio",
        ])
        defer { publisher.signal(SIGTERM); _ = publisher.wait(timeout: 5) }
        #expect(try eventually(8) { try apiStreams(relay).first?.audioBitrate ?? 0 > 0 })
        let playlist = try httpGet(port: relay.httpPort, "/live/radio.m3u8")
        #expect(playlist.status == 200)
        #expect(playlistDurations(playlist.body).allSatisfy { (1000...1030).contains($0) }, "\(playlist.body)")
        let probe = try ChildProcess(ffprobePath, ["-v", "error", "-show_entries", "stream=codec_name,sample_rate,channels", "-of", "json",
                                                   "http://127.0.0.1:\(relay.httpPort)/live/radio.m3u8"])
        #expect(probe.wait(timeout: 20) == 0, "ffprobe: \(probe.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(probe.stdout.utf8)) as? [String: Any])
        let streams = try #require(json["streams"] as? [[String: Any]])
        #expect(streams.count == 1 && streams.first?["codec_name"] as? String == "aac", "\(probe.stdout)")
        #expect(streams.first?["sample_rate"] as? String == "48000" && streams.first?["channels"] as? Int == 2)
    }

    @Test("names nobody publishes, co-host and call streams, and bad segment numbers answer 404")
    func notFound() throws {
        let relay = try startHLSRelay(HLSService.Limits(firstSegmentTimeout: .seconds(1)))
        defer { relay.shutdown() }
        #expect(try httpGet(port: relay.httpPort, "/live/nobody.m3u8").status == 404)
        #expect(try httpGet(port: relay.httpPort, "/live/line-abc.m3u8").status == 404)
        #expect(try httpGet(port: relay.httpPort, "/live/call-r-1.m3u8").status == 404)
        #expect(try httpGet(port: relay.httpPort, "/live/nobody/0.ts").status == 404)
        #expect(try httpGet(port: relay.httpPort, "/live/nobody/x.ts").status == 404)
        #expect(try apiStreams(relay).isEmpty, "a playlist request creates no stream")
    }

    @Test("with auth: the playlist and segments need a play token for the stream (not an api one); segment URIs carry it")
    func auth() throws {
        let relay = try startHLSRelay(auth: true)
        defer { relay.shutdown() }
        let push = "rtmp://127.0.0.1:\(relay.rtmpPort)/live/secret?token=\(TestTokens.publish("live/secret"))"
        let publisher = try ffmpegAVPublisher(push, seconds: 8)
        defer { publisher.signal(SIGTERM); _ = publisher.wait(timeout: 5) }
        #expect(try eventually(8) { try authStreams(relay).first?.frames ?? 0 > 0 })
        let refused = try httpGet(port: relay.httpPort, "/live/secret.m3u8")
        #expect(refused.status == 401 && refused.body.contains("213"), "\(refused.body)")
        #expect(try httpGet(port: relay.httpPort, "/live/secret.m3u8?token=\(TestTokens.api("*"))").status == 401)
        #expect(try httpGet(port: relay.httpPort, "/live/secret.m3u8?token=\(TestTokens.play("live/other"))").status == 401)
        let token = TestTokens.play("live/secret")
        let allowed = try httpGet(port: relay.httpPort, "/live/secret.m3u8?token=\(token)")
        #expect(allowed.status == 200, "\(allowed.body)")
        let uri = try #require(playlistEntries(allowed.body).uris.first)
        #expect(uri.hasSuffix(".ts?token=\(token)"), "\(uri)")
        #expect(try httpGet(port: relay.httpPort, "/live/\(uri)").status == 200)
        #expect(try httpGet(port: relay.httpPort, "/live/\(uri.split(separator: "?")[0])").status == 401)
        let bearer = try httpGet(port: relay.httpPort, "/live/secret.m3u8", headers: ["Authorization: Bearer \(token)"])
        #expect(bearer.status == 200)
        #expect(playlistEntries(bearer.body).uris.first?.contains("?") == false, "a Bearer token is not written into URIs")

        // With HLS off, such paths are the API's like any other: a play token opens nothing.
        var rtmp = RTMPServer.Configuration(port: 0)
        rtmp.auth = TokenVerifier(secret: TestTokens.secret)
        var configuration = RelayServer.Configuration(rtmp: rtmp, httpPort: 0, loops: 1)
        configuration.hls = nil
        let off = try RelayServer(configuration: configuration)
        defer { off.shutdown() }
        #expect(try httpGet(port: off.httpPort, "/live/secret.m3u8?token=\(token)").status == 401)
        #expect(try httpGet(port: off.httpPort, "/live/secret.m3u8?token=\(TestTokens.api("*"))").status == 404)
    }
}

@Suite("Benchmarks/lib/hls-latency.py against a liveline host push", .serialized,
       .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/python3"), "python3 is not installed"))
struct HLSLatencyScriptTests {
    @Test("prints one capture → listed latency per frame from the capture-time SEI: 30 a segment, within 0–3 s, the first frames a segment longer")
    func latencies() throws {
        let relay = try startHLSRelay()
        defer { relay.shutdown() }
        let host = try ChildProcess(BuildProducts.liveline, ["host", "rtmp://127.0.0.1:\(relay.rtmpPort)/live/timed",
                                                            "--size", "320x180", "--keyint", "1"])
        defer { host.signal(SIGTERM); _ = host.wait(timeout: 10) }
        #expect(try eventually(10) { try apiStreams(relay).first?.frames ?? 0 > 0 }, "\(host.stderr)")
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Benchmarks/lib/hls-latency.py").path
        let reader = try ChildProcess("/usr/bin/python3", [script, "http://127.0.0.1:\(relay.httpPort)/live/timed.m3u8", "4.5"])
        #expect(reader.wait(timeout: 20) == 0, "\(reader.stderr)")
        let values = reader.stdout.split(separator: "\n").compactMap { Double($0) }
        print(reader.stderr.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(values.count >= 60, "\(reader.stdout)")
        #expect(values.allSatisfy { $0 > 0 && $0 < 3000 }, "\(values)")
        #expect((values.max() ?? 0) - (values.min() ?? 0) > 600, "a segment's first frame waited about a segment longer than its last")
        let usage = try ChildProcess("/usr/bin/python3", [script])
        #expect(usage.wait(timeout: 10) == 2)
        #expect(usage.stderr.contains("usage: hls-latency.py PLAYLIST_URL SECONDS"), "\(usage.stderr)")
    }
}
