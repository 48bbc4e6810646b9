import Foundation
import LiveCore
import LiveMix
import LiveRTMP
import LiveServer
import LiveSignal
import LiveTestSupport
import Testing
@testable import LiveLine

/// The hoster's audio stage with co-hosts: voices in, the program out, levels; the hear
/// streams kept off the audio thread.
@Suite("CohostVoices: co-hosts' voices in the program")
struct CohostVoicesTests {
    /// `count` samples per channel of a sine at `hertz`, starting at sample `start`.
    static func tone(_ hertz: Double, amplitude: Float, sampleRate: Int, channels: Int, start: Int, count: Int) -> AudioFrame {
        let one = (0..<count).map { amplitude * Float(sin(2 * Double.pi * hertz * Double(start + $0) / Double(sampleRate))) }
        return AudioFrame(sampleRate: sampleRate, channelCount: channels, samples: Array([[Float]](repeating: one, count: channels).joined()),
                          pts: MediaTime(micros: Int64(start) * 1_000_000 / Int64(sampleRate)))
    }

    @Test("with no co-hosts the stage hands the host block back untouched")
    func passThrough() {
        let voices = CohostVoices()
        let host = Self.tone(440, amplitude: 0.5, sampleRate: 48000, channels: 2, start: 0, count: 480)
        #expect(voices.process(host) == host)
    }

    @Test("a 44.1 kHz mono voice joins the 48 kHz stereo program after its fill, never past the ceiling; its level is reported with its user; removed, the host passes alone")
    func voiceInProgram() throws {
        let voices = CohostVoices()
        let levels = Locked<[(String, String, Int)]>([])
        voices.onLevel(every: 1) { peerId, userId, level in levels.update { $0.append((peerId, userId, level)) } }
        voices.add(key: "p1", userId: "u1", hear: nil)
        var program: [Float] = []
        for block in 0..<60 {
            // Loud enough together (0.9 + 0.9) that the limiter must act.
            let host = Self.tone(440, amplitude: 0.9, sampleRate: 48000, channels: 2, start: block * 480, count: 480)
            voices.push(Self.tone(700, amplitude: 0.9, sampleRate: 44100, channels: 1, start: block * 441, count: 441), key: "p1")
            let out = voices.process(host)
            #expect(out.sampleRate == 48000 && out.channelCount == 2 && out.sampleCount == 480 && out.pts == host.pts)
            if block >= 30 { program += out.channel(0) }
        }
        let window = program.suffix(12000)
        let shares = [440.0, 700].map { ToneDetector(frequency: $0, sampleRate: 48000).share(in: window) }
        #expect(shares.allSatisfy { $0 > 0.2 }, "shares 440/700: \(shares)")
        #expect((program.map(abs).max() ?? 1) <= AudioMixer.defaultCeiling)
        #expect(levels.value.contains { $0.0 == "p1" && $0.1 == "u1" && $0.2 >= 80 }, "\(levels.value)")

        voices.remove(key: "p1")
        #expect(voices.keys.isEmpty)
        let host = Self.tone(440, amplitude: 0.5, sampleRate: 48000, channels: 2, start: 0, count: 480)
        #expect(voices.process(host) == host)
    }

    @Test("a hear stream whose server never answers does not slow the audio thread")
    func hearOffTheAudioThread() throws {
        // A server that takes the connection and never says a word: a push waits out its
        // connect timeout (10 s) there.
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = CutProxy.loopback(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let listening = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && listen(fd, 8) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        try #require(fd >= 0 && listening, "listen: errno \(errno)")
        let voices = CohostVoices()
        var options = RTMPPublishSink.Options()
        options.backoff = ReconnectBackoff(baseSeconds: 0.1, maxTries: 2)
        let url = try RTMPURL(parsing: "rtmp://127.0.0.1:\(UInt16(bigEndian: address.sin_port))/live/nobody.hear")
        voices.add(key: "p1", userId: "u1", hear: HearPublisher(url: url, options: options))
        defer { voices.stop() }
        let started = Clock.monotonicMicros()
        for block in 0..<200 {
            let host = Self.tone(440, amplitude: 0.5, sampleRate: 48000, channels: 2, start: block * 480, count: 480)
            voices.push(Self.tone(700, amplitude: 0.5, sampleRate: 48000, channels: 2, start: block * 480, count: 480), key: "p1")
            _ = voices.process(host)
        }
        // Had the audio thread waited for that push, the blocks would have taken the 10 s
        // of its connect timeout; mixing them takes a small part of a second (about 1 s on
        // a loaded machine under AddressSanitizer).
        let elapsed = Double(Clock.monotonicMicros() - started) / 1e6
        #expect(elapsed < 5, "\(elapsed) s for 2 s of blocks")
    }
}

/// What the kits report for an audio line's slots.
@Suite("Audio line events")
struct AudioLineEventTests {
    @Test("cohostOpened/Closed of an audio line are audioLineOpened/Closed (the anyRTC SDK: onRTCOpen/CloseRemoteAudioLine); a video line's stay as they were")
    func names() {
        var opened = LineEvent(.cohostOpened, peerId: "p", pubId: "line-x", userId: "u", userData: "d")
        #expect(LineSessionEvent(opened) == .cohostOpened(peerId: "p", pubId: "line-x", userId: "u", userData: "d"))
        opened.audioLine = true
        let audio = LineSessionEvent(opened)
        #expect(audio == .audioLineOpened(peerId: "p", pubId: "line-x", userId: "u", userData: "d"))
        #expect(audio?.name == "audioLineOpened" && audio?.fields.count == 4)
        var closed = LineEvent(.cohostClosed, reason: "left", peerId: "p", pubId: "line-x", userId: "u")
        closed.audioLine = true
        #expect(LineSessionEvent(closed) == .audioLineClosed(peerId: "p", pubId: "line-x", userId: "u", reason: "left"))
        let level = LineSessionEvent.remoteAudioActive(peerId: "p", userId: "u", level: 70, showTime: 500)
        #expect(level.name == "remoteAudioActive" && level.fields.map(\.key) == ["peerId", "userId", "level", "showTime"])
    }
}
