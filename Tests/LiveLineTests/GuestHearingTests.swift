import Foundation
import LiveCore
import LiveRTMP
import LiveTestSupport
import Testing
@testable import LiveLine

/// A co-host's guest pipeline hears its hear stream instead of the program's sound while
/// co-hosting, and the program again after.
@Suite("Guest pipeline: the hear stream", .serialized)
struct GuestHearingTests {
    @Test("startHearing: onAudio and the figures come from the hear stream (1100 Hz), not the program (440 Hz); stopHearing: the program again")
    func switchesWhatIsHeard() throws {
        let nginx = try Peers.NginxRTMP()
        defer { nginx.stop() }
        let streams = try [("program", 440), ("hear", 1100)].map { name, hertz in
            try Peers.Background("/usr/bin/ffmpeg", [
                "-nostdin", "-v", "error", "-re", "-f", "lavfi", "-i", "sine=frequency=\(hertz):sample_rate=48000", "-t", "12",
                "-ac", "2", "-c:a", "aac", "-f", "flv", nginx.url(name),
            ])
        }
        defer { streams.forEach { $0.stop() } }
        Thread.sleep(forTimeInterval: 0.5)
        let pipeline = try GuestPipeline(configuration: GuestPipeline.Configuration(url: try RTMPURL(parsing: nginx.url("program"))))
        // Each frame heard, with the time it came and the share of each tone in it.
        let heard = Locked<[(time: Date, low: Double, high: Double)]>([])
        pipeline.onAudio = { frame in
            let samples = frame.channel(0)
            let low = ToneDetector(frequency: 440, sampleRate: frame.sampleRate).share(in: samples)
            let high = ToneDetector(frequency: 1100, sampleRate: frame.sampleRate).share(in: samples)
            heard.update { $0.append((Date(), low, high)) }
        }
        try pipeline.start()
        defer {
            pipeline.stop()
            _ = try? pipeline.wait()
        }
        #expect(eventually(5) { heard.value.count >= 20 })
        pipeline.startHearing(url: try RTMPURL(parsing: nginx.url("hear")))
        #expect(pipeline.isHearing)
        let hearing = Date()
        Thread.sleep(forTimeInterval: 2)
        pipeline.stopHearing()
        #expect(!pipeline.isHearing)
        let stopped = Date()
        Thread.sleep(forTimeInterval: 1)
        let all = heard.value
        let before = all.filter { $0.time < hearing }
        let during = all.filter { $0.time > hearing.addingTimeInterval(1) && $0.time < stopped }
        let after = all.filter { $0.time > stopped.addingTimeInterval(0.3) }
        // A frame is one AAC frame (21 ms): a tone fills nearly all of it.
        #expect(!before.isEmpty && before.dropFirst(2).allSatisfy { $0.low > 0.5 && $0.high < 0.05 })
        #expect(during.count >= 20 && during.allSatisfy { $0.high > 0.5 && $0.low < 0.05 }, "\(during.count) frames while hearing")
        #expect(after.count >= 10 && after.allSatisfy { $0.low > 0.5 && $0.high < 0.05 }, "\(after.count) frames after")
        // The figures count a frame just before the hook sees it: end the run, then compare.
        pipeline.stop()
        _ = try? pipeline.wait()
        #expect(pipeline.stats.audioFrames == heard.value.count)
    }
}
