import Foundation
import LiveTestSupport
import Testing

/// `liveline guest http://…/x.flv` as a user runs it.
@Suite("liveline guest HTTP-FLV", .serialized)
struct GuestHTTPFLVCommandTests {
    @Test("plays ffmpeg's HTTP-FLV: 30 frames decoded at 320x240 with the AAC audio, exit 0, the summary names the URL")
    func playsFrames() throws {
        let server = try FFmpegFLVServer(seconds: 10)
        defer { server.stop() }
        let result = try CLI.run(CLI.liveline, ["guest", server.url, "--frames", "30", "--stats", "json", "--timeout", "5"])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let summary = try #require(result.stdout.split(separator: "\n").last { $0.contains(#""event":"summary""#) })
        let object = try #require(try JSONSerialization.jsonObject(with: Data(summary.utf8)) as? [String: Any])
        #expect(object["frames"] as? Int == 30, "\(summary)")
        #expect(object["width"] as? Int == 320 && object["height"] as? Int == 240, "\(summary)")
        #expect((object["audioFrames"] as? Int ?? 0) > 0, "\(summary)")
        #expect(object["url"] as? String == server.url, "\(summary)")
    }

    @Test("a URL that cannot be played is a usage error (exit 2) saying what is wrong, never showing a password", arguments: [
        ("https://127.0.0.1/live/x.flv", "HTTPS is not supported"),
        ("ftp://127.0.0.1/live/x.flv", "is not an rtmp:// or http:// URL"),
        ("http://127.0.0.1", "has no path"),
        ("http://alice:hunter2@127.0.0.1/live/x.flv", "user name or password"),
        ("http://127.0.0.1:99999/live/x.flv", "outside 1…65535"),
        ("http://127.0.0.1/live/a b.flv", "percent-encode"),
    ])
    func badURL(text: String, message: String) throws {
        let result = try CLI.run(CLI.liveline, ["guest", text, "--duration", "0.1"])
        #expect(result.status == 2, "stderr: \(result.stderr)")
        #expect(result.stderr.contains(message), "stderr: \(result.stderr)")
        #expect(result.stderr.contains("--help"), "stderr: \(result.stderr)")
        #expect(!result.stderr.contains("hunter2"), "stderr: \(result.stderr)")
    }

    @Test("host still takes rtmp:// only; guest --line with an HTTP-FLV URL is a usage error (the line needs rtmp://)")
    func rtmpOnlyElsewhere() throws {
        let host = try CLI.run(CLI.liveline, ["host", "http://127.0.0.1/live/x", "--duration", "0.1"])
        #expect(host.status == 2 && host.stderr.contains("does not start with rtmp://"), "stderr: \(host.stderr)")
        let line = try CLI.run(CLI.liveline, ["guest", "http://127.0.0.1/live/x.flv", "--line", "x", "--duration", "0.1"])
        #expect(line.status == 2 && line.stderr.contains("need an rtmp:// URL"), "stderr: \(line.stderr)")
    }

    @Test("the relay has no such stream (404): refused, exit 3, with the status; nobody listening: exit 1")
    func refusedAndUnreachable() throws {
        let server = try Server()
        defer { server.background.stop() }
        let missing = try CLI.run(CLI.liveline, ["guest", "http://127.0.0.1:\(server.httpPort)/live/none.flv", "--timeout", "3"])
        #expect(missing.status == 3, "stderr: \(missing.stderr)")
        #expect(missing.stderr.contains("HTTP 404"), "stderr: \(missing.stderr)")
        let port = try FFmpegFLVServer.freePort()
        let nobody = try CLI.run(CLI.liveline, ["guest", "http://127.0.0.1:\(port)/live/x.flv", "--timeout", "3"])
        #expect(nobody.status == 1, "stderr: \(nobody.stderr)")
        #expect(nobody.stderr.contains("cannot connect"), "stderr: \(nobody.stderr)")
    }

    @Test("plays liveline serve's own /live/NAME.flv of a liveline host: 30 frames, the sound, and glass-to-glass latency from the host's capture-time SEI")
    func playsTheRelay() throws {
        let server = try Server()
        defer { server.background.stop() }
        let hoster = try Background(CLI.liveline, ["host", server.url("relayed"), "--source", "color:green", "--size", "320x180",
                                                   "--audio-source", "tone:440", "--duration", "20"])
        defer { hoster.stop() }
        Thread.sleep(forTimeInterval: 1.5)
        let result = try CLI.run(CLI.liveline, ["guest", "http://127.0.0.1:\(server.httpPort)/live/relayed.flv", "--frames", "30",
                                                "--stats", "json", "--timeout", "5"])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let summary = try #require(result.stdout.split(separator: "\n").last { $0.contains(#""event":"summary""#) })
        let object = try #require(try JSONSerialization.jsonObject(with: Data(summary.utf8)) as? [String: Any])
        #expect(object["frames"] as? Int == 30 && object["width"] as? Int == 320 && object["height"] as? Int == 180, "\(summary)")
        #expect((object["audioFrames"] as? Int ?? 0) > 0, "\(summary)")
        #expect(object["latencyP50Ms"] is Double, "\(summary)")
    }

    @Test("the host stops: the relay ends the HTTP-FLV body and the guest ends with the stream, exit 0")
    func relayStreamEnds() throws {
        let server = try Server()
        defer { server.background.stop() }
        let hoster = try Background(CLI.liveline, ["host", server.url("ending"), "--source", "color:green", "--size", "160x90",
                                                   "--duration", "3"])
        defer { hoster.stop() }
        Thread.sleep(forTimeInterval: 1)
        let started = Date()
        let result = try CLI.run(CLI.liveline, ["guest", "http://127.0.0.1:\(server.httpPort)/live/ending.flv", "--timeout", "5"])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(result.stderr.contains("stream ended"), "stderr: \(result.stderr)")
        #expect(Date().timeIntervalSince(started) < 6)
    }
}
