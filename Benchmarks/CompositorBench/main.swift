// Composes a 1280x720 mix of a 1280x720 host and three 640x360 co-hosts (full template,
// tiles 320x180 with 2-pixel borders) and reports milliseconds per composed frame
// (DESIGN.md §7: ≤ 1.5 ms). Benchmarks/compositor.sh runs it beside ffmpeg.
//
// Usage: compositor-bench [frames] [warmup]
import Foundation
import LiveCore
import LiveMix

let arguments = CommandLine.arguments
let frames = arguments.count > 1 ? Int(arguments[1]) ?? 2000 : 2000
let warmup = arguments.count > 2 ? Int(arguments[2]) ?? 50 : 50

/// A moving diagonal gradient, so every frame differs and no input is flat.
func pattern(_ frame: VideoFrame, seed: Int) {
    for p in 0..<3 {
        let base = frame.plane(p), s = frame.stride(p)
        for y in 0..<frame.planeHeight(p) {
            let row = base + y * s
            for x in 0..<frame.planeWidth(p) {
                row[x] = UInt8(truncatingIfNeeded: (x &* 3 &+ y &* 5 &+ seed &* (p + 1)) & 0xFF)
            }
        }
    }
}

// A few distinct frames per input, cycled, as a camera and decoders would deliver.
let variants = 4
let hosts = (0..<variants).map { i -> VideoFrame in
    let f = VideoFrame(width: 1280, height: 720); pattern(f, seed: i * 7); return f
}
let cohosts = (0..<3).map { c in
    (0..<variants).map { i -> VideoFrame in
        let f = VideoFrame(width: 640, height: 360); pattern(f, seed: c * 31 + i * 3); return f
    }
}

let options = MixOptions(hor: .right, ver: .bottom, dir: .ver, horPad: 16, verPad: 16, borderWidth: 2, gap: 8)
let mix = try Compositor(width: 1280, height: 720, template: .full, options: options, cohosts: 3)
print("layout:\n" + mix.currentLayout.json())

var checksum = 0
@MainActor func run(_ count: Int) {
    for n in 0..<count {
        mix.update(participant: 0, frame: hosts[n % variants])
        for c in 0..<3 { mix.update(participant: c + 1, frame: cohosts[c][(n + c) % variants]) }
        let out = mix.compose()
        checksum &+= Int(out.y[(n % 720) * out.stride(0) + n % 1280])
    }
}

run(warmup)
let start = Clock.monotonicMicros()
run(frames)
let elapsed = Double(Clock.monotonicMicros() - start) / 1000
let perFrame = elapsed / Double(frames)
print(String(format: "compositor: %d frames in %.1f ms: %.3f ms/frame (%.0f fps) [checksum %d]",
             frames, elapsed, perFrame, 1000 / perFrame, checksum))
print(String(format: "RESULT ms_per_frame=%.4f", perFrame))
