import Foundation
import LiveCore
import Testing
@testable import LiveServer

/// ffmpeg publishing video with sound, ffprobe joining mid-stream: the relay's replay of
/// audio with its GOP, and what /api/streams says about the audio.
@Suite("Relay with audio: ffmpeg's h264 + aac to a late ffprobe, and /api/streams", .serialized,
       .enabled(if: ffmpegAvailable, "ffmpeg is not installed"))
struct FFmpegAudioRelayTests {
    /// One packet as ffprobe lists it.
    struct Packet {
        let isAudio: Bool
        let dts: Double
        let keyframe: Bool
    }

    /// `-show_packets` of `count` packets of `url`, in the order the demuxer read them.
    func probePackets(_ url: String, count: Int) throws -> [Packet] {
        let probe = try ChildProcess(ffprobePath, [
            "-v", "error", "-read_intervals", "%+#\(count)", "-show_entries", "packet=codec_type,dts_time,flags",
            "-of", "csv=p=0", url,
        ])
        let status = probe.wait(timeout: 15)
        #expect(status == 0, "ffprobe: \(probe.stderr)")
        return probe.stdout.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: ",", omittingEmptySubsequences: false)
            guard fields.count >= 3, let dts = Double(fields[1]) else { return nil }
            return Packet(isAudio: fields[0] == "audio", dts: dts, keyframe: fields[2].hasPrefix("K"))
        }
    }

    @Test("a player joining after the keyframe at 2 s gets that keyframe first, then audio from its timestamp on; /api/streams says aac")
    func lateJoinerGetsAudioWithTheGOP() throws {
        let relay = try startRelay()
        defer { relay.shutdown() }
        let url = "rtmp://127.0.0.1:\(relay.rtmpPort)/live/av"
        let publisher = try ChildProcess(ffmpegPath, [
            "-hide_banner", "-loglevel", "error", "-re", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25",
            "-f", "lavfi", "-i", "sine=frequency=1000", "-t", "6", "-c:v", "libx264", "-preset", "veryfast", "-g", "50",
            "-c:a", "aac", "-f", "flv", url,
        ])
        defer { publisher.signal(SIGKILL); _ = publisher.wait(timeout: 5) }
        // Frame 50 (2.0 s) is the second keyframe: join 1.5 s or more into the stream, past it.
        #expect(try eventually(10) { try apiStreams(relay).first?.frames ?? 0 >= 56 })
        let stream = try #require(try apiStreams(relay).first)
        #expect(stream.codec == "h264")
        #expect(stream.audioCodec == "aac")
        #expect([44100, 48000].contains(stream.audioSampleRate ?? 0), "\(String(describing: stream.audioSampleRate))")
        #expect(stream.audioChannels == 1)
        #expect(stream.audioBitrate ?? 0 > 10_000, "\(String(describing: stream.audioBitrate))")
        #expect(stream.bitrate > stream.audioBitrate ?? 0)

        let packets = try probePackets(url, count: 60)
        let video = packets.filter { !$0.isAudio }
        let audio = packets.filter(\.isAudio)
        let keyframe = try #require(video.first, "no video packet among \(packets.count)")
        let firstAudio = try #require(audio.first, "no audio packet among \(packets.count)")
        print("joined: keyframe at \(keyframe.dts) s, first audio at \(firstAudio.dts) s, \(audio.count) audio of \(packets.count)")
        #expect(keyframe.keyframe)
        // The cached GOP's keyframe (2 s), not a later live one (4 s).
        #expect(abs(keyframe.dts - 2.0) < 0.05, "\(keyframe.dts)")
        // The audio since the keyframe: none stamped before it, and none of it missing.
        #expect(firstAudio.dts >= keyframe.dts - 0.05)
        #expect(firstAudio.dts <= keyframe.dts + 0.05)
        #expect(audio.count > 20)
        // Each stream's timestamps keep going forward.
        #expect(audio.map(\.dts) == audio.map(\.dts).sorted())
        #expect(video.count > 10)
    }

    @Test("an audio-only stream (ffmpeg -vn) is listed with its audio and no video")
    func audioOnlyListed() throws {
        let relay = try startRelay()
        defer { relay.shutdown() }
        let url = "rtmp://127.0.0.1:\(relay.rtmpPort)/live/radio"
        let publisher = try ChildProcess(ffmpegPath, [
            "-hide_banner", "-loglevel", "error", "-re", "-f", "lavfi", "-i", "sine=frequency=1000:sample_rate=48000",
            "-t", "4", "-vn", "-c:a", "aac", "-ac", "2", "-b:a", "96k", "-f", "flv", url,
        ])
        defer { publisher.signal(SIGKILL); _ = publisher.wait(timeout: 5) }
        #expect(try eventually(6) { try apiStreams(relay).first?.audioBitrate ?? 0 > 0 })
        let stream = try #require(try apiStreams(relay).first)
        #expect(stream.name == "radio")
        #expect(stream.publisher != nil)
        #expect(stream.codec == nil)
        #expect(stream.fps == 0)
        #expect(stream.audioCodec == "aac")
        #expect(stream.audioSampleRate == 48000)
        #expect(stream.audioChannels == 2)
        #expect(stream.cachedBytes == 0)
        // The JSON a client reads, not only the decoded value.
        let (_, body) = try httpGet(port: relay.httpPort, "/api/streams")
        #expect(body.contains(#""audioCodec":"aac""#))
        #expect(body.contains(#""audioSampleRate":48000"#))
        #expect(!body.contains(#""codec""#))
        // A player that joins now gets audio at once.
        let packets = try ChildProcess(ffprobePath, [
            "-v", "error", "-read_intervals", "%+#20", "-show_entries", "packet=codec_type", "-of", "csv=p=0", url,
        ])
        #expect(packets.wait(timeout: 10) == 0, "ffprobe: \(packets.stderr)")
        #expect(packets.stdout.split(separator: "\n").filter { $0 == "audio" }.count == 20, "\(packets.stdout)")
    }

    @Test("a video-only stream reports no audio fields at all")
    func videoOnlyHasNoAudioFields() throws {
        let relay = try startRelay()
        defer { relay.shutdown() }
        let publisher = try ffmpegPublisher("rtmp://127.0.0.1:\(relay.rtmpPort)/live/mute", seconds: 3, size: "320x240")
        defer { publisher.signal(SIGKILL); _ = publisher.wait(timeout: 5) }
        #expect(try eventually(6) { try apiStreams(relay).first?.frames ?? 0 > 5 })
        let (_, body) = try httpGet(port: relay.httpPort, "/api/streams")
        #expect(body.contains(#""codec":"h264""#))
        #expect(!body.contains("audio"), "\(body)")
    }
}
