import LiveCore

/// A logo converted to planes once, with its even-aligned position. Immutable, so the
/// capture thread can use it while another thread sets a new one.
final class PlacedLogo: Sendable {
    let x: Int
    let y: Int
    let width: Int
    let height: Int
    let luma: [UInt8]
    let alpha: [UInt8]
    let chromaWidth: Int
    let chromaHeight: Int
    let u: [UInt8]
    let v: [UInt8]
    let blockAlpha: [UInt8]

    init?(_ image: RGBAImage, x: Int, y: Int) {
        guard image.width > 0, image.height > 0 else { return nil }
        self.x = x & ~1
        self.y = y & ~1
        width = image.width
        height = image.height
        chromaWidth = (width + 1) / 2
        chromaHeight = (height + 1) / 2
        var luma = [UInt8](repeating: 0, count: width * height)
        var alpha = [UInt8](repeating: 0, count: width * height)
        var u = [UInt8](repeating: 128, count: chromaWidth * chromaHeight)
        var v = [UInt8](repeating: 128, count: chromaWidth * chromaHeight)
        var blockAlpha = [UInt8](repeating: 0, count: chromaWidth * chromaHeight)
        for py in 0..<height {
            for px in 0..<width {
                let p = image[px, py]
                luma[py * width + px] = YUVColor(r: p.r, g: p.g, b: p.b).y
                alpha[py * width + px] = p.a
            }
        }
        for by in 0..<chromaHeight {
            for bx in 0..<chromaWidth {
                var alphaSum = 0, uSum = 0, vSum = 0
                for py in (2 * by)..<min(2 * by + 2, height) {
                    for px in (2 * bx)..<min(2 * bx + 2, width) {
                        let p = image[px, py]
                        let c = YUVColor(r: p.r, g: p.g, b: p.b)
                        let a = Int(p.a)
                        alphaSum += a
                        uSum += a * Int(c.u)
                        vSum += a * Int(c.v)
                    }
                }
                let i = by * chromaWidth + bx
                blockAlpha[i] = UInt8((alphaSum + 2) / 4)
                if alphaSum > 0 {
                    u[i] = UInt8((uSum + alphaSum / 2) / alphaSum)
                    v[i] = UInt8((vSum + alphaSum / 2) / alphaSum)
                }
            }
        }
        self.luma = luma
        self.alpha = alpha
        self.u = u
        self.v = v
        self.blockAlpha = blockAlpha
    }

    private init(moving other: PlacedLogo, x: Int, y: Int) {
        self.x = x & ~1
        self.y = y & ~1
        width = other.width
        height = other.height
        chromaWidth = other.chromaWidth
        chromaHeight = other.chromaHeight
        luma = other.luma
        alpha = other.alpha
        u = other.u
        v = other.v
        blockAlpha = other.blockAlpha
    }

    func moved(x: Int, y: Int) -> PlacedLogo { PlacedLogo(moving: self, x: x, y: y) }
}
