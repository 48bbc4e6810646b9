import Foundation
import LiveCore
import Testing
@testable import LiveServer

/// ffmpeg and ffprobe, peers nobody here wrote, against the relay on loopback.
@Suite("Relay with ffmpeg publishers and ffprobe/ffmpeg players", .serialized, .enabled(if: ffmpegAvailable, "ffmpeg is not installed"))
struct FFmpegRelayTests {
    @Test("ffmpeg pushes testsrc2; ffprobe counts 640x360 frames and ffmpeg decodes it without error")
    func pushProbePlay() throws {
        let relay = try startRelay()
        defer { relay.shutdown() }
        let url = "rtmp://127.0.0.1:\(relay.rtmpPort)/live/test"
        let publisher = try ffmpegPublisher(url, seconds: 4)
        #expect(try eventually(5) { try apiStreams(relay).first?.frames ?? 0 > 0 })
        let probe = try ChildProcess(ffprobePath, [
            "-v", "error", "-count_frames", "-select_streams", "v:0",
            "-show_entries", "stream=nb_read_frames,width,height", "-of", "json", url,
        ])
        let player = try ChildProcess(ffmpegPath, ["-hide_banner", "-v", "error", "-i", url, "-f", "null", "-"])
        let published = publisher.wait(timeout: 15)
        let probed = probe.wait(timeout: 15)
        let played = player.wait(timeout: 15)
        #expect(published == 0, "ffmpeg publisher: \(publisher.stderr)")
        #expect(probed == 0, "ffprobe: \(probe.stderr)")
        #expect(played == 0, "ffmpeg player: \(player.stderr)")
        #expect(player.stderr.isEmpty, "ffmpeg player reported: \(player.stderr)")

        let json = try #require(try JSONSerialization.jsonObject(with: Data(probe.stdout.utf8)) as? [String: Any])
        let stream = try #require((json["streams"] as? [[String: Any]])?.first)
        #expect(stream["width"] as? Int == 640)
        #expect(stream["height"] as? Int == 360)
        let frames = Int(stream["nb_read_frames"] as? String ?? "") ?? 0
        print("ffprobe counted \(frames) frames of the 120 published")
        #expect(frames > 30)
    }

    @Test("an audio-only stream (ffmpeg: a 1000 Hz sine in AAC) reaches ffmpeg players: the tone comes back")
    func audioOnlyRelays() throws {
        let relay = try startRelay()
        defer { relay.shutdown() }
        let url = "rtmp://127.0.0.1:\(relay.rtmpPort)/live/radio"
        let publisher = try ChildProcess(ffmpegPath, [
            "-hide_banner", "-loglevel", "error", "-re", "-f", "lavfi", "-i", "sine=frequency=1000:sample_rate=48000",
            "-t", "6", "-c:a", "aac", "-b:a", "96k", "-f", "flv", url,
        ])
        #expect(try eventually(5) { try apiStreams(relay).first?.publisher != nil })
        let pcm = FileManager.default.temporaryDirectory.appendingPathComponent("radio-\(UUID().uuidString).f32")
        defer { try? FileManager.default.removeItem(at: pcm) }
        let player = try ChildProcess(ffmpegPath, [
            "-hide_banner", "-v", "error", "-i", url, "-t", "2", "-map", "0:a", "-f", "f32le", "-ac", "1", "-ar", "48000",
            "-y", pcm.path,
        ])
        let played = player.wait(timeout: 15)
        #expect(played == 0, "ffmpeg player: \(player.stderr)")
        _ = publisher.wait(timeout: 15)
        let bytes = (try? Data(contentsOf: pcm)) ?? Data()
        let samples = bytes.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        #expect(samples.count > 48000, "\(samples.count) samples decoded")
        guard samples.count > 48000 else { return }
        let middle = samples[12000..<48000]
        #expect(ToneDetector(frequency: 1000, sampleRate: 48000).share(in: middle) > 0.9)
    }

    @Test("a publisher killed with SIGKILL and started again under the same name is accepted at once")
    func killedPublisherReturns() throws {
        let relay = try startRelay()
        defer { relay.shutdown() }
        let url = "rtmp://127.0.0.1:\(relay.rtmpPort)/live/cam?key=k1"
        let first = try ffmpegPublisher(url, seconds: 30)
        #expect(try eventually(8) { try apiStreams(relay).first?.frames ?? 0 > 10 })
        first.signal(SIGKILL)
        _ = first.wait(timeout: 5)

        let second = try ffmpegPublisher(url, seconds: 3)
        // Frames of the second run flow: the frame count restarts from the new publisher.
        var sawSecondRun = false
        let deadline = Date().addingTimeInterval(8)
        while Date() < deadline, second.process.isRunning {
            if let stream = try apiStreams(relay).first, stream.publisher != nil, stream.fps > 10,
               stream.publishedSeconds ?? 99 < 3.5 { sawSecondRun = true }
            usleep(200_000)
        }
        let status = second.wait(timeout: 10)
        #expect(status == 0, "second ffmpeg run: \(second.stderr)")
        #expect(sawSecondRun)
        #expect(relay.rtmp.counters.refusedPublishes.load(ordering: .relaxed) == 0)
    }

    @Test("ffmpeg publishing a live name from another client is refused (NetStream.Publish.BadName)")
    func secondFFmpegRefused() throws {
        let relay = try startRelay()
        defer { relay.shutdown() }
        let first = try ffmpegPublisher("rtmp://127.0.0.1:\(relay.rtmpPort)/live/busy?key=a", seconds: 8)
        defer { first.signal(SIGKILL); _ = first.wait(timeout: 5) }
        #expect(try eventually(8) { try apiStreams(relay).first?.frames ?? 0 > 10 })
        let second = try ffmpegPublisher("rtmp://127.0.0.1:\(relay.rtmpPort)/live/busy?key=b", seconds: 2)
        let status = second.wait(timeout: 10)
        #expect(status != 0)
        #expect(relay.rtmp.counters.refusedPublishes.load(ordering: .relaxed) == 1)
        // The first keeps publishing at its rate (measured over whole seconds).
        #expect(try eventually(3) { try apiStreams(relay).first?.fps ?? 0 > 20 })
    }
}

