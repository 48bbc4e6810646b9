import Foundation
import LiveCore

/// Synthetic pictures and measurements for the codec tests.
enum TestPictures {
    /// A moving picture with smooth gradients, a bouncing box and fine stripes: detailed
    /// enough to exercise the encoder, smooth enough to compress well.
    static func drawMoving(_ frame: VideoFrame, index: Int) {
        let w = frame.width, h = frame.height
        let y = frame.y, ys = frame.stride(0)
        let boxX = (index * 12) % max(1, w - 160), boxY = (index * 7) % max(1, h - 120)
        for row in 0..<h {
            let line = y + row * ys
            for col in 0..<w {
                var value = 40 + ((col + index * 4) & 255) / 2 + (row * 60) / h
                // Fine moving diagonal stripes in the lower half: detail that costs bits.
                if row > h / 2 { value += ((col + row + index * 3) % 7) * 4 }
                if col >= boxX && col < boxX + 160 && row >= boxY && row < boxY + 120 {
                    value = ((col / 8 + row / 8) & 1) == 0 ? 220 : 60
                }
                line[col] = UInt8(truncatingIfNeeded: min(235, max(16, value)))
            }
        }
        let cw = w / 2, ch = h / 2
        for row in 0..<ch {
            let u = frame.u + row * frame.stride(1), v = frame.v + row * frame.stride(2)
            for col in 0..<cw {
                u[col] = UInt8(truncatingIfNeeded: 96 + (col + index) % 64)
                v[col] = UInt8(truncatingIfNeeded: 160 - (row + index) % 64)
            }
        }
    }

    /// Deterministic noise that changes every frame: content no bitrate is enough for.
    static func drawNoise(_ frame: VideoFrame, index: Int) {
        var state = UInt32(truncatingIfNeeded: index &* 2_654_435_761 &+ 12345)
        for p in 0..<3 {
            let base = frame.plane(p), stride = frame.stride(p)
            for row in 0..<frame.planeHeight(p) {
                let line = base + row * stride
                for col in 0..<frame.planeWidth(p) {
                    state = state &* 1_664_525 &+ 1_013_904_223
                    line[col] = UInt8(truncatingIfNeeded: 16 + (state >> 24) % 220)
                }
            }
        }
    }

    /// Peak signal-to-noise ratio of the Y planes in dB (infinity when identical).
    static func psnrY(_ a: VideoFrame, _ b: VideoFrame) -> Double {
        var sum: Int64 = 0
        for row in 0..<a.height {
            let pa = a.y + row * a.stride(0), pb = b.y + row * b.stride(0)
            for col in 0..<a.width {
                let d = Int64(pa[col]) - Int64(pb[col])
                sum += d * d
            }
        }
        guard sum > 0 else { return .infinity }
        let mse = Double(sum) / Double(a.width * a.height)
        return 10 * log10(255 * 255 / mse)
    }

    /// A fresh temporary directory, removed by the caller.
    static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("livecodec-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}
