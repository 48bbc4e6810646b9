import Foundation
import LiveCapture
import LiveCodec
import LiveCore
import LiveRTMP
import LiveTestSupport
import Testing
@testable import LiveLine

/// The guest's audio pieces that need no network: A/V sync pairing, latency control for
/// audio, levels, the PCM and WAV writers.
@Suite("Guest audio parts")
struct GuestAudioTests {
    @Test("A/V sync pairs each marked frame with the nearest beep within 500 ms: audio − video, positive when late")
    func pairing() throws {
        var meter = AVSyncMeter()
        #expect(meter.p50p95Ms == nil)
        // Frames marked each second; beeps 40 ms late, 60 ms late, 20 ms early (it comes
        // first), 40 ms late; a stray beep at 5.5 s with no frame near it.
        meter.markedFrame(at: 0)
        meter.beepOnset(at: 40_000)
        meter.markedFrame(at: 1_000_000)
        meter.beepOnset(at: 1_060_000)
        meter.beepOnset(at: 1_980_000)
        meter.markedFrame(at: 2_000_000)
        meter.beepOnset(at: 5_500_000)
        meter.markedFrame(at: 3_000_000)
        meter.beepOnset(at: 3_040_000)
        #expect(meter.offsets.samples == [40_000, 60_000, -20_000, 40_000])
        let (p50, p95) = try #require(meter.p50p95Ms)
        #expect(p50 == 40 && p95 == 60)
        // A rising edge is one marked frame, however long the patch stays lit.
        var edges = AVSyncMeter()
        for (index, lit) in [false, true, true, false, nil, true].enumerated() {
            edges.frame(pts: Int64(index) * 40_000, lit: lit)
        }
        edges.beepOnset(at: 40_000)
        edges.beepOnset(at: 200_000)
        #expect(edges.offsets.samples == [0, 0])
    }

    @Test("beeps found in decoded audio: the test tone shifted 80 ms late reads 80 ms ± 2", arguments: [80, -30])
    func beepDetection(offsetMs: Int) throws {
        let generator = ToneGenerator(frequency: 440, sampleRate: 48000, channelCount: 2)
        var meter = AVSyncMeter()
        let fps = 25
        // 3 s in AAC-sized blocks, the audio's pts moved by the offset; the marked frames
        // are those at whole seconds, as the test pattern marks them.
        var start: Int64 = 0
        var frame = 0
        while start < 3 * 48000 {
            var block = generator.frame(start: start, count: 1024)
            block.pts = MediaTime(micros: block.pts.micros + Int64(offsetMs) * 1000)
            while Int64(frame) * 1_000_000 / Int64(fps) <= block.pts.micros {
                meter.frame(pts: Int64(frame) * 1_000_000 / Int64(fps), lit: frame % fps == 0)
                frame += 1
            }
            meter.audio(block)
            start += 1024
        }
        let (p50, p95) = try #require(meter.p50p95Ms)
        #expect(meter.offsets.count >= 2)
        #expect(abs(p50 - Double(offsetMs)) <= 2 && abs(p95 - Double(offsetMs)) <= 2, "p50 \(p50) p95 \(p95)")
        // The tone alone has no beeps: nothing pairs.
        var silent = AVSyncMeter()
        silent.frame(pts: 0, lit: true)
        silent.audio(ToneGenerator(frequency: 440, markers: false).frame(start: 0, count: 48000))
        #expect(silent.p50p95Ms == nil)
    }

    @Test("latency control: audio skips to the first shown video packet; alone, to the target behind the newest")
    func audioLatency() {
        let control = GuestLatencyControl(targetMilliseconds: 150, toleranceMilliseconds: 100)
        let audio: [Int64] = stride(from: 0, to: 1000, by: 21).map { Int64($0) }
        #expect(control.audioDrop(audio, videoCutMilliseconds: 500) == audio.filter { $0 < 500 }.count)
        #expect(control.audioDrop(audio, videoCutMilliseconds: 0) == 0)
        // Audio only: a second buffered is cut to 150 ms behind the newest (987 ms).
        let kept = audio.count - control.audioDrop(audio, videoCutMilliseconds: nil)
        #expect(audio.suffix(kept).first! >= 987 - 150 && kept == audio.filter { 987 - $0 <= 150 }.count)
        // Within target + tolerance: nothing.
        #expect(control.audioDrop(Array(audio.prefix(10)), videoCutMilliseconds: nil) == 0)
    }

    @Test("levels: the last second, and since the last event")
    func levels() throws {
        var meter = AudioLevelMeter()
        #expect(meter.level == nil && meter.takeSinceLast() == nil)
        // 2 s of a full-scale sine (RMS −3 dBFS: 95), then 0.5 s of silence.
        let loud = ToneGenerator(frequency: 1000, sampleRate: 48000, channelCount: 1, amplitude: 1, markers: false)
        for block in 0..<40 { meter.add(loud.frame(start: Int64(block) * 2400, count: 2400)) }
        #expect(meter.level == 95)
        #expect(meter.takeSinceLast() == 95)
        #expect(meter.takeSinceLast() == nil)
        for _ in 0..<10 { meter.add(AudioFrame(sampleRate: 48000, channelCount: 1, sampleCount: 2400)) }
        // Half of the last second is silent: the RMS halves its power, 3 dB (5 points) less.
        #expect(meter.level == 90)
        #expect(meter.takeSinceLast() == 0)
    }

    @Test("WAV: a streaming header first, the sizes fixed at the end; ffprobe reads the rate, channels and length")
    func wav() throws {
        let dir = try makeTemporaryDirectory(prefix: "liveline-wav-")
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("a.wav").path
        let writer = try PCMWriter(path: path, format: .wav)
        let tone = ToneGenerator(frequency: 1000, sampleRate: 48000, channelCount: 2, markers: false)
        for block in 0..<47 { try writer.write(tone.frame(start: Int64(block) * 1024, count: 1024)) }
        // Another rate cannot go in the same file.
        try writer.write(AudioFrame(sampleRate: 44100, channelCount: 2, sampleCount: 1024))
        #expect(writer.framesWritten == 47 && writer.framesSkipped == 1 && writer.bytesWritten == 47 * 1024 * 4)
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(Array(before[4..<8]) == [0xFF, 0xFF, 0xFF, 0xFF])
        try writer.finish()
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(data.count == 44 + 47 * 1024 * 4)
        #expect(Array(data[40..<44]) == [0x00, 0xF0, 0x02, 0x00])  // 47 × 4096 = 0x2F000
        let probe = try ProcessOutput.run(FFprobe.path, ["-v", "error", "-show_entries", "stream=codec_name,sample_rate,channels,duration",
                                                         "-of", "csv=p=0", path])
        #expect(probe.text.trimmingCharacters(in: .whitespacesAndNewlines) == "pcm_s16le,48000,2,1.002667")
        // s16 interleaved, clipped and rounded.
        var bytes: [UInt8] = []
        PCMWriter.interleavedS16(AudioFrame(sampleRate: 8000, channelCount: 2, samples: [0.5, 2, -1, -0.25]), into: &bytes)
        #expect(bytes == [0x00, 0x40, 0x01, 0x80, 0xFF, 0x7F, 0x00, 0xE0])
    }
}

/// The guest kit's audio, from ffmpeg through nginx-rtmp.
@Suite("Guest kit audio", .serialized)
struct GuestKitAudioTests {
    @Test("onAudio gets the decoded frames on one thread, the decode thread; firstAudio, then hosterAudioActive no more often than showTime")
    func onAudio() throws {
        let nginx = try Peers.NginxRTMP()
        defer { nginx.stop() }
        let ffmpeg = try Peers.Background("/usr/bin/ffmpeg", [
            "-nostdin", "-v", "error", "-re", "-f", "lavfi", "-i", "sine=frequency=1000:sample_rate=48000", "-t", "8",
            "-ac", "2", "-c:a", "aac", "-f", "flv", nginx.url("kit"),
        ])
        defer { ffmpeg.stop() }
        var options = Guest.Options()
        options.audioLevelShowTimeMilliseconds = 200
        let guest = Guest(options: options)
        let frames = Locked<[AudioFrame]>([])
        let threads = Locked<Set<UInt>>([])
        let events = Locked<[(GuestEvent, Date)]>([])
        guest.onAudio = { frame in
            threads.update { _ = $0.insert(UInt(pthread_self())) }
            frames.update { $0.append(frame) }
        }
        guest.onEvent = { event in events.update { $0.append((event, Date())) } }
        Thread.sleep(forTimeInterval: 0.5)
        try guest.startPlay(url: nginx.url("kit"), sink: nil)
        #expect(eventually(8) { frames.value.count >= 60 })
        guest.stopPlay()
        let received = frames.value
        // One thread (the decode thread), not the test's.
        #expect(threads.value.count == 1 && !threads.value.contains(UInt(pthread_self())))
        #expect(received.allSatisfy { $0.sampleRate == 48000 && $0.channelCount == 2 && $0.sampleCount == 1024 })
        #expect(zip(received, received.dropFirst()).allSatisfy { $1.pts.micros - $0.pts.micros == 21_000 || $1.pts.micros - $0.pts.micros == 22_000 })
        let names = events.value.map(\.0.name)
        #expect(names.first == "ok" && names.dropFirst().first == "firstAudio", "\(names)")
        #expect(!names.contains("firstFrame"))
        let levels = events.value.compactMap { event, time -> (Int, Date)? in
            if case .hosterAudioActive(let level, let showTime) = event, showTime == 200 { (level, time) } else { nil }
        }
        // ffmpeg's sine is at 1/8 of full scale (RMS −21 dBFS: 65), upmixed to stereo at −3 dB
        // a side (60). The first level may hold the decoder's silent priming.
        #expect(levels.count >= 3 && levels.dropFirst().allSatisfy { (55...68).contains($0.0) }, "levels: \(levels.map(\.0))")
        #expect(zip(levels, levels.dropFirst()).allSatisfy { $1.1.timeIntervalSince($0.1) >= 0.19 })
        #expect(guest.stats.audioFrames == received.count && guest.stats.audioOnly)
    }

    @Test("A/V sync end to end: the test pattern and its tone, the audio put 80 ms late by ffmpeg, read back by the guest as 80 ms ± 15")
    func avSyncOfAnOffsetStream() throws {
        let dir = try Peers.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        // 4 s of LiveLine's test pattern (a marker lit each second) and of its tone (a
        // 3 kHz beep at each second), made here, so ffmpeg can offset one of them.
        let video = dir.appendingPathComponent("pattern.y4m").path, audio = dir.appendingPathComponent("tone.wav").path
        let pattern = try TestPatternSource(width: 320, height: 240, fps: 25, realTime: false)
        let y4m = try Y4MWriter(path: video)
        y4m.setFrameRate(25)
        let frame = VideoFrame(width: 320, height: 240)
        for index in 0..<100 {
            pattern.render(index: Int64(index), into: frame)
            try y4m.write(frame)
        }
        let wav = try PCMWriter(path: audio, format: .wav)
        let tone = ToneGenerator(frequency: 440, sampleRate: 48000, channelCount: 1)
        for block in 0..<400 { try wav.write(tone.frame(start: Int64(block) * 480, count: 480)) }
        try wav.finish()

        let nginx = try Peers.NginxRTMP()
        defer { nginx.stop() }
        var configuration = GuestPipeline.Configuration(url: try RTMPURL(parsing: nginx.url("sync")))
        configuration.duration = 8
        let guest = try GuestPipeline(configuration: configuration)
        try guest.start()
        defer { guest.stop() }
        let ffmpeg = try Peers.Background("/usr/bin/ffmpeg", [
            "-nostdin", "-v", "error", "-re", "-i", video, "-itsoffset", "0.08", "-i", audio,
            "-c:v", "libx264", "-preset", "veryfast", "-tune", "zerolatency", "-g", "25", "-c:a", "aac", "-f", "flv", nginx.url("sync"),
        ])
        defer { ffmpeg.stop() }
        _ = try guest.wait(seconds: 8)
        let stats = guest.stats
        #expect(stats.avSyncSamples >= 2, "\(stats)")
        let p50 = try #require(stats.avSyncP50Ms), p95 = try #require(stats.avSyncP95Ms)
        #expect(abs(p50 - 80) <= 15 && abs(p95 - 80) <= 15, "A/V sync p50 \(p50) ms, p95 \(p95) ms")
        print("A/V sync of a stream with audio 80 ms late: p50 \(p50) ms, p95 \(p95) ms over \(stats.avSyncSamples) pairs")
    }
}
