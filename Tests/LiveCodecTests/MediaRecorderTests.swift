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

    /// 60 frames (2 s at 30 fps) of 320x240, encoded: the stream, its packets in decode
    /// order and the source frames.
    static func encode(bFrames: Int = 0) throws -> (VideoStreamInfo, [EncodedVideoPacket], [VideoFrame]) {
        let config = H264EncoderConfig(width: 320, height: 240, fps: 30, bitrateKbps: 800,
                                       tune: bFrames > 0 ? "film" : "zerolatency", bFrames: bFrames)
        let encoder = try H264Encoder(config: config)
        var sources: [VideoFrame] = []
        var packets: [EncodedVideoPacket] = []
        for i in 0..<60 {
            let frame = VideoFrame(width: 320, height: 240)
            TestPictures.drawMoving(frame, index: i)
            // A pipeline clock that does not start at zero: the recording starts at 0 anyway.
            frame.pts = MediaTime(micros: 5_000_000) + MediaTime(frame: Int64(i), fps: 30)
            frame.captureTimeMicros = 1_700_000_000_000_000 + UInt64(i)
            sources.append(frame)
            packets += try encoder.encode(frame)
        }
        packets += try encoder.flush()
        return (encoder.streamInfo, packets, sources)
    }

    /// 60 frames (2 s at 30 fps) of 320x240 recorded to `path`; returns the source frames.
    @discardableResult
    static func record(to path: String, bFrames: Int = 0) throws -> [VideoFrame] {
        let (stream, packets, sources) = try encode(bFrames: bFrames)
        let recorder = try MediaRecorder(path: path, stream: stream)
        for packet in packets { try recorder.write(packet) }
        try recorder.finish()
        #expect(recorder.packetsWritten == 60)
        return sources
    }

    /// The frames ffprobe decodes from `path` (0 when it cannot read the file at all).
    static func framesRead(_ path: String) throws -> Int {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/ffprobe")
        process.arguments = ["-v", "quiet", "-select_streams", "v:0", "-count_frames",
                             "-show_entries", "stream=nb_read_frames", "-of", "csv=p=0", path]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Int(String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
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

    /// A recording killed mid-way: never finished, and the file cut at `fraction` of its
    /// length (the last write half done). A plain MP4 keeps its index at the end and would
    /// lose everything; the fragmented one plays up to its last complete fragment.
    @Test(arguments: [("mp4", 0.6), ("mp4", 0.95), ("flv", 0.6)])
    func recordingCutOffStaysPlayable(container: String, fraction: Double) throws {
        let directory = try TestPictures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("whole.\(container)").path
        let (stream, packets, _) = try Self.encode()
        do {
            let recorder = try MediaRecorder(path: path, stream: stream)
            for packet in packets { try recorder.write(packet) }
            // No finish: the process dies here.
        }
        let whole = try Data(contentsOf: URL(fileURLWithPath: path))
        let cutPath = directory.appendingPathComponent("cut.\(container)").path
        try whole.prefix(Int(Double(whole.count) * fraction)).write(to: URL(fileURLWithPath: cutPath))
        let frames = try Self.framesRead(cutPath)
        // At least the first fragment (one second, 30 frames) of the two seconds.
        #expect(frames >= 30 && frames < 60, "\(frames) frames read from \(whole.count) × \(fraction) bytes")
    }

    /// A full disk (/dev/full: every write fails with ENOSPC): the header (MP4 writes its
    /// track header up front) or the packet that fills libavformat's write buffer throws
    /// an error naming ENOSPC (FFmpeg codes are negative errnos); a recorder that got
    /// past its header then refuses packets and its `finish` says why; nothing traps.
    @Test(arguments: ["mp4", "flv"])
    func fullDiskIsAnErrorNotACrash(container: String) throws {
        let directory = try TestPictures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("full.\(container)").path
        try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: "/dev/full")
        let (stream, encoded, _) = try Self.encode()
        // Each packet padded with a 64 KiB filler NAL unit, so the first packets overflow
        // libavformat's 32 KiB write buffer and reach the disk.
        let filler: [UInt8] = [0, 0, 0, 1, 0x0C] + [UInt8](repeating: 0xFF, count: 64 << 10)
        let packets = encoded.map {
            EncodedVideoPacket(data: $0.data + filler, pts: $0.pts, dts: $0.dts, isKeyframe: $0.isKeyframe,
                               captureTimeMicros: $0.captureTimeMicros)
        }
        var recorder: MediaRecorder?
        let error = #expect(throws: FFmpegError.self) {
            let made = try MediaRecorder(path: path, stream: stream)
            recorder = made
            for packet in packets { try made.write(packet) }
        }
        #expect(error?.code == -ENOSPC, "\(String(describing: error))")
        if let recorder {
            #expect(error?.call.hasPrefix("av_write_frame") == true)
            #expect(recorder.packetsWritten < packets.count)
            #expect(throws: MediaRecorder.RecorderError.self) { try recorder.write(packets[0]) }
            #expect(throws: MediaRecorder.RecorderError.self) { try recorder.finish() }
        }
    }

    /// 2 s of a 1 kHz tone from 5 s on (the video's clock), AAC-encoded: the stream and its frames.
    static func encodeAudio(channels: Int = 2) throws -> (AudioStreamInfo, [EncodedAudioPacket]) {
        let encoder = try AACEncoder(sampleRate: 48000, channelCount: channels)
        var packets: [EncodedAudioPacket] = []
        for block in 0..<200 {
            let samples = (0..<480 * channels).map { Float(sin(2 * Double.pi * 1000 * Double(block * 480 + $0 % 480) / 48000)) * 0.25 }
            packets += try encoder.encode(AudioFrame(sampleRate: 48000, channelCount: channels, samples: samples,
                                                     pts: MediaTime(micros: 5_000_000 + Int64(block) * 10_000)))
        }
        packets += try encoder.flush()
        return (encoder.streamInfo, packets)
    }

    /// Per stream of `path`: codec name, first pts and end (pts + duration) in seconds.
    static func tracks(_ path: String) throws -> [(codec: String, start: Double, end: Double)] {
        func run(_ arguments: [String]) throws -> String {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/ffprobe")
            process.arguments = ["-v", "error"] + arguments + ["-of", "csv=p=0", path]
            let pipe = Pipe()
            process.standardOutput = pipe
            try process.run()
            let data = pipe.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return String(decoding: data, as: UTF8.self)
        }
        let codecs = try run(["-show_entries", "stream=codec_name"]).split(separator: "\n").map(String.init)
        var spans = [(start: Double, end: Double)](repeating: (.infinity, -.infinity), count: codecs.count)
        for line in try run(["-show_entries", "packet=stream_index,pts_time,duration_time"]).split(separator: "\n") {
            let fields = line.split(separator: ",").map { Double($0) ?? 0 }
            guard fields.count == 3, Int(fields[0]) < spans.count else { continue }
            let index = Int(fields[0])
            spans[index] = (min(spans[index].start, fields[1]), max(spans[index].end, fields[1] + fields[2]))
        }
        return zip(codecs, spans).map { ($0, $1.start, $1.end) }
    }

    @Test("video and AAC audio on one origin: both tracks, starting together and lasting as long", arguments: ["flv", "mp4", "nut", "mkv"])
    func audioTrack(container: String) throws {
        let directory = try TestPictures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("av.\(container)").path
        let (video, videoPackets, _) = try Self.encode()
        let (audio, audioPackets) = try Self.encodeAudio()
        let recorder = try MediaRecorder(path: path, video: video, audio: audio)
        // Audio first, as a player often receives it: frames before the keyframe are left out.
        try recorder.write(audio: EncodedAudioPacket(data: audioPackets[0].data, pts: MediaTime(micros: 4_000_000),
                                                     duration: audioPackets[0].duration))
        var audioIndex = 0
        for packet in videoPackets {
            try recorder.write(packet)
            while audioIndex < audioPackets.count, audioPackets[audioIndex].pts <= packet.dts {
                try recorder.write(audio: audioPackets[audioIndex])
                audioIndex += 1
            }
        }
        for packet in audioPackets[audioIndex...] { try recorder.write(audio: packet) }
        try recorder.finish()
        #expect(recorder.packetsWritten == videoPackets.count)
        let tracks = try Self.tracks(path)
        #expect(tracks.map(\.codec) == ["h264", "aac"])
        guard tracks.count == 2 else { return }
        // The encoder's priming frame starts 1024 samples (21 ms) before the audio's origin: left out.
        #expect(abs(tracks[0].start) < 0.001 && abs(tracks[1].start) < 0.03, "\(tracks)")
        #expect(abs((tracks[0].end - tracks[0].start) - (tracks[1].end - tracks[1].start)) < 0.1, "\(tracks)")
    }

    @Test("an audio-only recording starts at its first frame; no track at all is refused")
    func audioOnly() throws {
        let directory = try TestPictures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("voice.nut").path
        let (audio, packets) = try Self.encodeAudio(channels: 1)
        let recorder = try MediaRecorder(path: path, video: nil, audio: audio)
        for packet in packets { try recorder.write(audio: packet) }
        try recorder.finish()
        #expect(recorder.audioPacketsWritten == packets.count)
        let tracks = try Self.tracks(path)
        #expect(tracks.count == 1 && tracks.first?.codec == "aac" && tracks.first?.start == 0, "\(tracks)")
        #expect(throws: MediaRecorder.RecorderError.noTracks(path: path)) { try MediaRecorder(path: path, video: nil, audio: nil) }
        #expect(MediaRecorder.Container(path: "-") == .nut && MediaRecorder.Container(path: "a.MKV") == .matroska)
        #expect(MediaRecorder.Container(path: "a.avi") == nil)
    }
}
