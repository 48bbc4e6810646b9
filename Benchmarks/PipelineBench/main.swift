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
// pipeline (test source unpaced → encoder, nothing dropped) runs FRAMES frames.
//   liveline-bench beauty FILE [STRENGTH]
// times the beauty filter alone on every frame of a video file (the frames an ffmpeg
// filter is timed on in Benchmarks/beauty.sh), each pass on fresh copies.

let args = CommandLine.arguments

/// `liveline-bench beauty FILE [STRENGTH]`: ms per frame of `BeautyFilter` on FILE's frames.
func beautyOnFile(path: String, strength: Double) throws {
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
    let beauty = BeautyFilter(strength: strength)
    let work = VideoFrame(width: width, height: height)
    var total: UInt64 = 0
    for pass in 0..<3 {
        for frame in frames {
            work.copy(from: frame)
            let start = Clock.monotonicMicros()
            _ = beauty.process(work)
            if pass > 0 { total += Clock.monotonicMicros() - start }  // the first pass warms up
        }
    }
    let ms = Double(total) / 1000 / Double(2 * frames.count)
    print("beauty \(width)x\(height), \(frames.count) frames × 2 passes, strength \(strength): "
          + String(format: "%.3f ms/frame", ms))
    print("RESULT beauty_ms=\(String(format: "%.3f", ms)) frames=\(frames.count)")
}

if args.count >= 3, args[1] == "beauty" {
    do {
        try beautyOnFile(path: args[2], strength: args.count > 3 ? Double(args[3]) ?? 0.6 : 0.6)
        exit(0)
    } catch {
        FileHandle.standardError.write(Data("liveline-bench: \(error)\n".utf8))
        exit(1)
    }
}
guard args.count >= 2, case let parts = args[1].split(separator: "x"), parts.count == 2,
      let width = Int(parts[0]), let height = Int(parts[1]) else {
    FileHandle.standardError.write(Data("usage: liveline-bench WIDTHxHEIGHT [FRAMES] [BITRATE_KBPS]\n       liveline-bench beauty FILE [STRENGTH]\n".utf8))
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

    // The whole pipeline, two threads, as `liveline host` runs it (nothing dropped).
    let pipelineSource = try TestPatternSource(width: width, height: height, fps: 30, realTime: false)
    let pipeline = HosterPipeline(source: pipelineSource, filters: FilterChain(),
                                  encoder: try H264Encoder(config: config), dropPolicy: .block)
    let start = Clock.monotonicMicros()
    try pipeline.start(frameLimit: frameCount)
    try pipeline.wait()
    let seconds = Double(Clock.monotonicMicros() - start) / 1e6
    let stats = pipeline.stats
    let fps = Double(stats.encoded) / seconds
    print("  " + "pipeline test→x264".padding(toLength: 30, withPad: " ", startingAt: 0)
          + String(format: "%8.1f fps (%d frames in %.2f s, %d dropped)", fps, stats.encoded, seconds, stats.dropped))
    let ours = sourceMs + scaleMs
    print(String(format: "  own stages (source + scale) = %.1f%% of encode; with beauty %.1f%%",
                 100 * ours / encodeMs, 100 * (ours + beautyMs) / encodeMs))
    print("RESULT fps=\(String(format: "%.2f", fps)) source_ms=\(String(format: "%.3f", sourceMs)) "
          + "beauty_ms=\(String(format: "%.3f", beautyMs)) scale_ms=\(String(format: "%.3f", scaleMs)) "
          + "encode_ms=\(String(format: "%.3f", encodeMs))")
} catch {
    FileHandle.standardError.write(Data("liveline-bench: \(error)\n".utf8))
    exit(1)
}
