import Foundation
import LiveTestSupport
import Testing
@testable import LiveServer

let gstLaunchPath = "/usr/bin/gst-launch-1.0"

/// GStreamer with the rtmp2 elements (gstreamer1.0-plugins-bad; scripts/setup installs it).
var gstreamerRTMPAvailable: Bool {
    guard FileManager.default.isExecutableFile(atPath: gstLaunchPath),
          let inspect = try? ProcessOutput.run("/usr/bin/gst-inspect-1.0", ["rtmp2sink"]) else { return false }
    return inspect.status == 0
}

/// GStreamer's rtmp2sink and rtmp2src, peers that speak RTMP their own way, against the relay.
@Suite("Relay with GStreamer's rtmp2sink and rtmp2src", .serialized,
       .enabled(if: gstreamerRTMPAvailable, "gst-launch-1.0 with rtmp2sink is not installed (scripts/setup)"))
struct GStreamerRelayTests {
    /// gst-launch-1.0 pushing `frames` frames of the test pattern to `url` as fast as it encodes.
    func gstPublisher(_ url: String, frames: Int, live: Bool = false, sinkOptions: [String] = []) throws -> ChildProcess {
        try ChildProcess(gstLaunchPath, [
            "videotestsrc", "num-buffers=\(frames)", "is-live=\(live)", "!", "video/x-raw,width=320,height=240,framerate=30/1",
            "!", "x264enc", "tune=zerolatency", "key-int-max=30", "!", "h264parse", "!", "flvmux", "streamable=true",
            "!", "rtmp2sink", "location=\(url)",
        ] + sinkOptions)
    }

    @Test("gst-launch … ! flvmux ! rtmp2sink ends its push with exit 0 and no ERROR, whichever stop commands it sends (its deleteStream and closeStream name the stream, on message stream 0)",
          arguments: [[], ["stop-commands=deletestream"], ["stop-commands=closestream"],
                      ["stop-commands=fcunpublish+closestream+deletestream"]])
    func rtmp2sinkPush(sinkOptions: [String]) throws {
        let relay = try startRelay()
        defer { relay.shutdown() }
        let publisher = try gstPublisher("rtmp://127.0.0.1:\(relay.rtmpPort)/live/gst", frames: 90, sinkOptions: sinkOptions)
        let status = publisher.wait(timeout: 60)
        // Before: "ERROR: from element …rtmp2sink…: Connection error: connection closed remotely", exit 1.
        #expect(status == 0, "gst-launch: \(publisher.stdout) \(publisher.stderr)")
        #expect(!publisher.stdout.contains("ERROR") && !publisher.stderr.contains("ERROR"), "\(publisher.stdout) \(publisher.stderr)")
        #expect(relay.rtmp.counters.protocolErrors.load(ordering: .relaxed) == 0)
        #expect(relay.rtmp.counters.bytesIn.load(ordering: .relaxed) > 10_000)
        // The publication ended with the push.
        #expect(try eventually(3) { try apiStreams(relay).isEmpty })
    }

    @Test("rtmp2src plays what ffmpeg publishes through the relay: decoded 320x240 frames, exit 0, no ERROR")
    func rtmp2srcPlay() throws {
        let relay = try startRelay()
        defer { relay.shutdown() }
        let url = "rtmp://127.0.0.1:\(relay.rtmpPort)/live/gstplay"
        let publisher = try ffmpegPublisher(url, seconds: 20, size: "320x240")
        defer { publisher.signal(SIGKILL); _ = publisher.wait(timeout: 5) }
        #expect(try eventually(8) { try apiStreams(relay).first?.frames ?? 0 > 10 })
        // num-buffers counts FLV tags: the header, metadata, the sequence header, then
        // frames. fakesink says what it got in -v's last-message, one line per frame.
        let player = try ChildProcess(gstLaunchPath, [
            "-v", "rtmp2src", "location=\(url)", "num-buffers=90", "!", "flvdemux", "!", "h264parse", "!", "avdec_h264",
            "!", "fakesink", "silent=false",
        ])
        let status = player.wait(timeout: 30)
        #expect(status == 0, "gst-launch: \(player.stderr)")
        #expect(!player.stdout.contains("ERROR") && !player.stderr.contains("ERROR"), "\(player.stdout) \(player.stderr)")
        let frames = player.stdout.split(separator: "\n").filter { $0.contains("fakesink0: last-message = chain") }
        #expect(frames.count >= 60, "rtmp2src gave \(frames.count) decoded frames")
        // I420 320x240: 115200 bytes a frame.
        #expect(frames.allSatisfy { $0.contains("(115200 bytes,") })
        #expect(player.stdout.contains("video/x-raw, format=(string)I420, width=(int)320, height=(int)240"))
        #expect(relay.rtmp.counters.protocolErrors.load(ordering: .relaxed) == 0)
    }

    @Test("rtmp2sink publishes live and a LiveLine-free player (ffprobe) reads it from the relay meanwhile")
    func rtmp2sinkLiveToFFprobe() throws {
        let relay = try startRelay()
        defer { relay.shutdown() }
        let url = "rtmp://127.0.0.1:\(relay.rtmpPort)/live/gstlive"
        let publisher = try gstPublisher(url, frames: 180, live: true)
        #expect(try eventually(10) { try apiStreams(relay).first?.frames ?? 0 > 10 }, "\(publisher.stderr)")
        let probe = try ChildProcess(ffprobePath, [
            "-v", "error", "-select_streams", "v:0", "-show_entries", "stream=codec_name,width,height", "-of", "csv=p=0", url,
        ])
        #expect(probe.wait(timeout: 15) == 0, "ffprobe: \(probe.stderr)")
        #expect(probe.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "h264,320,240")
        #expect(publisher.wait(timeout: 30) == 0, "gst-launch: \(publisher.stdout) \(publisher.stderr)")
        #expect(!publisher.stdout.contains("ERROR") && !publisher.stderr.contains("ERROR"))
    }
}
