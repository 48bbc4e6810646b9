import Foundation
import LiveAuth
import Testing
@testable import LiveServer

/// ffmpeg and ffprobe, clients nobody here wrote, against a relay with auth on.
@Suite("Relay with auth on and ffmpeg/ffprobe clients", .serialized, .enabled(if: ffmpegAvailable, "ffmpeg is not installed"))
struct FFmpegAuthTests {
    @Test("ffmpeg publishes with a valid ?token=; without one or with a bad one it is refused and prints the reason")
    func publish() throws {
        let relay = try startAuthRelay()
        defer { relay.shutdown() }
        let base = "rtmp://127.0.0.1:\(relay.rtmpPort)/live/cam"
        let without = try ffmpegPublisher(base, seconds: 1)
        #expect(without.wait(timeout: 15) != 0)
        #expect(without.stderr.contains("Server error: 213 the token must be verified: no token given"), "\(without.stderr)")
        let forged = TestTokens.mint([AccessPermission(action: .publish, path: "live/cam")], secret: Array("not-the-relay-secret-012345".utf8))
        let bad = try ffmpegPublisher(base + "?token=" + forged, seconds: 1)
        #expect(bad.wait(timeout: 15) != 0)
        #expect(bad.stderr.contains("Server error: 202 authentication failed: bad signature"), "\(bad.stderr)")
        #expect(try authStreams(relay).isEmpty)

        let good = try ffmpegPublisher(base + "?token=" + TestTokens.publish("live/cam"), seconds: 2)
        #expect(try eventually(8) { try authStreams(relay).first?.frames ?? 0 > 10 })
        #expect(good.wait(timeout: 15) == 0, "\(good.stderr)")
        #expect(relay.rtmp.counters.refusedPublishes.load(ordering: .relaxed) == 2)
    }

    @Test("ffprobe plays with a play token and is refused without one; a bad token in the tcUrl is refused at connect")
    func play() throws {
        let relay = try startAuthRelay()
        defer { relay.shutdown() }
        let url = "rtmp://127.0.0.1:\(relay.rtmpPort)/live/show"
        let publisher = try ffmpegPublisher(url + "?token=" + TestTokens.publish("live/show"), seconds: 8)
        defer { publisher.signal(SIGKILL); _ = publisher.wait(timeout: 5) }
        #expect(try eventually(8) { try authStreams(relay).first?.frames ?? 0 > 10 })

        let probeArguments = ["-v", "error", "-select_streams", "v:0", "-show_entries", "stream=width,height", "-of", "csv=p=0"]
        let refused = try ChildProcess(ffprobePath, probeArguments + [url])
        #expect(refused.wait(timeout: 15) != 0)
        #expect(refused.stderr.contains("Server error: 213 the token must be verified"), "\(refused.stderr)")
        let allowed = try ChildProcess(ffprobePath, probeArguments + [url + "?token=" + TestTokens.play("live/*")])
        #expect(allowed.wait(timeout: 15) == 0, "\(allowed.stderr)")
        #expect(allowed.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "640,360")

        let rejected = try ChildProcess(ffprobePath, ["-v", "error", "-rtmp_tcurl", "rtmp://127.0.0.1:\(relay.rtmpPort)/live?token=x.y.z", url])
        #expect(rejected.wait(timeout: 15) != 0)
        #expect(rejected.stderr.contains("Server error: 202 authentication failed"), "\(rejected.stderr)")
        #expect(relay.rtmp.counters.refusedConnects.load(ordering: .relaxed) == 1)
    }

    @Test("a second ffmpeg without a token for the name cannot take the stream over; the first keeps publishing")
    func takeover() throws {
        let relay = try startAuthRelay()
        defer { relay.shutdown() }
        let url = "rtmp://127.0.0.1:\(relay.rtmpPort)/live/stage"
        let first = try ffmpegPublisher(url + "?token=" + TestTokens.publish("live/stage"), seconds: 10)
        defer { first.signal(SIGKILL); _ = first.wait(timeout: 5) }
        #expect(try eventually(8) { try authStreams(relay).first?.frames ?? 0 > 10 })
        let intruder = try ffmpegPublisher(url + "?token=" + TestTokens.publish("live/other", sub: "mallory"), seconds: 2)
        #expect(intruder.wait(timeout: 15) != 0)
        #expect(intruder.stderr.contains("104 unauthorized: token does not allow publish on \"live/stage\""), "\(intruder.stderr)")
        let framesBefore = try #require(try authStreams(relay).first?.frames)
        #expect(try eventually(3) { try authStreams(relay).first?.frames ?? 0 > framesBefore + 20 })
        #expect(try authStreams(relay).first?.fps ?? 0 > 20)
        #expect(relay.rtmp.counters.takeovers.load(ordering: .relaxed) == 0)
    }
}
