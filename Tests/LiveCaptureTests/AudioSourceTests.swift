import LiveCore
import Testing
@testable import LiveCapture

@Suite struct AudioSourceSpecTests {
    @Test("every kind parses and prints back", arguments: [
        ("tone", AudioSourceSpec.tone(frequency: 440)), ("tone:1000", .tone(frequency: 1000)),
        ("silence", .silence), ("none", .none), ("file:/tmp/a.mp4", .file(path: "/tmp/a.mp4")),
        ("alsa:hw:0", .alsa(device: "hw:0")), ("pulse:default", .pulse(name: "default")),
    ])
    func parses(text: String, spec: AudioSourceSpec) throws {
        let parsed = try AudioSourceSpec(parsing: text)
        #expect(parsed == spec)
        #expect(try AudioSourceSpec(parsing: parsed.description) == spec)
    }

    @Test("what cannot be a source is an invalid-parameters error naming it",
          arguments: ["", "beep", "tone:", "tone:5", "tone:30000", "tone:abc", "file:", "alsa:", "pulse:", "mic:x"])
    func refuses(text: String) {
        #expect {
            try AudioSourceSpec(parsing: text)
        } throws: { error in
            (error as? LiveError)?.code == .invalidParams && "\(error)".contains("'\(text)'")
        }
    }

    @Test("the test pattern brings a tone, a file its own track (none without one), colours and cameras none")
    func defaults() throws {
        let fixture = try MediaFixture("audiodefault")
        defer { fixture.remove() }
        let withSound = try fixture.make("av.mp4", ["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=25:duration=0.2",
                                                    "-f", "lavfi", "-i", "sine=duration=0.2", "-pix_fmt", "yuv420p"])
        let withoutSound = try fixture.make("v.mp4", ["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=25:duration=0.2",
                                                      "-pix_fmt", "yuv420p"])
        #expect(AudioSourceSpec.defaultFor(video: .testPattern) == .tone(frequency: 440))
        #expect(AudioSourceSpec.defaultFor(video: .file(path: withSound)) == .file(path: withSound))
        #expect(AudioSourceSpec.defaultFor(video: .file(path: withoutSound)) == .none)
        #expect(AudioSourceSpec.defaultFor(video: .file(path: fixture.path("missing.mp4"))) == .none)
        #expect(AudioSourceSpec.defaultFor(video: .color(.black)) == .none)
        #expect(AudioSourceSpec.defaultFor(video: .camera(device: "/dev/video0")) == .none)
    }
}

@Suite struct ToneSourceTests {
    @Test("10 ms blocks, contiguous pts from 0, the tone's frequency, the beep at each second")
    func blocks() throws {
        let source = try #require(try AudioSourceSpec.tone(frequency: 1000).makeSource(channelCount: 1, realTime: false))
        try source.start()
        var samples: [Float] = []
        var expectedPts = MediaTime.zero
        for _ in 0..<150 {
            let block = try #require(try source.nextFrame())
            #expect(block.sampleCount == 480 && block.sampleRate == 48000 && block.channelCount == 1)
            #expect(block.pts == expectedPts)
            expectedPts = expectedPts + block.duration
            samples += block.samples
        }
        let tone = ToneDetector(frequency: 1000, sampleRate: 48000)
        let marker = ToneDetector(frequency: ToneGenerator.markerFrequency, sampleRate: 48000)
        // Second 1 starts at sample 48000: the marker's 50 ms, then the tone.
        #expect(marker.share(in: samples[48000..<50400]) > 0.9)
        #expect(tone.share(in: samples[50400..<60000]) > 0.9)
        #expect(marker.share(in: samples[50400..<60000]) < 0.01)
    }

    @Test("silence is all zeros; none is no source")
    func silenceAndNone() throws {
        let silence = try #require(try AudioSourceSpec.silence.makeSource(realTime: false))
        try silence.start()
        let block = try #require(try silence.nextFrame())
        #expect(block.channelCount == 2 && block.samples.allSatisfy { $0 == 0 })
        #expect(try AudioSourceSpec.none.makeSource() == nil)
    }

    @Test("paced: 20 blocks take about 200 ms")
    func paced() throws {
        let source = try #require(try AudioSourceSpec.tone(frequency: 440).makeSource(realTime: true))
        try source.start()
        let began = Clock.monotonicMicros()
        for _ in 0..<20 { _ = try source.nextFrame() }
        #expect(Clock.monotonicMicros() - began >= 190_000)
    }
}

@Suite struct TestPatternMarkerTests {
    @Test("the marker patch is lit on the first frame of each second and dark on the others",
          arguments: [(640, 360, 30), (1280, 720, 25), (320, 180, 15)])
    func marker(width: Int, height: Int, fps: Int) throws {
        let source = try TestPatternSource(width: width, height: height, fps: fps, realTime: false)
        let frame = VideoFrame(width: width, height: height)
        for index in Int64(0)..<Int64(3 * fps) {
            source.render(index: index, into: frame)
            #expect(TestPatternSource.markerLit(in: frame) == (index % Int64(fps) == 0), "frame \(index)")
        }
    }
}
