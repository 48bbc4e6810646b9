import Foundation
import LiveCore
import LiveTestSupport
import Testing

/// `liveline host` with sound, through `liveline serve`, judged by ffprobe and ffmpeg.
@Suite("host's sound → serve → ffmpeg / ffprobe", .serialized)
struct HostAudioTests {
    /// `seconds` of a stream's audio as ffmpeg decodes it: mono 48 kHz floats.
    /// `probe`: options before the input (`-analyzeduration`).
    static func decodedAudio(_ url: String, seconds: Double, probe: [String] = []) throws -> [Float] {
        let result = try ProcessOutput.run("/usr/bin/ffmpeg", ["-v", "error", "-nostdin"] + probe + ["-i", url, "-map", "0:a",
                                                               "-t", "\(seconds)", "-ac", "1", "-ar", "48000",
                                                               "-f", "s16le", "-"])
        #expect(result.status == 0, "ffmpeg: \(result.stderr)")
        return result.stdout.withUnsafeBytes { raw in
            raw.bindMemory(to: Int16.self).map { Float(Int16(littleEndian: $0)) / 32768 }
        }
    }

    /// 50 ms windows of decoded audio, each silent, the tone, a marker beep or other.
    enum Window: Equatable {
        case silent, tone, marker, other
    }

    static func windows(_ samples: [Float], tone hertz: Double) -> [Window] {
        let tone = ToneDetector(frequency: hertz, sampleRate: 48000)
        let marker = ToneDetector(frequency: 3000, sampleRate: 48000)
        return stride(from: 0, to: samples.count - 2400, by: 2400).map { start in
            let window = samples[start..<start + 2400]
            if AudioLevel.of(window) == 0 { return .silent }
            // A window that holds any of a marker beep is left out of the tone's figures.
            if marker.share(in: window) > 0.02 { return .marker }
            return tone.share(in: window) > 0.8 ? .tone : .other
        }
    }

    /// ffprobe's streams of `url`, one `entries` line each, sorted; `before`: options
    /// before the input.
    static func streams(_ url: String, entries: String, before: [String] = []) throws -> [String] {
        let result = try ProcessOutput.run(FFprobe.path, ["-v", "error"] + before + ["-show_entries", "stream=" + entries,
                                                                                   "-of", "csv=p=0", url])
        #expect(result.status == 0, "ffprobe: \(result.stderr)")
        return result.text.split(separator: "\n").map(String.init).sorted()
    }

    /// ffprobe's packets of the first `seconds`: (audio?, pts in s).
    static func packets(_ url: String, seconds: Int) throws -> [(audio: Bool, pts: Double)] {
        let result = try ProcessOutput.run(FFprobe.path, ["-v", "error", "-show_entries", "packet=codec_type,pts_time",
                                                          "-of", "csv=p=0", "-read_intervals", "%+\(seconds)", url])
        #expect(result.status == 0, "ffprobe: \(result.stderr)")
        return result.text.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: ",")
            guard fields.count == 2, let pts = Double(fields[1]) else { return nil }
            return (fields[0] == "audio", pts)
        }
    }

    @Test("(c) the tone holds its frequency through the relay; each track's timestamps rise and the two start together")
    func toneThroughServe() throws {
        let server = try Server()
        defer { server.background.stop() }
        let host = try Background(CLI.liveline, ["host", server.url("tone"), "--size", "320x240", "--audio-source", "tone:1000",
                                                 "--duration", "8"])
        defer { host.stop() }
        Thread.sleep(forTimeInterval: 1.5)
        let packets = try Self.packets(server.url("tone"), seconds: 2)
        let audio = packets.filter(\.audio).map(\.pts), video = packets.filter { !$0.audio }.map(\.pts)
        try #require(audio.count > 20 && video.count > 20, "\(audio.count) audio and \(video.count) video packets")
        #expect(zip(audio, audio.dropFirst()).allSatisfy { $0 <= $1 }, "audio pts: \(audio.prefix(20))")
        #expect(zip(video, video.dropFirst()).allSatisfy { $0 <= $1 }, "video pts: \(video.prefix(20))")
        #expect(abs(audio[0] - video[0]) <= 0.05, "first audio at \(audio[0]) s, first video at \(video[0]) s")

        let windows = Self.windows(try Self.decodedAudio(server.url("tone"), seconds: 3), tone: 1000)
        let measured = windows.filter { $0 != .marker }
        #expect(windows.count >= 55 && measured.count >= 45, "\(windows)")
        let share = Double(measured.filter { $0 == .tone }.count) / Double(max(1, measured.count))
        #expect(share > 0.9, "the 1000 Hz tone in \(share * 100)% of the windows: \(windows)")
        #expect(windows.contains(.marker), "no marker beep in 3 s")
    }

    @Test("(e) --mode audio: a stream with only an AAC track that ffprobe, ffmpeg and LiveLine's guest (--wav) play")
    func audioOnlyLive() throws {
        let server = try Server()
        defer { server.background.stop() }
        // 9 s: ffprobe, ffmpeg and the guest below take their turns on the one live stream.
        let host = try KitProcess(["host", server.url("radio"), "--mode", "audio", "--duration", "9", "--stats", "json"],
                                  input: FileHandle.nullDevice)
        defer { host.stop() }
        #expect(host.waitFor(timeout: 5) { $0["event"] as? String == "ok" } != nil, "no ok: \(host.stderr)")
        // stderr is read on its own thread: the startup line may trail the "ok" event.
        let said = Date().addingTimeInterval(5)
        while !host.stderr.contains("audio only (no video track)"), Date() < said { Thread.sleep(forTimeInterval: 0.05) }
        #expect(host.stderr.contains("audio only (no video track): tone 440 Hz"), "\(host.stderr)")
        Thread.sleep(forTimeInterval: 0.5)
        // RTMP's FLV header promises video, so ffmpeg would wait its whole analyze time
        // (5 s) for a video track before it gave up on it.
        let analyze = ["-analyzeduration", "1000000"]
        let streams = try Self.streams(server.url("radio"), entries: "codec_type,codec_name,sample_rate", before: analyze)
        #expect(streams == ["aac,audio,48000"])
        let windows = Self.windows(try Self.decodedAudio(server.url("radio"), seconds: 2, probe: analyze), tone: 440)
        #expect(windows.filter { $0 == .tone }.count >= 30, "\(windows)")
        // (e) LiveLine's own guest plays it as audio only and writes what it heard.
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let wav = directory.appendingPathComponent("radio.wav").path
        let guest = try CLI.liveline("guest", server.url("radio"), "--duration", "2", "--wav", wav, "--stats", "json")
        #expect(guest.status == 0, "\(guest.stderr)")
        #expect(guest.stdout.contains("\"audioOnly\":true"), "\(guest.stdout.suffix(600))")
        let (heard, rate) = try CohostAudioTests.wav(wav)
        try #require(heard.count > rate, "heard \(heard.count) samples")
        let heardWindows = Self.windows(Array(heard.suffix(rate)), tone: 440)
        #expect(heardWindows.filter { $0 == .tone }.count >= 15, "the guest's WAV: \(heardWindows)")
        host.process.waitUntilExit()
        #expect(host.process.terminationStatus == 0, "\(host.stderr)")
        Thread.sleep(forTimeInterval: 0.2)
        let summary = try #require(host.events.last { $0.object["event"] as? String == "summary" }?.object)
        #expect(summary["frames"] as? Int == 0)
        #expect((summary["audioFrames"] as? Int ?? 0) > 100, "\(summary)")
    }

    @Test("mute and unmute on stdin: silence while muted, the tone before and after; level events stop while muted")
    func muteOnStdin() throws {
        let server = try Server()
        defer { server.background.stop() }
        let input = Pipe()
        let host = try KitProcess(["host", server.url("mute"), "--size", "320x240", "--duration", "10", "--stats", "json",
                                   "--level-ms", "200"], input: input)
        defer { host.stop() }
        #expect(host.waitFor(timeout: 5) { $0["event"] as? String == "ok" } != nil, "no ok: \(host.stderr)")
        Thread.sleep(forTimeInterval: 1)
        final class Decoded: @unchecked Sendable { var samples: [Float] = [] }  // written once, read after `done`
        let decoded = Decoded()
        let done = DispatchSemaphore(value: 0)
        let url = server.url("mute")
        DispatchQueue.global().async {
            decoded.samples = (try? Self.decodedAudio(url, seconds: 5)) ?? []
            done.signal()
        }
        Thread.sleep(forTimeInterval: 1.5)
        input.fileHandleForWriting.write(Data("mute\n".utf8))
        let muted = try #require(host.waitFor(timeout: 2) { $0["event"] as? String == "audio" && $0["enabled"] as? Bool == false })
        Thread.sleep(forTimeInterval: 1.5)
        input.fileHandleForWriting.write(Data("unmute\n".utf8))
        let unmuted = try #require(host.waitFor(timeout: 2) { $0["event"] as? String == "audio" && $0["enabled"] as? Bool == true })
        done.wait()

        let windows = Self.windows(decoded.samples, tone: 440)
        // tone … ≥ 0.5 s of silence … tone: the muted stretch is digital silence, markers included.
        let firstSilent = try #require(windows.firstIndex(of: .silent), "never silent: \(windows)")
        let silentRun = windows[firstSilent...].prefix { $0 == .silent }.count
        #expect(silentRun >= 10, "silent for \(silentRun) windows: \(windows)")
        #expect(windows[..<firstSilent].filter { $0 == .tone }.count >= 5, "\(windows)")
        #expect(windows[(firstSilent + silentRun)...].filter { $0 == .tone }.count >= 5, "no tone after unmute: \(windows)")
        // The track itself went on: no gap in the decoded time.
        #expect(decoded.samples.count >= 48000 * 49 / 10, "\(decoded.samples.count) samples")

        let levels = host.events.filter { $0.object["event"] as? String == "localAudioActive" }
        #expect(levels.contains { $0.time < muted }, "no level before mute")
        #expect(!levels.contains { $0.time > muted.addingTimeInterval(0.3) && $0.time < unmuted }, "levels while muted")
        #expect(levels.contains { $0.time > unmuted }, "no level after unmute")
        #expect(levels.allSatisfy { ($0.object["level"] as? Int ?? 0) >= 60 && $0.object["showTime"] as? Int == 200 })
        // Throttled: at most one per 200 ms (a little slack for the pipe).
        let beforeMute = levels.filter { $0.time < muted }.map(\.time)
        let gaps = zip(beforeMute, beforeMute.dropFirst()).map { $1.timeIntervalSince($0) }
        #expect(gaps.allSatisfy { $0 > 0.1 }, "\(gaps)")
    }

    @Test("a restarted relay gets the stream back with both tracks")
    func reconnectKeepsBothTracks() throws {
        let server = try Server()
        defer { server.background.stop() }
        let host = try KitProcess(["host", server.url("again"), "--size", "320x240", "--duration", "15", "--stats", "json",
                                   "--reconnect-tries", "10"], input: FileHandle.nullDevice)
        defer { host.stop() }
        #expect(host.waitFor(timeout: 5) { $0["event"] as? String == "ok" } != nil)
        Thread.sleep(forTimeInterval: 1)
        let restarted = try server.killAndRestart(after: 0.5)
        defer { restarted.stop() }
        let back = host.waitFor(timeout: 8) { _ in host.names.filter { $0 == "ok" }.count >= 2 }
        try #require(back != nil, "no second ok: \(host.names.suffix(8))")
        Thread.sleep(forTimeInterval: 1)
        #expect(try Self.streams(server.url("again"), entries: "codec_type,codec_name") == ["aac,audio", "h264,video"])
    }

    @Test("a co-host with --mute pushes silence and the room hears it; the hoster's mute on stdin reaches the co-host")
    func cohostMute() throws {
        let server = try Server()
        defer { server.background.stop() }
        let url = server.url("muteline")
        let signal = "ws://127.0.0.1:\(server.httpPort)/line"
        let input = Pipe()
        let hoster = try KitProcess(["host", url, "--size", "320x240", "--line", "muteline", "--accept", "auto",
                                     "--signal", signal, "--stats", "json"], input: input)
        defer { hoster.stop() }
        #expect(hoster.waitFor(timeout: 10) { $0["event"] as? String == "lineResult" && $0["code"] as? Int == 0 } != nil)
        let cohost = try KitProcess(["guest", url, "--apply", "--no-play", "--mute", "--size", "160x120", "--signal", signal,
                                     "--user-id", "quiet", "--stats", "json"], input: FileHandle.nullDevice)
        defer { cohost.stop() }
        var pubId: String?
        _ = hoster.waitFor(timeout: 10) { line in
            guard line["event"] as? String == "cohostOpened" else { return false }
            pubId = line["pubId"] as? String
            return true
        }
        let stream = try #require(pubId, "the co-host never opened: \(hoster.names)")
        #expect(hoster.waitFor(timeout: 5) { $0["event"] as? String == "remoteAVStatus" && $0["audio"] as? Bool == false } != nil,
                "the room was not told: \(hoster.names)")
        Thread.sleep(forTimeInterval: 0.5)
        let windows = Self.windows(try Self.decodedAudio(server.url(stream), seconds: 1.5), tone: 440)
        #expect(windows.count >= 25 && windows.allSatisfy { $0 == .silent }, "the muted co-host's track: \(windows)")

        input.fileHandleForWriting.write(Data("mute\n".utf8))
        #expect(cohost.waitFor(timeout: 5) { $0["event"] as? String == "remoteAVStatus" && $0["audio"] as? Bool == false } != nil,
                "the co-host did not hear the hoster's mute: \(cohost.names)")
    }

    @Test("host --record keeps the sound: both tracks, their durations within 100 ms; --mode audio records the one AAC track",
          arguments: ["flv", "mp4"])
    func recordKeepsTheSound(container: String) throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let both = directory.appendingPathComponent("both.\(container)").path
        let host = try CLI.liveline("host", "--size", "320x180", "--duration", "3", "--audio-source", "tone:1000", "--record", both)
        #expect(host.status == 0, "\(host.stderr)")
        let tracks = try Self.streams(both, entries: "codec_type,codec_name,sample_rate,duration")
        #expect(tracks.count == 2, "\(tracks)")
        let audio = try #require(tracks.first { $0.hasPrefix("aac,audio,48000") }, "\(tracks)")
        let video = try #require(tracks.first { $0.hasPrefix("h264,video") }, "\(tracks)")
        // flv gives no per-stream duration: then the packets' own span is the measure.
        func span(_ type: String) throws -> Double {
            let result = try ProcessOutput.run(FFprobe.path, ["-v", "error", "-select_streams", type, "-show_entries",
                                                              "packet=pts_time,duration_time", "-of", "csv=p=0", both])
            let rows = result.text.split(separator: "\n").compactMap { line -> (Double, Double)? in
                let fields = line.split(separator: ",").compactMap { Double($0) }
                return fields.count == 2 ? (fields[0], fields[1]) : nil
            }
            let first = try #require(rows.map(\.0).min()), last = try #require(rows.map { $0.0 + $0.1 }.max())
            return last - first
        }
        let (audioSpan, videoSpan) = (try span("a"), try span("v"))
        #expect(abs(audioSpan - videoSpan) < 0.1, "audio \(audioSpan) s, video \(videoSpan) s (\(audio); \(video))")
        #expect(audioSpan > 2.5, "\(audioSpan)")
        let samples = try Self.decodedAudio(both, seconds: 2)
        let share = ToneDetector(frequency: 1000, sampleRate: 48000).share(in: samples[4800..<43200])
        #expect(share > 0.8, "the recorded tone: share \(share) at 1000 Hz")

        let radio = directory.appendingPathComponent("radio.\(container)").path
        let audioOnly = try CLI.liveline("host", "--mode", "audio", "--duration", "1.5", "--record", radio)
        #expect(audioOnly.status == 0, "\(audioOnly.stderr)")
        #expect(try Self.streams(radio, entries: "codec_type,codec_name") == ["aac,audio"])
    }

    @Test("the sound's options on the startup line and in --help")
    func startupAndHelp() throws {
        let help = try CLI.liveline("host", "--help")
        for option in ["--mode video|audio", "--audio-source SPEC", "--audio-bitrate KBPS", "--mute", "--level-ms MS", "mute | unmute"] {
            #expect(help.stdout.contains(option), "--help lacks \(option)")
        }
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let record = directory.appendingPathComponent("a.flv").path
        let colour = try CLI.liveline("host", "--source", "color:red", "--size", "160x120", "--duration", "0.3", "--record", record)
        #expect(colour.status == 0, "\(colour.stderr)")
        #expect(colour.stderr.contains("audio: none (video only)"), "\(colour.stderr)")
        let tone = try CLI.liveline("host", "--size", "160x120", "--duration", "0.5", "--audio-bitrate", "64", "--mute",
                                    "--record", record)
        #expect(tone.status == 0, "\(tone.stderr)")
        #expect(tone.stderr.contains("audio: tone 440 Hz as AAC 64 kbit/s, 48000 Hz stereo (muted"), "\(tone.stderr)")
    }
}
