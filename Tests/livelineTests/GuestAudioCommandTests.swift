import Foundation
import LiveCore
import LiveTestSupport
import Testing

/// `liveline guest` and the audio of what it plays: ffmpeg publishes to `liveline serve`,
/// the guest decodes, writes and reports.
@Suite("liveline guest audio", .serialized)
struct GuestAudioCommandTests {
    /// ffmpeg publishing a 1000 Hz tone (48 kHz mono AAC), with testsrc2 video unless `video` is false.
    static func publish(to url: String, video: Bool = true, seconds: Int = 10) throws -> Background {
        let input = video ? ["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25"] : []
        let videoCodec = video ? ["-c:v", "libx264", "-preset", "veryfast", "-g", "25", "-tune", "zerolatency"] : ["-vn"]
        return try Background("/usr/bin/ffmpeg", ["-nostdin", "-v", "error", "-re"] + input
            + ["-f", "lavfi", "-i", "sine=frequency=1000:sample_rate=48000", "-t", "\(seconds)"] + videoCodec
            + ["-c:a", "aac", "-f", "flv", url])
    }

    /// The last line of `text` as a JSON object.
    static func summary(_ text: String) throws -> [String: Any] {
        let last = try #require(text.split(separator: "\n").last { $0.hasPrefix("{\"event\":\"summary\"") })
        return try #require(try JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any])
    }

    /// The share of `samples`' energy at 990, 1000 and 1010 Hz (Goertzel over 0.5 s: bins
    /// 2 Hz wide, so a 1000 Hz tone leaves under 1 % at ±10 Hz).
    static func shares(_ samples: [Float], sampleRate: Int = 48000) -> [Double] {
        let middle = samples.count / 2
        let block = samples[max(0, middle - sampleRate / 4)..<min(samples.count, middle + sampleRate / 4)]
        return [990.0, 1000, 1010].map { ToneDetector(frequency: $0, sampleRate: sampleRate).share(in: block) }
    }

    static func floats(s16le data: Data) -> [Float] {
        stride(from: 0, to: data.count - 1, by: 2).map { Float(Int16(bitPattern: UInt16(data[$0]) | UInt16(data[$0 + 1]) << 8)) / 32768 }
    }

    @Test("(a)(d) ffmpeg A/V → serve → guest: audio frames, 1000 Hz ± 10 in --pcm - (byte count = frames × 1024 × 2), a --record with both tracks of one length, --out - | ffprobe - shows both")
    func audioAndVideo() throws {
        let server = try Server()
        defer { server.background.stop() }
        let url = server.url("tone")
        let ffmpeg = try Self.publish(to: url)
        // -t bounds ffmpeg, which may not see SIGTERM (a test thread's signal mask).
        defer { kill(ffmpeg.process.processIdentifier, SIGKILL); ffmpeg.process.waitUntilExit() }
        Thread.sleep(forTimeInterval: 1)
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let record = dir.appendingPathComponent("rec.mp4").path

        let run = try ProcessOutput.run(CLI.liveline, ["guest", url, "--duration", "3", "--pcm", "-", "--record", record,
                                                       "--stats", "json"])
        #expect(run.status == 0, "\(run.stderr)")
        // The JSON lines go to stderr: stdout carries the samples.
        let summary = try Self.summary(run.stderr)
        let frames = try #require(summary["audioFrames"] as? Int)
        #expect(frames > 100, "\(summary)")
        #expect(summary["audioSampleRate"] as? Int == 48000 && summary["audioChannels"] as? Int == 1)
        #expect((summary["frames"] as? Int ?? 0) > 40)
        #expect((summary["audioLevel"] as? Int ?? 0) > 50, "ffmpeg's sine is at 1/8 of full scale: −21 dBFS RMS, level 65")
        #expect(summary["avSyncP50Ms"] is NSNull, "ffmpeg's test source carries no markers")
        let bytesPerFrame = 1024 * 1 * 2
        #expect(abs(run.stdout.count - frames * bytesPerFrame) <= bytesPerFrame, "\(run.stdout.count) bytes for \(frames) frames")
        #expect(summary["pcmBytes"] as? Int == run.stdout.count)
        let shares = Self.shares(Self.floats(s16le: run.stdout))
        #expect(shares[1] > 0.8 && shares[0] < 0.1 && shares[2] < 0.1, "shares at 990/1000/1010 Hz: \(shares)")

        // Both tracks, each lasting as long as the other within 100 ms.
        let packets = try CLI.run(FFprobe.path, ["-v", "error", "-show_entries", "packet=stream_index,pts_time,duration_time",
                                                 "-of", "csv=p=0", record])
        #expect(packets.status == 0, "\(packets.stderr)")
        var spans: [Int: (first: Double, end: Double)] = [:]
        for line in packets.stdout.split(separator: "\n") {
            let fields = line.split(separator: ",").map { Double($0) ?? 0 }
            guard fields.count == 3 else { continue }
            let index = Int(fields[0])
            let old = spans[index] ?? (fields[1], fields[1])
            spans[index] = (min(old.first, fields[1]), max(old.end, fields[1] + fields[2]))
        }
        let codecs = try CLI.run(FFprobe.path, ["-v", "error", "-show_entries", "stream=codec_name", "-of", "csv=p=0", record])
        #expect(codecs.stdout.split(separator: "\n") == ["h264", "aac"])
        let durations = spans.sorted { $0.key < $1.key }.map { $0.value.end - $0.value.first }
        #expect(durations.count == 2 && abs(durations[0] - durations[1]) < 0.1 && durations[0] > 2, "\(durations)")

        let piped = try CLI.run("/bin/bash", ["-c", "'\(CLI.liveline)' guest '\(url)' --duration 2 --out - 2>/dev/null"
            + " | '\(FFprobe.path)' -v error -show_entries stream=codec_name -of csv=p=0 -"])
        #expect(piped.stdout.split(separator: "\n") == ["h264", "aac"], "\(piped.stderr)")
    }

    @Test("(e) an audio-only stream → serve → guest --wav: the tone, no failure for missing video")
    func audioOnly() throws {
        let server = try Server()
        defer { server.background.stop() }
        let url = server.url("voice")
        let ffmpeg = try Self.publish(to: url, video: false)
        // -t bounds ffmpeg, which may not see SIGTERM (a test thread's signal mask).
        defer { kill(ffmpeg.process.processIdentifier, SIGKILL); ffmpeg.process.waitUntilExit() }
        Thread.sleep(forTimeInterval: 1)
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let wav = dir.appendingPathComponent("voice.wav").path
        // A timeout shorter than the run: audio alone must count as the stream being there.
        let record = dir.appendingPathComponent("voice.mp4").path
        let run = try CLI.liveline("guest", url, "--duration", "3", "--timeout", "2", "--wav", wav, "--record", record,
                                   "--stats", "json")
        #expect(run.status == 0, "\(run.stderr)")
        let summary = try Self.summary(run.stdout)
        #expect(summary["audioOnly"] as? Bool == true && summary["frames"] as? Int == 0, "\(summary)")
        #expect(summary["error"] is NSNull)
        // The recording of an audio-only stream has the one track.
        let tracks = try CLI.run(FFprobe.path, ["-v", "error", "-show_entries", "stream=codec_name,sample_rate", "-of", "csv=p=0", record])
        #expect(tracks.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "aac,48000", "\(tracks.stderr)")
        #expect(summary["record"] as? String == record)
        #expect(run.stdout.contains("{\"event\":\"firstAudio\",\"sampleRate\":48000,\"channels\":1}"))
        #expect(run.stdout.contains("{\"event\":\"hosterAudioActive\",\"level\":"))
        let data = try Data(contentsOf: URL(fileURLWithPath: wav))
        #expect(data.count > 44 + 48000 * 2 * 2, "\(data.count) bytes")
        #expect(String(decoding: data.prefix(4), as: UTF8.self) == "RIFF")
        let shares = Self.shares(Self.floats(s16le: Data(data.dropFirst(44))))
        #expect(shares[1] > 0.8 && shares[0] < 0.1 && shares[2] < 0.1, "shares at 990/1000/1010 Hz: \(shares)")

        // On standard output the header keeps its sizes unknown (a stream): ffprobe reads it.
        let piped = try ProcessOutput.run(CLI.liveline, ["guest", url, "--duration", "1.5", "--wav", "-"])
        #expect(piped.status == 0, "\(piped.stderr)")
        #expect(piped.stdout.count > 44 + 48000 && Array(piped.stdout[4..<8]) == [0xFF, 0xFF, 0xFF, 0xFF] && Array(piped.stdout[40..<44]) == [0xFF, 0xFF, 0xFF, 0xFF])
        let streamed = dir.appendingPathComponent("streamed.wav")
        try piped.stdout.write(to: streamed)
        let probe = try CLI.run(FFprobe.path, ["-v", "error", "-show_entries", "stream=codec_name,sample_rate,channels", "-of", "csv=p=0", streamed.path])
        #expect(probe.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "pcm_s16le,48000,1", "\(probe.stderr)")
    }

    @Test("after a 2 s stall and burst, latency control skips audio with the video: the --out tracks still end together")
    func audioSkipsWithVideo() throws {
        let server = try Server()
        defer { server.background.stop() }
        let ffmpeg = try Self.publish(to: server.url("stall"))
        defer { kill(ffmpeg.process.processIdentifier, SIGKILL); ffmpeg.process.waitUntilExit() }
        let proxy = try TroubleProxy(upstreamPort: server.rtmpPort)
        defer { proxy.close() }
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let out = dir.appendingPathComponent("stall.nut").path
        Thread.sleep(forTimeInterval: 1)
        let guest = try KitProcess(["guest", "rtmp://127.0.0.1:\(proxy.port)/live/stall", "--buffer-ms", "150", "--duration", "6",
                                    "--out", out, "--stats", "json"])
        defer { guest.stop() }
        #expect(guest.waitFor(timeout: 10) { $0["event"] as? String == "firstAudio" } != nil)
        Thread.sleep(forTimeInterval: 1)
        proxy.hold(seconds: 2)
        guest.process.waitUntilExit()
        let summary = try #require(guest.events.last { $0.object["event"] as? String == "summary" }?.object)
        #expect((summary["skipped"] as? Int ?? 0) > 0 && (summary["audioSkipped"] as? Int ?? 0) > 10, "\(summary)")
        // As much audio decoded as video shown (25 fps; 1024 samples at 48 kHz a frame): the
        // skipped stretch is skipped in both.
        let videoSeconds = Double(summary["frames"] as? Int ?? 0) / 25
        let audioSeconds = Double(summary["audioFrames"] as? Int ?? 0) * 1024 / 48000
        #expect(abs(videoSeconds - audioSeconds) < 0.5, "video shown \(videoSeconds) s, audio decoded \(audioSeconds) s")
        // Audio was not left seconds behind: both tracks of what was shown end within 200 ms.
        let packets = try CLI.run(FFprobe.path, ["-v", "error", "-show_entries", "packet=stream_index,pts_time", "-of", "csv=p=0", out])
        var ends = [0.0, 0.0]
        for line in packets.stdout.split(separator: "\n") {
            let fields = line.split(separator: ",").map { Double($0) ?? 0 }
            if fields.count == 2, Int(fields[0]) < 2 { ends[Int(fields[0])] = max(ends[Int(fields[0])], fields[1]) }
        }
        #expect(ends[0] > 3 && abs(ends[0] - ends[1]) < 0.2, "video ends at \(ends[0]) s, audio at \(ends[1]) s")
    }

    @Test("usage errors: --out needs .nut, .mkv or '-'; only one output can be standard output")
    func usage() throws {
        let avi = try CLI.liveline("guest", "rtmp://127.0.0.1:1/live/x", "--out", "a.avi")
        #expect(avi.status == 2 && avi.stderr.contains("--out needs a file ending in .nut or .mkv, or '-'"), "\(avi.stderr)")
        let both = try CLI.liveline("guest", "rtmp://127.0.0.1:1/live/x", "--wav", "-", "--pcm", "-")
        #expect(both.status == 2 && both.stderr.contains("--wav and --pcm cannot both write to standard output"), "\(both.stderr)")
        let help = try CLI.liveline("guest", "--help")
        for option in ["--out FILE|-", "--wav FILE|-", "--pcm FILE|-", "--level-ms MS", "avSyncP50Ms"] {
            #expect(help.stdout.contains(option), "--help does not mention \(option)")
        }
    }
}
