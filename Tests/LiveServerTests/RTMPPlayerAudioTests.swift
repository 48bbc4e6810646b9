import Foundation
import LiveCore
import LiveNet
import LiveTestSupport
import Testing
@testable import LiveRTMP
@testable import LiveServer

/// `RTMPPlayer`'s audio events, from a publisher on the in-process relay.
@Suite("RTMPPlayer audio", .serialized)
struct RTMPPlayerAudioTests {
    @Test("the AAC header and frames arrive as events with their times; hostile headers, frames before a header and MP3 are counted, ignored, and playing goes on")
    func audioEvents() throws {
        let relay = try startRelay()
        defer { relay.shutdown() }
        let loop = try EventLoop(name: "player-audio")
        loop.start()
        defer { loop.shutdown() }
        let player = RTMPPlayer(url: try RTMPURL(parsing: "rtmp://127.0.0.1:\(relay.rtmpPort)/live/audio"), loop: loop)
        let events = Locked<[RTMPPlayer.Event]>([])
        player.onEvent = { event in events.update { $0.append(event) } }
        player.start()
        defer {
            player.close()
            player.waitUntilClosed(timeout: .seconds(5))
        }
        #expect(eventually(5) { player.stats.state == .playing })

        let publisher = try TestRTMPClient(port: relay.rtmpPort, path: "live/audio", mode: .publish)
        guard case .publishing? = try publisher.start() else {
            Issue.record("publish did not start")
            return
        }
        // A frame before any header, a 3-channel header, a header cut short: all ignored.
        try publisher.sendAudio([0xAF, 0x01, 0x21, 0x10], timestamp: 0)
        try publisher.sendAudio([0xAF, 0x00, 0x11, 0x98], timestamp: 0)
        try publisher.sendAudio([0xAF, 0x00, 0x11], timestamp: 0)
        try publisher.sendAudio([0xAF, 0x01, 0x21, 0x10], timestamp: 10)
        // The good header, then frames 21 ms apart, and an MP3 frame between them.
        try publisher.sendAudio([0xAF, 0x00, 0x11, 0x88], timestamp: 20)
        for index in 0..<5 {
            try publisher.sendAudio([0xAF, 0x01, 0x21, 0x10, UInt8(index)], timestamp: UInt32(20 + index * 21))
            if index == 2 { try publisher.sendAudio([0x2F, 0xFF, 0xFB, 0x90], timestamp: 70) }
        }
        try publisher.drain()
        #expect(eventually(5) { events.value.filter { if case .audio = $0 { true } else { false } }.count == 5 })

        let configurations = events.value.compactMap { event -> (asc: [UInt8], config: AACAudioSpecificConfig)? in
            if case .audioConfiguration(let asc, let config) = event { (asc, config) } else { nil }
        }
        #expect(configurations.count == 1)
        #expect(configurations.first?.asc == [0x11, 0x88])
        #expect(configurations.first?.config.sampleRate == 48000 && configurations.first?.config.channelConfiguration == 1)
        let frames = events.value.compactMap { event -> RTMPAudioPacket? in if case .audio(let packet) = event { packet } else { nil } }
        #expect(frames.map(\.data) == (0..<5).map { [0x21, 0x10, UInt8($0)] })
        #expect(frames.map(\.pts.milliseconds) == [20, 41, 62, 83, 104])
        #expect(eventually(2) { player.stats.audioPackets == 11 && player.stats.ignoredAudioPackets == 5 },
                "\(player.stats)")
        #expect(player.stats.state == .playing)
        #expect(!events.value.contains { if case .failed = $0 { true } else { false } })
    }
}
