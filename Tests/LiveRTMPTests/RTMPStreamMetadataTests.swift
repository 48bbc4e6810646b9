import Testing
@testable import LiveRTMP

@Suite("RTMPStreamMetadata: the publisher's numbers validated before anyone converts them")
struct RTMPStreamMetadataTests {
    static let hostile: [Double] = [.nan, .infinity, -.infinity, 1e300, -1, 0, -0.0, .signalingNaN]

    @Test("NaN, infinities, huge, zero and negative numbers read as absent", arguments: hostile)
    func hostileNumbers(value: Double) {
        let metadata = RTMPStreamMetadata(["width": .number(value), "height": .number(value), "framerate": .number(value),
                                           "videodatarate": .number(value), "audiodatarate": .number(value)])
        #expect(metadata.width == nil)
        #expect(metadata.height == nil)
        #expect(metadata.framerate == nil)
        #expect(metadata.videoDataRate == nil)
        #expect(metadata.audioDataRate == nil)
        // What consumers do with them (GuestPipeline, the relay's stats) no longer traps.
        #expect(Int((metadata.framerate ?? 30).rounded()) == 30)
    }

    @Test("real values pass, up to the bounds")
    func realValues() {
        let metadata = RTMPStreamMetadata(width: 1920, height: 1080, framerate: 29.97, videoDataRateKbps: 6000)
        #expect(metadata.width == 1920)
        #expect(metadata.height == 1080)
        #expect(metadata.framerate == 29.97)
        #expect(metadata.videoDataRate == 6000)
        let bounds = RTMPStreamMetadata(["width": .number(16384), "height": .number(16385), "framerate": .number(1000)])
        #expect(bounds.width == 16384)
        #expect(bounds.height == nil)
        #expect(bounds.framerate == 1000)
        #expect(RTMPStreamMetadata(["width": "1280"]).width == nil)
    }
}
