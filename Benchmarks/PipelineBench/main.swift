import Foundation
import LiveCapture
import LiveCodec
import LiveCore
import LiveFilter
import LiveLine

// Per-stage cost of the hoster pipeline and its whole throughput, at one size.
//   liveline-bench WIDTHxHEIGHT [FRAMES] [BITRATE_KBPS]
// Stages are timed alone on the same frames (source, beauty, YUYV→I420 conversion as
// from a camera, x264 veryfast/zerolatency at 2500 kbit/s); then the real two-thread
// pipeline (test source unpaced → encoder, nothing dropped) runs FRAMES frames
// (FRAMES 0: the stages only).
//   liveline-bench pipeline FILE FRAMES [BITRATE_KBPS] [OUT.flv]
// the hoster's pipeline as `liveline host --source file:FILE` builds it (its file source
// at the file's size and 30 fps, its x264 settings), unpaced and dropping nothing, for
// FRAMES frames, the encoded stream recorded to OUT.flv when given; Benchmarks/pipeline.sh
// times this process from start to exit beside ffmpeg doing the same job on the same file.
//   liveline-bench beauty FILE [STRENGTH|none] [PASSES]
// runs the beauty filter on every frame of a video file, PASSES times on fresh copies
// (`none`: the same without the filter); Benchmarks/beauty.sh times the process, as it
// times ffmpeg's filters on the same file.

let args = CommandLine.arguments

/// `liveline-bench beauty FILE STRENGTH|none [PASSES]`: `BeautyFilter` on every frame of
/// FILE, PASSES times (each pass on fresh copies of the decoded frames); `none` does the
/// same work without the filter, the baseline Benchmarks/beauty.sh subtracts.
func beautyOnFile(path: String, strength: Double?, passes: Int) throws {
    let probe = try MediaFileReader(path: path)
    let (width, height) = (probe.width, probe.height)
    let source = try FileSource(path: path, width: width, height: height, fps: 30, realTime: false, loop: false)
    try source.start()
    var frames: [VideoFrame] = []
    while let frame = try source.nextFrame() {
        let copy = VideoFrame(width: width, height: height)
        copy.copy(from: frame)
        frames.append(copy)
    }
    guard !frames.isEmpty else { throw LiveError(.invalidParams, "\(path) has no frames") }
    let beauty = strength.map { BeautyFilter(strength: $0) }
    let work = VideoFrame(width: width, height: height)
    let start = Clock.monotonicMicros()
    for _ in 0..<passes {
        for frame in frames {
            work.copy(from: frame)
            if let beauty { _ = beauty.process(work) }
        }
    }
    let ms = Double(Clock.monotonicMicros() - start) / 1000 / Double(passes * frames.count)
    print("beauty \(width)x\(height), \(frames.count) frames × \(passes) passes, "
          + (strength.map { "strength \($0)" } ?? "no filter") + String(format: ": %.3f ms/frame (copy included)", ms))
    print("RESULT beauty_ms=\(String(format: "%.3f", ms)) frames=\(frames.count) passes=\(passes)")
}

/// `liveline-bench pipeline FILE FRAMES [BITRATE_KBPS] [OUT.flv]`: FRAMES frames of FILE
/// through the hoster's source and encoder, the encoded stream optionally recorded.
func pipelineOnFile(path: String, frames: Int, bitrateKbps: Int, recording: String?) throws {
    let probe = try MediaFileReader(path: path)
    var configuration = HosterConfiguration()
    configuration.source = "file:" + path
    configuration.width = probe.width
    configuration.height = probe.height
    configuration.fps = 30
    configuration.bitrateKbps = bitrateKbps
    configuration.realTime = false
    // The hoster's own source and encoder; `.block` instead of the live hoster's
    // drop-oldest queue, so that every frame is encoded, as ffmpeg encodes every frame.
    let pipeline = HosterPipeline(source: try configuration.makeSource(), filters: FilterChain(),
                                  encoder: try H264Encoder(config: configuration.encoderConfig), dropPolicy: .block)
    if let recording { pipeline.addSink(try RecordingSink(path: recording)) }
    let start = Clock.monotonicMicros()
    try pipeline.start(frameLimit: frames)
    try pipeline.wait()
    let seconds = Double(Clock.monotonicMicros() - start) / 1e6
    let stats = pipeline.stats
    let x264 = configuration.encoderConfig
    print("liveline-bench pipeline \(path) \(probe.width)x\(probe.height): x264 \(x264.preset) \(x264.tune) "
          + "\(x264.profile), keyframe every \(x264.gopSize) frames, \(bitrateKbps) kbit/s (VBV max = buffer = bitrate), "
          + "repeat headers, a capture-time SEI in every frame")
    print("RESULT encoded=\(stats.encoded) dropped=\(stats.dropped) bytes=\(stats.bytes) seconds=\(String(format: "%.3f", seconds))")
    guard stats.encoded == frames, stats.dropped == 0 else {
        throw LiveError(.invalidParams, "\(path): \(stats.encoded) of \(frames) frames encoded, \(stats.dropped) dropped")
    }
}

if args.count >= 4, args[1] == "pipeline" {
    do {
        guard let frames = Int(args[3]), frames > 0 else { throw LiveError(.invalidParams, "FRAMES must be a positive number") }
        try pipelineOnFile(path: args[2], frames: frames, bitrateKbps: args.count > 4 ? Int(args[4]) ?? 2500 : 2500,
                           recording: args.count > 5 ? args[5] : nil)
        exit(0)
    } catch {
        FileHandle.standardError.write(Data("liveline-bench: \(error)\n".utf8))
        exit(1)
    }
}
if args.count >= 3, args[1] == "beauty" {
    do {
        let strength = args.count > 3 ? args[3] : "0.6"
        guard strength == "none" || Double(strength) != nil else { throw LiveError(.invalidParams, "STRENGTH must be a number or none") }
        guard let passes = args.count > 4 ? Int(args[4]) : 1, passes > 0 else { throw LiveError(.invalidParams, "PASSES must be a positive number") }
        try beautyOnFile(path: args[2], strength: Double(strength), passes: passes)
        exit(0)
    } catch {
        FileHandle.standardError.write(Data("liveline-bench: \(error)\n".utf8))
        exit(1)
    }
}
guard args.count >= 2, case let parts = args[1].split(separator: "x"), parts.count == 2,
      let width = Int(parts[0]), let height = Int(parts[1]) else {
    FileHandle.standardError.write(Data("""
        usage: liveline-bench WIDTHxHEIGHT [FRAMES] [BITRATE_KBPS]
               liveline-bench pipeline FILE FRAMES [BITRATE_KBPS] [OUT.flv]
               liveline-bench beauty FILE [STRENGTH|none] [PASSES]

        """.utf8))
    exit(2)
}
let frameCount = args.count > 2 ? Int(args[2]) ?? 600 : 600
let bitrate = args.count > 3 ? Int(args[3]) ?? 2500 : 2500

func measure(_ label: String, frames: Int, _ body: (Int) throws -> Void) rethrows -> Double {
    let start = Clock.monotonicMicros()
    for i in 0..<frames { try body(i) }
    let ms = Double(Clock.monotonicMicros() - start) / 1000 / Double(frames)
    print("  " + label.padding(toLength: 30, withPad: " ", startingAt: 0) + String(format: "%8.3f ms/frame", ms))
    return ms
}

do {
    print("liveline-bench \(width)x\(height), \(frameCount) frames, x264 veryfast zerolatency \(bitrate) kbit/s")
    let source = try TestPatternSource(width: width, height: height, fps: 30, realTime: false)
    try source.start()
    var frames: [VideoFrame] = []
    let sourceMs = try measure("source (test pattern)", frames: 120) { _ in
        let frame = try source.nextFrame()!
        if frames.count < 30 {
            let copy = VideoFrame(width: width, height: height)
            copy.copy(from: frame)
            frames.append(copy)
        }
    }
    let beauty = BeautyFilter(strength: 0.6)
    let work = VideoFrame(width: width, height: height)
    let beautyMs = measure("beauty filter (0.6)", frames: 120) { i in
        work.copy(from: frames[i % frames.count])
        _ = beauty.process(work)
    }
    // A camera's YUYV picture, converted to I420 the way V4L2 capture does.
    var yuyv = [UInt8](repeating: 0, count: width * height * 2)
    for i in 0..<yuyv.count { yuyv[i] = UInt8(truncatingIfNeeded: i &* 7 &+ i >> 9) }
    let scaler = Scaler()
    let scaled = VideoFrame(width: width, height: height)
    let scaleMs = try yuyv.withUnsafeBufferPointer { buffer in
        try measure("swscale YUYV→I420", frames: 120) { _ in
            try scaler.scale(.packed(.yuyv, data: buffer.baseAddress!, stride: width * 2, width: width, height: height),
                             into: scaled, mode: .stretch)
        }
    }
    var config = H264EncoderConfig(width: width, height: height, fps: 30, bitrateKbps: bitrate)
    config.preset = "veryfast"
    let encoder = try H264Encoder(config: config)
    var bytes = 0
    let encodeMs = try measure("x264 encode", frames: 300) { i in
        let frame = frames[i % frames.count]
        frame.pts = MediaTime(frame: Int64(i), fps: 30)
        bytes += try encoder.encode(frame).reduce(0) { $0 + $1.data.count }
    }
    _ = try encoder.flush()

    let ours = sourceMs + scaleMs
    print(String(format: "  own stages (source + scale) = %.1f%% of encode; with beauty %.1f%%",
                 100 * ours / encodeMs, 100 * (ours + beautyMs) / encodeMs))
    var fps = 0.0
    if frameCount > 0 {
        // The whole pipeline, two threads, as `liveline host` runs it (nothing dropped).
        let pipelineSource = try TestPatternSource(width: width, height: height, fps: 30, realTime: false)
        let pipeline = HosterPipeline(source: pipelineSource, filters: FilterChain(),
                                      encoder: try H264Encoder(config: config), dropPolicy: .block)
        let start = Clock.monotonicMicros()
        try pipeline.start(frameLimit: frameCount)
        try pipeline.wait()
        let seconds = Double(Clock.monotonicMicros() - start) / 1e6
        let stats = pipeline.stats
        fps = Double(stats.encoded) / seconds
        print("  " + "pipeline test→x264".padding(toLength: 30, withPad: " ", startingAt: 0)
              + String(format: "%8.1f fps (%d frames in %.2f s, %d dropped)", fps, stats.encoded, seconds, stats.dropped))
    }
    print("RESULT fps=\(String(format: "%.2f", fps)) source_ms=\(String(format: "%.3f", sourceMs)) "
          + "beauty_ms=\(String(format: "%.3f", beautyMs)) scale_ms=\(String(format: "%.3f", scaleMs)) "
          + "encode_ms=\(String(format: "%.3f", encodeMs))")
} catch {
    FileHandle.standardError.write(Data("liveline-bench: \(error)\n".utf8))
    exit(1)
}
