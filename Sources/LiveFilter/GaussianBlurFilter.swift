import Foundation
import LiveCore

/// A Gaussian blur of the whole picture, the anyRTC SDK's `ARCameraFilterMode.gaussianBlur`.
///
/// Separable (a horizontal then a vertical pass) on all three planes, edges clamped
/// (the border sample repeats outward). `sigma` is in luma pixels; the half-size chroma
/// planes use sigma/2 so colour blurs as far as brightness. Taps reach 3·sigma and are
/// 14-bit integers summing to exactly 2^14; the passes accumulate in `Float`, where
/// every partial sum of a flat picture is an exactly representable integer times a
/// power of two, so a flat picture stays exactly flat. Sigma 0 returns the frame untouched.
///
/// Works in place. `process` runs on the capture thread only; `sigma` may be set from
/// any thread and applies from the next frame.
public final class GaussianBlurFilter: VideoFilter, @unchecked Sendable {
    // @unchecked: the scratch rows are touched only on the capture thread (`process`); sigma is in a Mutex.
    /// The largest sigma accepted; larger values are clamped.
    public static let maxSigma = 32.0

    public let name = "blur"
    private let setting: LockedValue<Double>

    // Capture-thread scratch, grown when the frame size or sigma needs more.
    private var kernelSigma = -1.0
    private var lumaKernel: [Int32] = []
    private var chromaKernel: [Int32] = []
    private var padded: [Float] = []
    private var rows: [Float] = []
    private var accumulator: [Float] = []

    public init(sigma: Double = 4.0) {
        setting = LockedValue(GaussianBlurFilter.clamp(sigma))
    }

    /// The blur's standard deviation in luma pixels (0…`maxSigma`; clamped).
    public var sigma: Double {
        get { setting.load() }
        set { setting.store(GaussianBlurFilter.clamp(newValue)) }
    }

    static func clamp(_ sigma: Double) -> Double {
        guard !sigma.isNaN else { return 0 }
        return min(max(sigma, 0), maxSigma)
    }

    /// Integer taps (sum 16384) of a Gaussian of `sigma`, radius ceil(3·sigma): index r is the centre.
    static func kernel(sigma: Double) -> [Int32] {
        guard sigma >= 0.25 else { return [16384] }
        let radius = Int((3 * sigma).rounded(.up))
        let weights = (-radius...radius).map { x in
            let d = Double(x)
            return exp(-d * d / (2 * sigma * sigma))
        }
        let total = weights.reduce(0, +)
        var taps = weights.map { Int32(($0 / total * 16384).rounded()) }
        // Put the rounding remainder on the centre tap so the taps sum to exactly 1.
        taps[radius] += 16384 - taps.reduce(0, +)
        return taps
    }

    public func process(_ frame: VideoFrame) -> VideoFrame {
        let sigma = setting.load()
        guard sigma >= 0.25 else { return frame }
        if sigma != kernelSigma {
            kernelSigma = sigma
            lumaKernel = GaussianBlurFilter.kernel(sigma: sigma)
            chromaKernel = GaussianBlurFilter.kernel(sigma: sigma / 2)
        }
        let radius = lumaKernel.count / 2
        if padded.count < frame.width + 2 * radius { padded = [Float](repeating: 0, count: frame.width + 2 * radius) }
        if rows.count < frame.width * frame.height { rows = [Float](repeating: 0, count: frame.width * frame.height) }
        if accumulator.count < frame.width { accumulator = [Float](repeating: 0, count: frame.width) }
        for p in 0..<3 {
            let taps = p == 0 ? lumaKernel : chromaKernel
            guard taps.count > 1 else { continue }
            blur(frame.plane(p), stride: frame.stride(p), width: frame.planeWidth(p),
                 height: frame.planeHeight(p), taps: taps)
        }
        return frame
    }

    private func blur(_ base: UnsafeMutablePointer<UInt8>, stride: Int, width: Int, height: Int, taps: [Int32]) {
        let r = taps.count / 2
        taps.withUnsafeBufferPointer { k in
        padded.withUnsafeMutableBufferPointer { pad in
        rows.withUnsafeMutableBufferPointer { tmp in
        accumulator.withUnsafeMutableBufferPointer { acc in
            let pad = pad.baseAddress!, tmp = tmp.baseAddress!, acc = acc.baseAddress!
            let k = k.baseAddress!
            // Horizontal pass (tap loop outside, so the sample loop vectorises): 2^14 scale.
            // Neighbours are read through shifted row pointers, so the checked build has no
            // index arithmetic (and no trap) inside the sample loops.
            let padCentre = pad + r
            for y in 0..<height {
                let src = base + y * stride
                for x in 0..<width { padCentre[x] = Float(src[x]) }
                pad.update(repeating: Float(src[0]), count: r)
                (padCentre + width).update(repeating: Float(src[width - 1]), count: r)
                let out = tmp + y * width
                let centre = Float(k[r])
                for x in 0..<width { out[x] = centre * padCentre[x] }
                for i in 1...r {
                    let w = Float(k[r + i])
                    let left = padCentre - i, right = padCentre + i
                    for x in 0..<width { out[x] += w * (left[x] + right[x]) }
                }
            }
            // Vertical pass back into the plane: 2^28 scale.
            for y in 0..<height {
                acc.update(repeating: 0, count: width)
                for i in 0..<(2 * r + 1) {
                    let row = tmp + min(max(y - r + i, 0), height - 1) * width
                    let w = Float(k[i])
                    for x in 0..<width { acc[x] += w * row[x] }
                }
                let dst = base + y * stride
                // Taps and samples are ≥ 0, so the value is 0…255 after `min`.
                for x in 0..<width {
                    dst[x] = UInt8(truncatingIfNeeded: min(acc[x] * 0x1p-28, 255).nearestInt32)
                }
            }
        }}}}
    }
}
