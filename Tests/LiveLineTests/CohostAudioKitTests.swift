import LiveSignal
import Foundation
import LiveCore
import LiveLine
import LiveRTMP
import LiveServer
import LiveTestSupport
import Testing

/// The kits on an audio line through an in-process relay: the co-host hears the hoster
/// and not itself, the hoster reports the co-host's level, which its mute silences.
@Suite("Hoster and Guest kits on an audio line", .serialized)
struct CohostAudioKitTests {
    @Test("an audio-mode hoster kit and a guest kit: audioLineOpened/Closed, onAudio hears 440 Hz and not its own 1100 Hz, remoteAudioActive follows the co-host's mute, and a viewer in the room hears it")
    func audioLineKits() throws {
        var configuration = RelayServer.Configuration(rtmp: RTMPServer.Configuration(port: 0), httpPort: 0, loops: 2)
        configuration.line = LineLimits()
        let relay = try RelayServer(configuration: configuration)
        defer { relay.shutdown() }
        let program = try RTMPURL(parsing: "rtmp://127.0.0.1:\(relay.rtmpPort)/live/talk")
        let rtmp = LineServer.hosterPushURL(program)
        let server = LineServer(signalURL: "ws://127.0.0.1:\(relay.httpPort)/line", rtmp: rtmp)

        var options = Hoster.Options()
        options.livingMediaMode = .audio
        options.configuration.audioSource = "tone:440"
        options.configuration.audioLevelIntervalMilliseconds = 200
        let hoster = try Hoster(options: options)
        let hosterLog = LineEventLog()
        hoster.onLineEvent = { hosterLog.append($0) }
        try hoster.startPush(url: rtmp)
        defer { hoster.stopPush() }
        try hoster.createLine(server: server, liveId: "talk", userId: "host")
        #expect(hosterLog.wait { event -> LiveCode? in if case .lineResult(let code, _) = event { return code }; return nil } == .ok)

        var guestOptions = Guest.Options()
        guestOptions.cohost.audioSource = "tone:1100"
        let guest = Guest(options: guestOptions)
        let guestLog = LineEventLog()
        guest.onLineEvent = { guestLog.append($0) }
        // Each decoded frame heard: when, and its share of each tone.
        let heard = Locked<[(time: Date, low: Double, high: Double)]>([])
        guest.onAudio = { frame in
            let samples = frame.channel(0)
            heard.update {
                $0.append((Date(), ToneDetector(frequency: 440, sampleRate: frame.sampleRate).share(in: samples),
                           ToneDetector(frequency: 1100, sampleRate: frame.sampleRate).share(in: samples)))
            }
        }
        try guest.startPlay(url: program, sink: nil)
        defer { guest.stopPlay() }
        try guest.joinLine(server: server, liveId: "talk", userId: "g1")
        defer { guest.leaveLine() }
        #expect(guestLog.wait { event -> Bool? in if case .liveStart = event { return true }; return nil } == true)
        // A viewer in the room hears the co-host's level too (onRTCRemoteAudioActive).
        let viewer = Guest()
        let viewerLog = LineEventLog()
        viewer.onLineEvent = { viewerLog.append($0) }
        try viewer.joinLine(server: server, liveId: "talk", userId: "v1")
        defer { viewer.leaveLine() }
        #expect(viewerLog.wait { event -> Bool? in if case .liveStart = event { return true }; return nil } == true)
        guest.applyLine()
        let peerId = try #require(hosterLog.wait { event -> String? in if case .application(let peer, "g1", _) = event { return peer }; return nil })
        hoster.acceptLine(peerId: peerId)
        #expect(hosterLog.wait { event -> Bool? in if case .audioLineOpened(peerId, _, "g1", _) = event { return true }; return nil } == true)
        #expect(!hosterLog.all.contains { if case .cohostOpened = $0 { true } else { false } })

        // The co-host's voice reaches the hoster's mix: its level is reported with its user.
        let loud = hosterLog.wait(timeout: 10) { event -> Int? in
            if case .remoteAudioActive(peerId, "g1", let level, 200) = event, level >= 50 { return level }; return nil
        }
        #expect(loud != nil, "no level for the co-host")
        // The room hears it from the hoster, at most every 500 ms; the co-host is not told its own.
        let told = viewerLog.wait(timeout: 5) { event -> Int? in
            if case .remoteAudioActive(peerId, "g1", let level, 500) = event, level >= 50 { return level }; return nil
        }
        #expect(told != nil, "the viewer heard no level: \(viewerLog.all.map(\.name))")
        #expect(!guestLog.all.contains { if case .remoteAudioActive = $0 { true } else { false } })
        Thread.sleep(forTimeInterval: 1.5)
        let settled = Date()
        Thread.sleep(forTimeInterval: 1)
        let hearing = heard.value.filter { $0.time > settled }
        // The frames of the hoster's 3 kHz marker beep (50 ms a second) hold less of the tone.
        #expect(hearing.count >= 20 && hearing.allSatisfy { $0.high < 0.01 } && hearing.filter { $0.low > 0.3 }.count * 10 >= hearing.count * 8,
                "heard while co-hosting: \(hearing.map { String(format: "%.2f/%.3f", $0.low, $0.high) })")

        // Muted, the co-host's voice is silence in the mix (level 0); unmuted, it is back.
        guest.setLocalAudioEnable(false)
        #expect(hosterLog.wait { event -> Bool? in if case .remoteAVStatus(peerId, false, _) = event { return true }; return nil } == true)
        #expect(eventually(5) {
            hosterLog.all.suffix(3).contains { if case .remoteAudioActive(peerId, _, 0, _) = $0 { true } else { false } }
        }, "the muted co-host's level did not fall to 0")
        guest.setLocalAudioEnable(true)
        #expect(eventually(5) {
            hosterLog.all.suffix(2).contains { if case .remoteAudioActive(peerId, _, let level, _) = $0 { level >= 50 } else { false } }
        }, "the co-host's level did not come back")

        guest.hangupLine()
        #expect(hosterLog.wait { event -> String? in if case .audioLineClosed(peerId, _, _, let reason) = event { return reason }; return nil } == "hungUpByGuest")
        #expect(eventually { hoster.mixedCohosts.isEmpty })
    }
}
