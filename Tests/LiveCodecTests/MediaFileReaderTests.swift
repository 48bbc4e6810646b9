import Foundation
import LiveCore
import Testing
@testable import LiveCodec

@Suite struct MediaFileReaderTests {
    @Test(arguments: ["flv", "mp4"])
    func readsBackARecording(container: String) throws {
        let directory = try TestPictures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("clip.\(container)").path
        let sources = try MediaRecorderTests.record(to: path)
        let reader = try MediaFileReader(path: path)
        #expect(reader.width == 320 && reader.height == 240)
        #expect(abs(reader.fps - 30) < 0.01)
        var frames: [VideoFrame] = []
        var psnr = 0.0
        while let frame = try reader.nextFrame() {
            #expect(frame.width == 320 && frame.height == 240)
            psnr += TestPictures.psnrY(sources[frames.count], frame)
            let copy = VideoFrame(width: 320, height: 240)
            copy.copy(from: frame)
            frames.append(copy)
        }
        #expect(frames.count == 60)
        #expect(psnr / Double(frames.count) > 30)
        #expect(frames.first?.pts == .zero)
        let last = try #require(frames.last?.pts.micros)
        #expect(abs(last - 59 * 1_000_000 / 30) <= 1000)

        try reader.rewind()
        var again = 0
        while try reader.nextFrame() != nil { again += 1 }
        #expect(again == 60)
    }

    @Test func readsAPNGAsOneFrame() throws {
        let directory = try TestPictures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("still.png").path
        try ImageFile.writePNG(RGBAImage(width: 90, height: 50, r: 255, g: 255, b: 255, a: 255), path: path)
        let reader = try MediaFileReader(path: path)
        #expect(reader.width == 90 && reader.height == 50)
        let frame = try #require(try reader.nextFrame())
        #expect(frame.pixel(x: 45, y: 25) == .white)
        #expect(try reader.nextFrame() == nil)
        try reader.rewind()
        #expect(try reader.nextFrame() != nil)
    }
}
