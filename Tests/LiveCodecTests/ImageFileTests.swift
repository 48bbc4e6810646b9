import Foundation
import LiveCore
import Testing
@testable import LiveCodec

@Suite struct ImageFileTests {
    @Test func pngWithVariedAlphaRoundTripsExactly() throws {
        let directory = try TestPictures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var image = RGBAImage(width: 37, height: 23, r: 0, g: 0, b: 0, a: 0)
        for y in 0..<23 {
            for x in 0..<37 {
                image[x, y] = (UInt8(x * 7), UInt8(y * 11), UInt8((x * y) & 255), UInt8((x * 37 + y * 3) & 255))
            }
        }
        let path = directory.appendingPathComponent("alpha.png").path
        try ImageFile.writePNG(image, path: path)
        let back = try ImageFile.read(path: path)
        #expect(back == image)
    }

    @Test func readsTheRepositoryLogo() throws {
        let logo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("media/logo.png").path
        try #require(FileManager.default.fileExists(atPath: logo), "media/logo.png is part of the repository")
        let image = try ImageFile.read(path: logo)
        #expect(image.width > 0 && image.height > 0)
        // A logo with alpha has both see-through and opaque pixels.
        let alphas = Set(stride(from: 3, to: image.pixels.count, by: 4).map { image.pixels[$0] })
        #expect(alphas.count > 1)
    }

    @Test func readsJPEG() throws {
        let directory = try TestPictures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let png = directory.appendingPathComponent("flat.png").path
        let jpeg = directory.appendingPathComponent("flat.jpg").path
        try ImageFile.writePNG(RGBAImage(width: 64, height: 32, r: 200, g: 100, b: 50, a: 255), path: png)
        let ffmpeg = Process()
        ffmpeg.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
        ffmpeg.arguments = ["-v", "error", "-y", "-i", png, "-q:v", "2", jpeg]
        try ffmpeg.run()
        ffmpeg.waitUntilExit()
        #expect(ffmpeg.terminationStatus == 0)
        let image = try ImageFile.read(path: jpeg)
        #expect(image.width == 64 && image.height == 32)
        let centre = image[32, 16]
        #expect(abs(Int(centre.r) - 200) <= 6 && abs(Int(centre.g) - 100) <= 6 && abs(Int(centre.b) - 50) <= 6)
        #expect(centre.a == 255)
    }

    @Test func errorsNameTheFile() throws {
        let error = try #require(throws: FFmpegError.self) { try ImageFile.read(path: "/nonexistent/logo.png") }
        #expect(error.call.contains("/nonexistent/logo.png") && error.call.contains("avformat_open_input"))
    }
}
