import Foundation
import LiveCore
import Testing
@testable import LiveCapture

/// The device path (`alsa:`, `pulse:`) on a machine without a sound card.
///
/// ALSA: an ALSA `file` PCM over the `null` PCM whose `infile` holds a tone as raw s16le
/// (what `arecord` from that PCM returns is the file's samples). ALSA reads where its
/// configuration lives from `ALSA_CONFIG_PATH`, which a test cannot change safely while
/// other tests run, so the capture runs in a child process (this test binary, filtered to
/// `alsaFilePCM`) started with that variable naming the system's alsa.conf and the test's
/// own file.
@Suite struct DeviceAudioSourceTests {
    static let childVariable = "LIVELINE_ALSA_CHILD_TONE_HZ"

    /// In the test process: writes the PCM's configuration and infile, then runs this same
    /// test in a child with `ALSA_CONFIG_PATH` set, which does the capture.
    @Test("alsa: a tone written into the file PCM's infile comes through, 10 ms blocks with pts counted from 0")
    func alsaFilePCM() throws {
        if let hertz = ProcessInfo.processInfo.environment[Self.childVariable] {
            return try Self.capture(hertz: try #require(Double(hertz)))
        }
        let fixture = try MediaFixture("alsa")
        defer { fixture.remove() }
        // Three seconds of a 1000 Hz tone, 48 kHz stereo s16le, as the PCM's capture data.
        let infile = try fixture.make("tone.raw", ["-f", "lavfi", "-i", "sine=frequency=1000:sample_rate=48000",
                                                   "-t", "3", "-ac", "2", "-f", "s16le"])
        let config = fixture.path("asound.conf")
        try """
        pcm.liveline_test {
            type file
            slave.pcm null
            file "/dev/null"
            infile "\(infile)"
            format raw
        }
        """.write(toFile: config, atomically: true, encoding: .utf8)
        let child = Process()
        child.executableURL = URL(fileURLWithPath: "/proc/self/exe")
        child.arguments = ["--testing-library", "swift-testing", "--filter", "DeviceAudioSourceTests/alsaFilePCM"]
        var environment = ProcessInfo.processInfo.environment
        environment["ALSA_CONFIG_PATH"] = "/usr/share/alsa/alsa.conf:\(config)"
        environment[Self.childVariable] = "1000"
        child.environment = environment
        let output = Pipe()
        child.standardOutput = output
        child.standardError = output
        try child.run()
        let deadline = Date().addingTimeInterval(60)
        while child.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        if child.isRunning { child.terminate() }
        child.waitUntilExit()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(child.terminationStatus == 0, "\(text)")
        // The child really ran the capture (a filter matching nothing would also exit 0).
        #expect(text.contains("Test run with 1 test") && text.contains("passed"), "\(text)")
    }

    /// The capture from `liveline_test`, twice (a second start() opens the device again).
    static func capture(hertz: Double) throws {
        let source = try #require(try AudioSourceSpec.alsa(device: "liveline_test").makeSource(sampleRate: 48000, channelCount: 2))
        #expect(source.name == "ALSA device 'liveline_test' → 48000 Hz stereo")
        for _ in 0..<2 {
            try source.start()
            defer { source.stop() }
            var samples: [[Float]] = [[], []]
            for n in 0..<50 {
                let block = try #require(try source.nextFrame())
                #expect(block.sampleCount == 480 && block.channelCount == 2 && block.sampleRate == 48000)
                #expect(block.pts == MediaTime(micros: Int64(n) * 10_000))
                for channel in 0..<2 { samples[channel] += block.channel(channel) }
            }
            let tone = ToneDetector(frequency: hertz, sampleRate: 48000)
            for channel in 0..<2 {
                #expect(tone.share(in: samples[channel][4800...]) > 0.9)
                // lavfi's sine (amplitude 1/8, made stereo by ffmpeg at -3 dB: 0.088): the
                // null PCM's zeros did not replace it.
                #expect((samples[channel].map { abs($0) }.max() ?? 0) > 0.08)
            }
        }
    }

    @Test("alsa: a device that does not exist fails at start() with a message naming it")
    func alsaMissingDevice() throws {
        let source = try #require(try AudioSourceSpec.alsa(device: "liveline_no_such_device").makeSource())
        #expect {
            try source.start()
        } throws: { error in
            let text = "\(error)"
            return text.contains("cannot open ALSA device 'liveline_no_such_device'") && text.contains("arecord -L")
        }
        #expect(try source.nextFrame() == nil)
        source.stop()
    }

    @Test("pulse: with no server, start() fails within seconds, naming PulseAudio and the reason")
    func pulseWithoutServer() throws {
        let source = try #require(try AudioSourceSpec.pulse(name: "default").makeSource())
        let began = Clock.monotonicMicros()
        #expect {
            try source.start()
        } throws: { error in
            let text = "\(error)"
            return text.contains("cannot open PulseAudio source 'default'") && text.contains("server running")
        }
        #expect(Clock.monotonicMicros() - began < 5_000_000)
    }
}
