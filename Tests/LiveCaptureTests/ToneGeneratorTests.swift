import Foundation
import LiveCore
import Testing
@testable import LiveCapture

@Suite("Test tone with marker beeps")
struct ToneGeneratorTests {
    @Test("the tone is its frequency, a 50 ms marker starts every second at the capture clock's whole seconds")
    func markersOnWholeSeconds() {
        let tone = ToneGenerator(frequency: 440, sampleRate: 48000, channelCount: 2)
        let marker = ToneDetector(frequency: ToneGenerator.markerFrequency, sampleRate: 48000)
        let steady = ToneDetector(frequency: 440, sampleRate: 48000)
        // 1.5 s in 10 ms blocks: find the blocks where the marker sounds.
        var markerBlocks: [Int] = []
        for block in 0..<150 {
            let frame = tone.frame(start: Int64(block * 480), count: 480)
            #expect(frame.pts == MediaTime(milliseconds: Int64(block * 10)))
            #expect(Array(frame.channel(0)) == Array(frame.channel(1)))
            if marker.share(in: frame.channel(0)) > 0.9 {
                markerBlocks.append(block)
            } else {
                #expect(steady.share(in: frame.channel(0)) > 0.9, "block \(block)")
            }
        }
        #expect(markerBlocks == [0, 1, 2, 3, 4, 100, 101, 102, 103, 104])
        #expect(tone.isMarker(48000) && tone.isMarker(48000 + 2399) && !tone.isMarker(48000 + 2400))
    }

    @Test("blocks of any size give the same samples; no markers when they are off")
    func blocksLineUp() {
        let tone = ToneGenerator(frequency: 1000, channelCount: 1)
        let whole = tone.frame(start: 47000, count: 3000).samples
        let parts = tone.frame(start: 47000, count: 1234).samples + tone.frame(start: 48234, count: 1766).samples
        #expect(whole == parts)
        let plain = ToneGenerator(frequency: 1000, channelCount: 1, markers: false)
        #expect(!plain.isMarker(0))
        #expect(ToneDetector(frequency: 1000, sampleRate: 48000).share(in: plain.frame(start: 0, count: 2400).samples) > 0.95)
    }
}
