import Testing
@testable import LiveLine

@Suite("HosterConfiguration: where the logo goes")
struct HosterConfigurationTests {
    static func configuration(_ width: Int, _ height: Int, at position: (x: Int, y: Int)? = nil) -> HosterConfiguration {
        var c = HosterConfiguration()
        (c.width, c.height) = (width, height)
        c.logoPosition = position
        return c
    }

    @Test("by default top right, 16 px in; less when the logo is nearly as large as the picture")
    func defaultPlacement() throws {
        let small = try Self.configuration(1280, 720).logoPlacement(logoWidth: 240, logoHeight: 96)
        #expect(small.x == 1024 && small.y == 16, "\(small)")
        let tall = try Self.configuration(320, 180).logoPlacement(logoWidth: 100, logoHeight: 170)
        #expect(tall.x == 204 && tall.y == 10, "\(tall)")
        let whole = try Self.configuration(320, 180).logoPlacement(logoWidth: 320, logoHeight: 180)
        #expect(whole.x == 0 && whole.y == 0, "\(whole)")
    }

    @Test("an asked position is kept when the logo lies wholly on the picture")
    func askedPosition() throws {
        let placed = try Self.configuration(320, 180, at: (80, 84)).logoPlacement(logoWidth: 240, logoHeight: 96)
        #expect(placed.x == 80 && placed.y == 84, "\(placed)")
    }

    @Test("a logo larger than the picture, or reaching past it, is refused with what fits")
    func refused() {
        #expect(throws: HosterConfiguration.LogoError.larger(logoWidth: 2000, logoHeight: 2000, width: 1280, height: 720)) {
            try Self.configuration(1280, 720).logoPlacement(logoWidth: 2000, logoHeight: 2000)
        }
        let past = HosterConfiguration.LogoError.offPicture(x: 5000, y: 5000, logoWidth: 240, logoHeight: 96, width: 1280, height: 720)
        #expect(throws: past) {
            try Self.configuration(1280, 720, at: (5000, 5000)).logoPlacement(logoWidth: 240, logoHeight: 96)
        }
        #expect(past.description.contains("place it at most at 1040,624"), "\(past)")
        #expect(throws: HosterConfiguration.LogoError.self) {
            try Self.configuration(320, 180, at: (81, 0)).logoPlacement(logoWidth: 240, logoHeight: 96)
        }
    }
}
