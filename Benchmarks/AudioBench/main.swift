// The audio path's cost, for Benchmarks/audio.sh (which runs ffmpeg beside it):
//
//   audio-bench encode --seconds N [--bitrate KBPS] [--signal test|sine]
//       LiveLine's tone (48 kHz stereo, ToneSource not paced) → AAC (AACEncoder) for N
//       seconds of audio as fast as it goes; prints the CPU time it took. The signal is
//       the test source's (440 Hz at -12 dBFS with its 3 kHz marker beeps; the default)
//       or ffmpeg's lavfi `sine` (440 Hz at 1/8 amplitude, no beeps): the encoder's work
//       depends on what it encodes.
//   audio-bench mix --voices V --seconds N
//       V voices of 48 kHz stereo in 10 ms blocks through AudioMixMinus (the program and
//       one mix-minus per voice), through AudioMixer alone (the program only), and with
//       the remote voices through AudioVoiceBuffers first; prints µs per 10 ms block.
//
// Each run ends with `RESULT name=value` lines the script reads.
import Foundation
import LiveCapture
import LiveCodec
import LiveCore
import LiveMix

let usage = """
    usage: audio-bench encode --seconds N [--bitrate KBPS] [--signal test|sine]
           audio-bench mix [--voices V] --seconds N
    """

/// Exits with status 2 and the usage after saying what is wrong.
func usageError(_ message: String) -> Never {
    FileHandle.standardError.write(Data("audio-bench: \(message)\n\(usage)\n".utf8))
    exit(2)
}

/// `--name value` options after the subcommand, as integers in `range`.
func options(_ arguments: ArraySlice<String>, allowed: [String: ClosedRange<Int>]) -> [String: Int] {
    var values: [String: Int] = [:]
    var rest = arguments
    while let name = rest.popFirst() {
        if name == "--help" || name == "-h" {
            print(usage)
            exit(0)
        }
        guard let range = allowed[name] else { usageError("unknown option \(name)") }
        guard let text = rest.popFirst() else { usageError("\(name) needs a value") }
        guard let value = Int(text), range.contains(value) else {
            usageError("\(name) \(text): a whole number in \(range.lowerBound)…\(range.upperBound) is wanted")
        }
        values[name] = value
    }
    return values
}

/// User and system CPU seconds this process has used so far.
func cpuSeconds() -> (user: Double, system: Double) {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1_000_000 }
    return (seconds(usage.ru_utime), seconds(usage.ru_stime))
}

func encode(seconds: Int, bitrateKbps: Int, lavfiSine: Bool) throws {
    let generator = lavfiSine ? ToneGenerator(sampleRate: 48000, channelCount: 2, amplitude: 0.125, markers: false)
        : ToneGenerator(sampleRate: 48000, channelCount: 2)
    let source = ToneSource(generator: generator, realTime: false)
    let encoder = try AACEncoder(sampleRate: 48000, channelCount: 2, bitrateKbps: bitrateKbps)
    let total = Int64(seconds) * 48000
    var samples: Int64 = 0
    var packets = 0
    var bytes = 0
    let cpuBefore = cpuSeconds()
    let start = Clock.monotonicMicros()
    try source.start()
    while samples < total, let frame = try source.nextFrame() {
        samples += Int64(frame.sampleCount)
        for packet in try encoder.encode(frame) {
            packets += 1
            bytes += packet.data.count
        }
    }
    for packet in try encoder.flush() {
        packets += 1
        bytes += packet.data.count
    }
    source.stop()
    let wall = Double(Clock.monotonicMicros() - start) / 1_000_000
    let cpuAfter = cpuSeconds()
    let user = cpuAfter.user - cpuBefore.user, system = cpuAfter.system - cpuBefore.system
    print(String(format: "encode: %d s of 48000 Hz stereo %@ → AAC-LC %d kbit/s: %d packets, %d bytes (%.1f kbit/s)",
                 seconds, lavfiSine ? "sine (as lavfi's)" : "test tone", bitrateKbps, packets, bytes,
                 Double(bytes) * 8 / Double(seconds) / 1000))
    print(String(format: "encode loop: cpu %.3f s (user %.3f, sys %.3f), wall %.3f s, %.0fx real time",
                 user + system, user, system, wall, Double(seconds) / max(wall, 1e-9)))
    print(String(format: "RESULT encode_loop_cpu_seconds=%.4f", user + system))
}

/// `count` distinct 10 ms blocks of a tone at `frequency`, cycled by the timing loops.
func blocks(_ frequency: Double, count: Int) -> [AudioFrame] {
    let generator = ToneGenerator(frequency: frequency, sampleRate: 48000, channelCount: 2, amplitude: 0.4, markers: false)
    return (0..<count).map { generator.frame(start: Int64($0 * 480), count: 480) }
}

/// µs per call of `body` over `count` calls, after `count / 10` calls of warm-up.
func microsPerCall(_ count: Int, _ body: (Int) throws -> Void) rethrows -> Double {
    for n in 0..<max(1, count / 10) { try body(n) }
    let start = Clock.monotonicMicros()
    for n in 0..<count { try body(n) }
    return Double(Clock.monotonicMicros() - start) / Double(count)
}

func mix(voices: Int, seconds: Int) throws {
    let variants = 10
    let frequencies = (0..<voices).map { 300 + 200 * Double($0) }
    let inputs = frequencies.map { blocks($0, count: variants) }
    let count = seconds * 100
    var checksum: Float = 0
    var mixMinus = AudioMixMinus()
    let minusMicros = try microsPerCall(count) { n in
        let out = try mixMinus.mix(inputs.map { $0[n % variants] })
        checksum += out.program.samples[n % 480] + out.minus[n % voices].samples[n % 480]
    }
    var mixer = AudioMixer()
    let programMicros = microsPerCall(count) { n in
        let out = mixer.mix(inputs.map { $0[n % variants] })
        checksum += out?.samples[n % 480] ?? 0
    }
    // The hoster's own voice is local; each remote voice arrives through its buffer.
    var buffers = try (1..<voices).map { _ in try AudioVoiceBuffer(sampleRate: 48000, channelCount: 2) }
    let bufferedMicros = try microsPerCall(count) { n in
        var voicesNow = [inputs[0][n % variants]]
        for index in buffers.indices {
            try buffers[index].push(inputs[index + 1][n % variants])
            voicesNow.append(buffers[index].pop(480))
        }
        let out = try mixMinus.mix(voicesNow)
        checksum += out.program.samples[n % 480]
    }
    print("mix: \(voices) voices of 48000 Hz stereo, 10 ms blocks (480 samples per channel), \(count) blocks [checksum \(checksum)]")
    print(String(format: "mix-minus (program + %d mix-minus outputs, each limited): %.2f µs per 10 ms block", voices, minusMicros))
    print(String(format: "program only (AudioMixer, one limited sum):             %.2f µs per 10 ms block", programMicros))
    print(String(format: "mix-minus with the %d remote voices through AudioVoiceBuffer: %.2f µs per 10 ms block",
                 voices - 1, bufferedMicros))
    print(String(format: "RESULT mixminus_us_per_block=%.3f", minusMicros))
    print(String(format: "RESULT program_us_per_block=%.3f", programMicros))
    print(String(format: "RESULT buffered_mixminus_us_per_block=%.3f", bufferedMicros))
}

let arguments = CommandLine.arguments.dropFirst()
do {
    switch arguments.first {
    case "encode":
        var rest = Array(arguments.dropFirst())
        var lavfiSine = false
        if let at = rest.firstIndex(of: "--signal") {
            guard at + 1 < rest.count, ["test", "sine"].contains(rest[at + 1]) else { usageError("--signal takes test or sine") }
            lavfiSine = rest[at + 1] == "sine"
            rest.removeSubrange(at...(at + 1))
        }
        let values = options(rest[...], allowed: ["--seconds": 1...86_400, "--bitrate": 8...512])
        guard let seconds = values["--seconds"] else { usageError("encode needs --seconds N") }
        try encode(seconds: seconds, bitrateKbps: values["--bitrate"] ?? 96, lavfiSine: lavfiSine)
    case "mix":
        let values = options(arguments.dropFirst(), allowed: ["--seconds": 1...86_400, "--voices": 1...16])
        guard let seconds = values["--seconds"] else { usageError("mix needs --seconds N") }
        try mix(voices: values["--voices"] ?? 4, seconds: seconds)
    case "--help", "-h":
        print(usage)
    case let other?:
        usageError("unknown subcommand \(other)")
    case nil:
        usageError("a subcommand is needed")
    }
} catch {
    FileHandle.standardError.write(Data("audio-bench: \(error)\n".utf8))
    exit(1)
}
