import Foundation
import LiveCore
import Testing
@testable import LiveCodec

@Suite struct MediaRecorderTests {
    struct Probe: Decodable {
        struct Stream: Decodable {
            var codec_name: String
            var width: Int
            var height: Int
            var nb_read_frames: String
        }
        struct Format: Decodable { var duration: String }
        var streams: [Stream]
        var format: Format
    }

    static func probe(_ path: String) throws -> Probe {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/ffprobe")
        process.arguments = ["-v", "error", "-select_streams", "v:0", "-count_frames",
                             "-show_entries", "stream=codec_name,width,height,nb_read_frames:format=duration",
                             "-of", "json", path]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return try JSONDecoder().decode(Probe.self, from: data)
    }

    /// 60 frames (2 s at 30 fps) of 320x240 recorded to `path`; returns the source frames.
    @discardableResult
    static func record(to path: String, bFrames: Int = 0) throws -> [VideoFrame] {
        let config = H264EncoderConfig(width: 320, height: 240, fps: 30, bitrateKbps: 800,
                                       tune: bFrames > 0 ? "film" : "zerolatency", bFrames: bFrames)
        let encoder = try H264Encoder(config: config)
        let recorder = try MediaRecorder(path: path, stream: encoder.streamInfo)
        var sources: [VideoFrame] = []
        for i in 0..<60 {
            let frame = VideoFrame(width: 320, height: 240)
            TestPictures.drawMoving(frame, index: i)
            // A pipeline clock that does not start at zero: the recording starts at 0 anyway.
            frame.pts = MediaTime(micros: 5_000_000) + MediaTime(frame: Int64(i), fps: 30)
            frame.captureTimeMicros = 1_700_000_000_000_000 + UInt64(i)
            sources.append(frame)
            for packet in try encoder.encode(frame) { try recorder.write(packet) }
        }
        for packet in try encoder.flush() { try recorder.write(packet) }
        try recorder.finish()
        #expect(recorder.packetsWritten == 60)
        return sources
    }

    @Test(arguments: ["flv", "mp4"])
    func recordsAFileFFprobeReads(container: String) throws {
        let directory = try TestPictures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("clip.\(container)").path
        try Self.record(to: path)
        let probe = try Self.probe(path)
        let stream = try #require(probe.streams.first)
        #expect(stream.codec_name == "h264")
        #expect(stream.width == 320 && stream.height == 240)
        #expect(stream.nb_read_frames == "60")
        let duration = try #require(Double(probe.format.duration))
        #expect(abs(duration - 2.0) <= 0.05, "duration \(duration)")
    }

    @Test func recordsBFramesToMP4() throws {
        let directory = try TestPictures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("bframes.mp4").path
        try Self.record(to: path, bFrames: 2)
        let stream = try #require(try Self.probe(path).streams.first)
        #expect(stream.nb_read_frames == "60")
    }

    @Test func refusesOtherContainers() throws {
        let info = VideoStreamInfo(width: 320, height: 240, fps: 30, bitrate: 800_000, extradata: [])
        #expect(throws: MediaRecorder.RecorderError.unsupportedContainer(path: "/tmp/clip.avi")) {
            try MediaRecorder(path: "/tmp/clip.avi", stream: info)
        }
    }

    @Test func unfinishedRecordingClosesWithoutATrailer() throws {
        let directory = try TestPictures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("cut.flv").path
        let encoder = try H264Encoder(config: H264EncoderConfig(width: 320, height: 240, fps: 30, bitrateKbps: 500))
        do {
            let recorder = try MediaRecorder(path: path, stream: encoder.streamInfo)
            let frame = VideoFrame(width: 320, height: 240)
            for i in 0..<10 {
                TestPictures.drawMoving(frame, index: i)
                frame.pts = MediaTime(frame: Int64(i), fps: 30)
                for packet in try encoder.encode(frame) { try recorder.write(packet) }
            }
        }
        // An FLV needs no trailer: what was written is readable.
        let stream = try #require(try Self.probe(path).streams.first)
        #expect(stream.nb_read_frames == "10")
    }
}
