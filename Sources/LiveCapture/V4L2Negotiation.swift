import Foundation

/// One way a device can deliver frames: a pixel format at one size, with the frame
/// rates it offers there (empty when the driver does not say).
public struct V4L2ModeOffer: Equatable, Sendable {
    public var pixelFormat: V4L2PixelFormat
    public var width: Int
    public var height: Int
    public var frameRates: [Double]
    /// Converted in software by libv4l2 (costs CPU, so a native format of the same size wins).
    public var emulated: Bool

    public init(pixelFormat: V4L2PixelFormat, width: Int, height: Int, frameRates: [Double], emulated: Bool = false) {
        self.pixelFormat = pixelFormat
        self.width = width
        self.height = height
        self.frameRates = frameRates
        self.emulated = emulated
    }
}

/// The mode chosen for a camera.
public struct V4L2Mode: Equatable, Sendable, CustomStringConvertible {
    public var pixelFormat: V4L2PixelFormat
    public var width: Int
    public var height: Int
    public var fps: Double

    public init(pixelFormat: V4L2PixelFormat, width: Int, height: Int, fps: Double) {
        self.pixelFormat = pixelFormat
        self.width = width
        self.height = height
        self.fps = fps
    }

    public var description: String { "\(pixelFormat) \(width)x\(height)@\(fps.formatted())" }
}

private extension Double {
    func formatted() -> String { self == rounded() ? String(Int(self)) : String(format: "%.2f", self) }
}

/// Chooses the camera mode nearest to what was asked, as a pure function of the offers.
///
/// In order: the size nearest by area and aspect ratio (a size smaller than asked
/// costs a little more than a larger one, since upscaling loses detail), then the
/// nearest frame rate (a lower one costs a little more), then the format: native
/// before libv4l2-emulated, and YUYV, NV12, I420 in that order. Formats the camera
/// cannot convert (MJPEG and others) are never chosen.
public enum V4L2Negotiation {
    public static func choose(width: Int, height: Int, fps: Int, offers: [V4L2ModeOffer]) -> V4L2Mode? {
        var best: (cost: (Double, Double, Int), mode: V4L2Mode)?
        for offer in offers {
            guard let rank = formatRank(offer), offer.width > 0, offer.height > 0 else { continue }
            let (rate, rateCost) = nearestRate(fps, in: offer.frameRates)
            let cost = (sizeCost(offer.width, offer.height, width, height), rateCost, rank)
            if best == nil || cost < best!.cost {
                best = (cost, V4L2Mode(pixelFormat: offer.pixelFormat, width: offer.width, height: offer.height, fps: rate))
            }
        }
        return best?.mode
    }

    /// 0 for the exact size; grows with the log of the area and aspect ratios.
    static func sizeCost(_ w: Int, _ h: Int, _ wantW: Int, _ wantH: Int) -> Double {
        let area = Double(w * h), wantArea = Double(max(1, wantW * wantH))
        let aspect = Double(w) / Double(h), wantAspect = Double(max(1, wantW)) / Double(max(1, wantH))
        let areaCost = abs(log(area / wantArea)) * (area < wantArea ? 1.25 : 1)
        let cost = areaCost + 2 * abs(log(aspect / wantAspect))
        // Rounded so that sizes differing by float noise still tie on the later criteria.
        return (cost * 1e9).rounded() / 1e9
    }

    static func nearestRate(_ want: Int, in rates: [Double]) -> (rate: Double, cost: Double) {
        let target = Double(max(1, want))
        var best = (rate: target, cost: Double.infinity)
        for rate in rates where rate > 0 {
            let cost = abs(log(rate / target)) * (rate < target ? 1.5 : 1)
            if cost < best.cost || (cost == best.cost && rate > best.rate) { best = (rate, cost) }
        }
        return best.cost.isFinite ? best : (target, 0)
    }

    /// Lower is better; nil for formats the camera cannot turn into I420.
    static func formatRank(_ offer: V4L2ModeOffer) -> Int? {
        guard let position = V4L2PixelFormat.convertible.firstIndex(of: offer.pixelFormat) else { return nil }
        return position + (offer.emulated ? V4L2PixelFormat.convertible.count : 0)
    }
}
