import Foundation
import LiveCore

/// A small deterministic generator (SplitMix64) so noisy test frames are the same on every run.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A standard normal sample (Box–Muller).
    mutating func gaussian() -> Double {
        let u1 = Double.random(in: Double.ulpOfOne..<1, using: &self)
        let u2 = Double.random(in: 0..<1, using: &self)
        return (-2 * log(u1)).squareRoot() * cos(2 * Double.pi * u2)
    }
}

enum FrameFixtures {
    /// A frame whose every sample is random.
    static func random(width: Int, height: Int, seed: UInt64) -> VideoFrame {
        var rng = SeededGenerator(seed: seed)
        let frame = VideoFrame(width: width, height: height)
        for p in 0..<3 {
            for y in 0..<frame.planeHeight(p) {
                let row = frame.plane(p) + y * frame.stride(p)
                for x in 0..<frame.planeWidth(p) { row[x] = UInt8.random(in: 0...255, using: &rng) }
            }
        }
        return frame
    }

    /// A copy of `frame` (pixels and timing).
    static func copy(_ frame: VideoFrame) -> VideoFrame {
        let copy = VideoFrame(width: frame.width, height: frame.height)
        copy.copy(from: frame)
        return copy
    }

    /// Whether every visible sample of every plane is equal.
    static func samplesEqual(_ a: VideoFrame, _ b: VideoFrame) -> Bool {
        guard a.width == b.width, a.height == b.height else { return false }
        for p in 0..<3 {
            for y in 0..<a.planeHeight(p) {
                for x in 0..<a.planeWidth(p) where a.sample(plane: p, x: x, y: y) != b.sample(plane: p, x: x, y: y) {
                    return false
                }
            }
        }
        return true
    }

    /// Fills a rectangle of the picture (even coordinates and sizes) with a colour.
    static func fill(_ frame: VideoFrame, x: Int, y: Int, width: Int, height: Int, color: YUVColor) {
        for row in y..<(y + height) {
            (frame.y + row * frame.stride(0) + x).update(repeating: color.y, count: width)
        }
        for row in (y / 2)..<((y + height) / 2) {
            (frame.u + row * frame.stride(1) + x / 2).update(repeating: color.u, count: width / 2)
            (frame.v + row * frame.stride(2) + x / 2).update(repeating: color.v, count: width / 2)
        }
    }

    /// Adds Gaussian noise of standard deviation `sigma` to the luma plane (clamped to 0…255).
    static func addLumaNoise(_ frame: VideoFrame, sigma: Double, seed: UInt64) {
        var rng = SeededGenerator(seed: seed)
        for y in 0..<frame.height {
            let row = frame.y + y * frame.stride(0)
            for x in 0..<frame.width {
                let value = Double(row[x]) + sigma * rng.gaussian()
                row[x] = UInt8(min(max(value.rounded(), 0), 255))
            }
        }
    }

    /// Mean and standard deviation of plane `p` over a rectangle of that plane.
    static func statistics(_ frame: VideoFrame, plane p: Int = 0, x: Range<Int>, y: Range<Int>)
        -> (mean: Double, deviation: Double)
    {
        var sum = 0.0, squares = 0.0
        for row in y {
            for column in x {
                let v = Double(frame.sample(plane: p, x: column, y: row))
                sum += v
                squares += v * v
            }
        }
        let n = Double(x.count * y.count)
        let mean = sum / n
        return (mean, max(squares / n - mean * mean, 0).squareRoot())
    }
}
