import Foundation
import LiveCapture
import LiveCore
import LiveTestSupport
import Testing
@testable import LiveLine

@Suite("The hoster kit's sound: audio-only mode, mute, the local level")
struct HosterAudioKitTests {
    @Test("livingMediaMode .audio: only the audio thread runs; levels every showTime, none while muted, back after")
    func audioOnlyMuteAndLevels() throws {
        var options = Hoster.Options()
        options.livingMediaMode = .audio
        options.configuration.audioLevelIntervalMilliseconds = 100
        let hoster = try Hoster(options: options)
        let levels = Locked<[(time: Date, level: Int, showTime: Int)]>([])
        hoster.onEvent = { event in
            if case .localAudioActive(let level, let showTime) = event { levels.update { $0.append((Date(), level, showTime)) } }
        }
        try hoster.startPush(url: nil, audioLimit: MediaTime(milliseconds: 1800))
        #expect(hoster.audioSourceName == "tone 440 Hz")
        Thread.sleep(forTimeInterval: 0.6)
        let muted = Date()
        hoster.setLocalAudioEnable(false)
        #expect(!hoster.isLocalAudioEnabled)
        Thread.sleep(forTimeInterval: 0.5)
        let unmuted = Date()
        hoster.setLocalAudioEnable(true)
        #expect(try hoster.wait(seconds: 5))

        let stats = hoster.pipelineStats
        #expect(stats.captured == 0 && stats.encoded == 0, "video ran: \(stats)")
        #expect((170...181).contains(stats.audioFramesCaptured), "\(stats.audioFramesCaptured) blocks of 10 ms")
        #expect(stats.audioFramesEncoded >= 80 && stats.audioBytes > 10_000, "\(stats)")
        let seen = levels.value
        // −12 dBFS peak tone: RMS −15 dBFS reads 75.
        #expect(seen.allSatisfy { (70...80).contains($0.level) && $0.showTime == 100 }, "\(seen.map(\.level))")
        let before = seen.filter { $0.time < muted }
        #expect(before.count >= 4, "\(before.count) levels in 0.6 s")
        #expect(zip(before, before.dropFirst()).allSatisfy { $1.time.timeIntervalSince($0.time) > 0.07 }, "not throttled")
        #expect(!seen.contains { $0.time > muted.addingTimeInterval(0.05) && $0.time < unmuted }, "levels while muted")
        #expect(seen.contains { $0.time > unmuted }, "no level after unmute")
    }

    @Test("the audio stage sees every block before the encoder; the video source can be switched while the sound goes on")
    func audioStageAndSwitch() throws {
        var configuration = HosterConfiguration()
        (configuration.width, configuration.height, configuration.fps) = (160, 120, 30)
        let pipeline = try HosterPipeline(configuration: configuration)
        let blocks = Locked(0)
        pipeline.setAudioStage { frame in
            blocks.update { $0 += 1 }
            var silent = frame
            for index in silent.samples.indices { silent.samples[index] = 0 }
            return silent
        }
        let levels = Locked<[Int]>([])
        pipeline.onAudioLevel(every: 50) { level in levels.update { $0.append(level) } }
        try pipeline.start(frameLimit: 30)
        Thread.sleep(forTimeInterval: 0.4)
        pipeline.switchSource(to: try SourceSpec(parsing: "color:blue").makeSource(width: 160, height: 120, fps: 30))
        try pipeline.wait()
        let stats = pipeline.stats
        #expect(stats.encoded == 30)
        #expect(blocks.value == stats.audioFramesCaptured && stats.audioFramesCaptured >= 90, "\(blocks.value) \(stats)")
        // Post-stage: the stage's silence is what is measured.
        #expect(!levels.value.isEmpty && levels.value.allSatisfy { $0 == 0 }, "\(levels.value)")
    }
}
