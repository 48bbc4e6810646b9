import Foundation
import Testing
@testable import LiveRTMP
@testable import LiveServer

/// Audio through the relay's sessions, with a publisher that sends exactly what the test
/// says (audio ahead of its video, as an encoder with a faster audio path does).
@Suite("Relay audio over the wire: a joining player's replay, an audio-only stream", .serialized)
struct RelayAudioTests {
    static let aacHeader: [UInt8] = [0xAF, 0x00, 0x11, 0x90]  // AAC-LC, 48 kHz, stereo

    static func aacFrame(_ index: Int) -> [UInt8] { [0xAF, 0x01] + [UInt8](repeating: UInt8(index & 0xFF), count: 200) }

    @Test("audio sent ahead of its keyframe reaches a joining player behind that keyframe, everything in timestamp order")
    func aheadAudioInTheReplay() throws {
        let relay = try startRelay()
        defer { relay.shutdown() }
        let publisher = try TestRTMPClient(port: relay.rtmpPort, path: "live/ahead", mode: .publish)
        guard case .publishing? = try publisher.start() else { Issue.record("publish failed"); return }
        try publisher.sendVideo(SyntheticVideo.sequenceHeader, timestamp: 0)
        try publisher.sendAudio(Self.aacHeader, timestamp: 0)
        try publisher.sendVideo(SyntheticVideo.frame(index: 0, keyframe: true), timestamp: 0)
        // The audio runs 50 ms ahead of the pictures.
        var audio = 0
        for frame in 1...5 {
            while audio * 21 < frame * 40 + 50 {
                try publisher.sendAudio(Self.aacFrame(audio), timestamp: UInt32(audio * 21))
                audio += 1
            }
            try publisher.sendVideo(SyntheticVideo.frame(index: frame, keyframe: frame == 3), timestamp: UInt32(frame * 40))
        }
        // Everything relayed before the player joins.
        #expect(eventually(5) { (try? apiStreams(relay).first?.frames) ?? 0 == 6 })

        let player = try TestRTMPClient(port: relay.rtmpPort, path: "live/ahead", mode: .play)
        guard case .playing? = try player.start() else { Issue.record("play failed"); return }
        // The two sequence headers, then the GOP from the keyframe at 120 ms: 9 messages.
        try player.pump(timeout: 3) { _ in player.mediaStamps.count >= 2 + 9 }
        let stamps = player.mediaStamps
        #expect(Array(stamps.prefix(2)).sorted() == ["a0", "v0"])  // the two sequence headers
        // The keyframe at 120, the audio stamped from 120 on (126, 147 and 168 arrived
        // before it), then the frames at 160 and 200 put before the audio that ran ahead
        // of them.
        #expect(Array(stamps.dropFirst(2)) == ["v120", "a126", "a147", "v160", "a168", "a189", "v200", "a210", "a231"],
                "\(stamps)")
        #expect(stats(relay).audioCodec == "aac")
    }

    @Test("a player joining an audio-only stream gets the AAC header and then the audio at once; nothing is cached")
    func audioOnlyJoin() throws {
        let relay = try startRelay()
        defer { relay.shutdown() }
        let publisher = try TestRTMPClient(port: relay.rtmpPort, path: "live/radio", mode: .publish)
        guard case .publishing? = try publisher.start() else { Issue.record("publish failed"); return }
        // A first player, there from the start, tells when the relay has passed everything on.
        let witness = try TestRTMPClient(port: relay.rtmpPort, path: "live/radio", mode: .play)
        guard case .playing? = try witness.start() else { Issue.record("play failed"); return }
        try publisher.sendAudio(Self.aacHeader, timestamp: 0)
        for index in 0..<20 { try publisher.sendAudio(Self.aacFrame(index), timestamp: UInt32(index * 21)) }
        try witness.pump(timeout: 3) { _ in witness.mediaStamps.count >= 21 }
        #expect(witness.mediaStamps.count == 21)
        let player = try TestRTMPClient(port: relay.rtmpPort, path: "live/radio", mode: .play)
        guard case .playing? = try player.start() else { Issue.record("play failed"); return }
        try player.pump(timeout: 2) { _ in !player.mediaStamps.isEmpty }
        #expect(player.mediaStamps == ["a0"])  // the header; no replay of old audio
        for index in 20..<25 { try publisher.sendAudio(Self.aacFrame(index), timestamp: UInt32(index * 21)) }
        try player.pump(timeout: 2) { _ in player.mediaStamps.count >= 6 }
        #expect(player.mediaStamps == ["a0", "a420", "a441", "a462", "a483", "a504"])
        let listed = stats(relay)
        #expect(listed.cachedBytes == 0)
        #expect(listed.audioSampleRate == 48000 && listed.audioChannels == 2)
        #expect(listed.codec == nil)
    }

    func stats(_ relay: RelayServer) -> StreamStats {
        (try? apiStreams(relay).first) ?? StreamStats(app: "", name: "", fps: 0, bitrate: 0, players: 0, droppedFrames: 0, frames: 0,
                                                    cachedBytes: 0, playerDetails: [])
    }
}
