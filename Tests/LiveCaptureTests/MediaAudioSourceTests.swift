import Foundation
import LiveCore
import Testing
@testable import LiveCapture

@Suite struct FileAudioSourceTests {
    /// `count` blocks from a started source, all required.
    static func blocks(_ source: AudioSource, _ count: Int) throws -> [AudioFrame] {
        try (0..<count).map { n in try #require(try source.nextFrame(), "block \(n)") }
    }

    static func channel(_ blocks: [AudioFrame], _ channel: Int) -> [Float] {
        blocks.flatMap { Array($0.channel(channel)) }
    }

    @Test("a 2 s 44.1 kHz mono m4a as 48 kHz stereo: 10 ms blocks, the tone held, pts contiguous across the loop")
    func loopsTheTrack() throws {
        let fixture = try MediaFixture("audiofile")
        defer { fixture.remove() }
        let path = try fixture.make("tone.m4a", ["-f", "lavfi", "-i", "sine=frequency=1000:sample_rate=44100", "-t", "2", "-ac", "1"])
        let source = try #require(try AudioSourceSpec.file(path: path).makeSource(sampleRate: 48000, channelCount: 2, realTime: false))
        #expect(source.name.contains("44100 Hz, 1 ch") && source.name.contains("48000 Hz stereo"))
        try source.start()
        let blocks = try Self.blocks(source, 350)
        #expect(blocks.allSatisfy { $0.sampleCount == 480 && $0.sampleRate == 48000 && $0.channelCount == 2 })
        for (n, block) in blocks.enumerated() {
            #expect(block.pts == MediaTime(micros: Int64(n) * 10_000), "block \(n)")
        }
        let left = Self.channel(blocks, 0), right = Self.channel(blocks, 1)
        let tone = ToneDetector(frequency: 1000, sampleRate: 48000)
        #expect(tone.share(in: left[4800..<91200]) > 0.9)
        #expect(tone.share(in: right[4800..<91200]) > 0.9)
        // The second pass (from 2 s) carries the tone again, with no silence at the seam
        // (lavfi's sine has amplitude 1/8; every 10 ms around the seam holds it).
        #expect(tone.share(in: left[100_800..<163_200]) > 0.9)
        for block in blocks[195..<205] {
            #expect((block.channel(0).map { abs($0) }.max() ?? 0) > 0.1, "block at \(block.pts.micros) µs")
        }
    }

    @Test("every decoder's sample format, rate and layout comes out as the asked rate and channels with the tone",
          arguments: [
              ("s16.wav", ["-c:a", "pcm_s16le", "-ar", "44100", "-ac", "1"]),
              ("s32.wav", ["-c:a", "pcm_s32le", "-ar", "32000", "-ac", "2"]),
              ("flt.wav", ["-c:a", "pcm_f32le", "-ar", "48000", "-ac", "6"]),
              ("dbl.wav", ["-c:a", "pcm_f64le", "-ar", "22050", "-ac", "2"]),
              ("aac.m4a", ["-c:a", "aac", "-ar", "44100", "-ac", "2"]),
              ("mp3.mp3", ["-c:a", "libmp3lame", "-ar", "44100", "-ac", "1"]),
              ("opus.ogg", ["-c:a", "libopus", "-ar", "48000", "-ac", "2"]),
              ("flac.flac", ["-c:a", "flac", "-ar", "96000", "-ac", "2"]),
          ])
    func formats(name: String, codec: [String]) throws {
        let fixture = try MediaFixture("audioformat")
        defer { fixture.remove() }
        let path = try fixture.make(name, ["-f", "lavfi", "-i", "sine=frequency=1000:sample_rate=48000", "-t", "1"] + codec)
        for (rate, channels) in [(48000, 2), (44100, 1)] {
            let source = try MediaAudioSource(input: .file(path: path, loop: false), sampleRate: rate, channelCount: channels,
                                              realTime: false)
            try source.start()
            var blocks: [AudioFrame] = []
            while let block = try source.nextFrame(), blocks.count < 200 { blocks.append(block) }
            let total = blocks.reduce(0) { $0 + $1.sampleCount }
            #expect(abs(total - rate) <= rate / 50, "\(total) samples at \(rate) Hz")
            #expect(blocks.allSatisfy { $0.sampleRate == rate && $0.channelCount == channels })
            let tone = ToneDetector(frequency: 1000, sampleRate: rate)
            for channel in 0..<channels {
                let samples = Self.channel(blocks, channel)
                #expect(tone.share(in: samples[rate / 10..<rate * 8 / 10]) > 0.9, "channel \(channel) at \(rate) Hz")
            }
        }
    }

    @Test("paced in real time from start(): 30 blocks take about 300 ms")
    func paced() throws {
        let fixture = try MediaFixture("audiofile")
        defer { fixture.remove() }
        let path = try fixture.make("tone.m4a", ["-f", "lavfi", "-i", "sine=frequency=1000:sample_rate=48000", "-t", "1"])
        let source = try MediaAudioSource(input: .file(path: path, loop: true), realTime: true)
        try source.start()
        let began = Clock.monotonicMicros()
        _ = try Self.blocks(source, 30)
        let elapsed = Clock.monotonicMicros() - began
        #expect(elapsed >= 290_000)
        #expect(elapsed < 600_000)
    }

    @Test("without a loop the track ends; a second start() plays it again from the start")
    func endsAndRestarts() throws {
        let fixture = try MediaFixture("audiofile")
        defer { fixture.remove() }
        let path = try fixture.make("tone.m4a", ["-f", "lavfi", "-i", "sine=frequency=1000:sample_rate=48000", "-t", "0.5"])
        let source = try MediaAudioSource(input: .file(path: path, loop: false), sampleRate: 44100, channelCount: 1, realTime: false)
        for _ in 0..<2 {
            try source.start()
            var samples = 0
            while let block = try source.nextFrame() {
                samples += block.sampleCount
                if samples > 44100 { break }
            }
            #expect(abs(samples - 22050) <= 10)
        }
    }

    @Test("a file with pictures loops its sound on the file's duration: a short track is padded with silence")
    func loopsWithThePictures() throws {
        let fixture = try MediaFixture("audiofile")
        defer { fixture.remove() }
        // One second of pictures, half a second of sound.
        let path = try fixture.make("short.mp4", [
            "-f", "lavfi", "-i", "testsrc2=size=160x120:rate=25:duration=1",
            "-f", "lavfi", "-i", "sine=frequency=1000:sample_rate=48000:duration=0.5",
            "-c:v", "libx264", "-pix_fmt", "yuv420p", "-c:a", "aac"])
        let source = try MediaAudioSource(input: .file(path: path, loop: true), channelCount: 1, realTime: false)
        try source.start()
        let samples = Self.channel(try Self.blocks(source, 250), 0)
        let tone = ToneDetector(frequency: 1000, sampleRate: 48000)
        #expect(tone.share(in: samples[2400..<21600]) > 0.9)
        #expect(samples[28800..<45600].allSatisfy { $0 == 0 })
        // The second pass starts at 1 s, with the pictures.
        #expect(tone.share(in: samples[50400..<69600]) > 0.9)
        #expect(samples[76800..<93600].allSatisfy { $0 == 0 })
        #expect(tone.share(in: samples[98400..<117_600]) > 0.9)
    }

    @Test("a file without sound is refused, naming the file and what is missing")
    func videoOnlyRefused() throws {
        let fixture = try MediaFixture("audiofile")
        defer { fixture.remove() }
        let path = try fixture.make("silent.mp4", ["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=25", "-frames:v", "5", "-pix_fmt", "yuv420p"])
        #expect {
            try AudioSourceSpec.file(path: path).makeSource()
        } throws: { error in
            (error as? LiveError)?.code == .invalidParams && "\(error)".contains("\(path) has no audio track")
        }
        #expect {
            try AudioSourceSpec.file(path: fixture.path("missing.m4a")).makeSource()
        } throws: { error in
            (error as? LiveError)?.code == .invalidParams && "\(error)".contains("missing.m4a")
        }
    }
}

@Suite struct FileLoopPeriodTests {
    @Test("pictures loop on the file's duration when the sound runs longer, so both restart together")
    func picturesWaitForTheSound() throws {
        let fixture = try MediaFixture("filesource")
        defer { fixture.remove() }
        // One second of pictures, 1.5 s of sound: a pass lasts 1.5 s.
        let path = try fixture.make("long.mp4", [
            "-f", "lavfi", "-i", "testsrc2=size=160x120:rate=25:duration=1",
            "-f", "lavfi", "-i", "sine=frequency=1000:sample_rate=48000:duration=1.5",
            "-c:v", "libx264", "-pix_fmt", "yuv420p", "-c:a", "aac"])
        let source = try FileSource(path: path, width: 160, height: 120, fps: 25, realTime: false, loop: true)
        try source.start()
        var pictures: [[UInt8]] = []
        for _ in 0..<40 {
            let frame = try #require(try source.nextFrame())
            pictures.append(planeBytes(frame))
        }
        // Frames 24…37 hold the last picture; frame 38 (1.52 s) is the first again.
        #expect(pictures[30] == pictures[24])
        #expect(pictures[37] == pictures[24])
        #expect(pictures[38] == pictures[0])
        #expect(pictures[24] != pictures[0])
    }

    @Test("a file's pictures and sound stay in step over several loops: each flash meets its beep")
    func flashesMeetBeeps() throws {
        let fixture = try MediaFixture("filesource")
        defer { fixture.remove() }
        // A white patch on the first frame of each second and a 3 kHz beep at each second
        // (lavfi's sine beep, 40 ms); the pictures run 2.52 s and the sound 2.5 s.
        let path = try fixture.make("av.mp4", [
            "-f", "lavfi", "-i",
            "color=c=black:s=160x120:r=25:d=2.5,drawbox=x=0:y=0:w=40:h=40:color=white:t=fill:enable='lt(mod(t\\,1)\\,0.04)'",
            "-f", "lavfi", "-i", "sine=frequency=1000:beep_factor=3:sample_rate=48000:duration=2.5",
            "-c:v", "libx264", "-pix_fmt", "yuv420p", "-c:a", "aac"])
        let video = try FileSource(path: path, width: 160, height: 120, fps: 25, realTime: false, loop: true)
        let audio = try MediaAudioSource(input: .file(path: path, loop: true), channelCount: 1, realTime: false)
        try video.start()
        try audio.start()
        var flashes: [Int64] = []
        for _ in 0..<200 {
            let frame = try #require(try video.nextFrame())
            if frame.sample(plane: 0, x: 10, y: 10) > 200 { flashes.append(frame.pts.micros) }
        }
        var samples: [Float] = []
        for _ in 0..<800 { samples += try #require(try audio.nextFrame()).samples }
        // A beep starts where a 5 ms window turns mostly 3 kHz.
        let beep = ToneDetector(frequency: 3000, sampleRate: 48000)
        var beeps: [Int64] = []
        var inBeep = false
        for start in stride(from: 0, to: samples.count - 240, by: 48) {
            let isBeep = beep.share(in: samples[start..<start + 240]) > 0.5
            if isBeep && !inBeep { beeps.append(Int64(start) * 1_000_000 / 48000) }
            inBeep = isBeep
        }
        // In 8 s, passes start at 0, 2.52, 5.04 and 7.56 s, each with a flash and a beep,
        // and two more follow each start but the last.
        #expect(flashes.count == 10, "flashes at \(flashes)")
        #expect(beeps.count == 10, "beeps at \(beeps)")
        for (flash, beepTime) in zip(flashes, beeps) {
            #expect(abs(flash - beepTime) <= 20_000, "flash at \(flash) µs, beep at \(beepTime) µs")
        }
        #expect(abs((beeps.last ?? 0) - 7_560_000) <= 20_000)
    }
}

@Suite struct AudioBlockBufferTests {
    @Test("1024-sample stereo frames come out as 480-sample blocks, in order, each channel its own")
    func cutsInOrder() {
        var buffer = AudioBlockBuffer(channelCount: 2)
        var next: Float = 0
        var taken: [Float] = []
        for _ in 0..<15 {
            let left = (0..<1024).map { next + Float($0) }
            buffer.append(AudioFrame(sampleRate: 48000, channelCount: 2, samples: left + left.map { -$0 }))
            next += 1024
            while buffer.count >= 480 {
                let block = buffer.take(480)
                #expect(Array(block[480...]) == block[..<480].map { -$0 })
                taken += block[..<480]
            }
        }
        buffer.appendSilence(100)
        #expect(buffer.count == 15 * 1024 - taken.count + 100)
        #expect(taken == (0..<taken.count).map(Float.init))
    }
}
