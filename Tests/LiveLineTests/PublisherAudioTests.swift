import Foundation
import Glibc
import LiveCapture
import LiveCodec
import LiveCore
import LiveNet
import LiveRTMP
import LiveServer
import LiveTestSupport
import Testing
@testable import LiveLine

@Suite("The hoster's sound on the wire: AAC items, one timeline, congestion and reconnect", .serialized)
struct PublisherAudioTests {
    /// What a publisher sent, message by message, as a player reads it.
    enum Item: Equatable {
        case metadata, videoHeader, keyframe, interFrame, audioHeader, audioFrame
    }

    static func items(_ messages: [RTMPRawMessage]) -> [(item: Item, timestamp: UInt32)] {
        messages.compactMap { message in
            let payload = message.payload
            switch message.typeID {
            case RTMPMessage.TypeID.dataAMF0:
                return String(decoding: payload, as: UTF8.self).contains("onMetaData") ? (.metadata, message.timestamp) : nil
            case RTMPMessage.TypeID.video where payload.count >= 2:
                if payload[1] == 0 { return (.videoHeader, message.timestamp) }
                return (payload[0] >> 4 == 1 ? .keyframe : .interFrame, message.timestamp)
            case RTMPMessage.TypeID.audio where payload.count >= 2:
                return (payload[1] == 0 ? .audioHeader : .audioFrame, message.timestamp)
            default:
                return nil
            }
        }
    }

    /// The onMetaData of @setDataFrame among `messages`.
    static func metadata(_ messages: [RTMPRawMessage]) throws -> RTMPStreamMetadata {
        let message = try #require(messages.first { $0.typeID == RTMPMessage.TypeID.dataAMF0 }, "no data message")
        guard case .data(.setDataFrame(_, let values)) = try RTMPMessage(decoding: message) else {
            throw CutProxy.Failure("no @setDataFrame")
        }
        return values
    }

    @Test("(b) LiveLine host with sound → nginx-rtmp: ffprobe shows h264 and AAC at 48000 Hz, ffmpeg decodes both cleanly")
    func hostWithSoundThroughNginx() throws {
        let nginx = try Peers.NginxRTMP()
        defer { nginx.stop() }
        var configuration = HosterConfiguration()
        (configuration.width, configuration.height, configuration.bitrateKbps) = (320, 240, 400)
        configuration.keyframeIntervalSeconds = 1
        let hoster = try HosterPipeline(configuration: configuration)
        let sink = RTMPPublishSink(url: try RTMPURL(parsing: nginx.url("sound")))
        hoster.addSink(sink)
        try hoster.start(frameLimit: 30 * 8)
        defer {
            hoster.stop()
            _ = try? hoster.wait()
        }
        Thread.sleep(forTimeInterval: 1)
        let probe = try Peers.run(FFprobe.path, ["-v", "error", "-show_entries", "stream=codec_type,codec_name,sample_rate,channels",
                                                 "-of", "csv=p=0", nginx.url("sound")])
        let streams = probe.text.split(separator: "\n").map(String.init).sorted()
        #expect(streams == ["aac,audio,48000,2", "h264,video"], "ffprobe: \(probe.text) \(probe.stderr)")
        let decode = try Peers.run("/usr/bin/ffmpeg", ["-v", "error", "-nostdin", "-i", nginx.url("sound"), "-map", "0:v",
                                                       "-map", "0:a", "-t", "2", "-f", "null", "-"])
        #expect(decode.status == 0)
        #expect(decode.stderr.isEmpty, "ffmpeg reported: \(decode.stderr)")
        #expect(hoster.stats.audioFramesEncoded > 0)
        #expect(sink.stats.sentAudioFrames > 0 && sink.stats.droppedAudioFrames == 0)
    }

    @Test("a congested connection drops video to the next keyframe and never an audio frame")
    func congestionDropsVideoNotAudio() throws {
        let nginx = try Peers.NginxRTMP()
        defer { nginx.stop() }
        let loop = try EventLoop(name: "test-audio-congestion")
        loop.start()
        defer { loop.shutdown() }
        var configuration = RTMPPublisher.Configuration(tracks: [.audio, .video])
        configuration.maxQueuedBytes = 1 << 20
        configuration.maxQueuedMilliseconds = 500
        let publisher = RTMPPublisher(url: try RTMPURL(parsing: nginx.url("congested-audio")), loop: loop,
                                      configuration: configuration)
        publisher.start()
        try publisher.waitUntilPublished()
        try publisher.send(sequenceHeader: [0, 0, 0, 1, 0x67, 0x42, 0xC0, 0x1E, 0xDA, 0, 0, 0, 1, 0x68, 0xCE, 0x3C, 0x80])
        publisher.send(audioHeader: AudioStreamInfo(sampleRate: 48000, channelCount: 2, bitrate: 96_000,
                                                    audioSpecificConfig: [0x11, 0x90]))
        let pids = try nginx.processes()
        for pid in pids { kill(pid, SIGSTOP) }
        defer { for pid in pids { kill(pid, SIGCONT) } }

        // 10 s of media: 300 large video frames, 469 small AAC frames, in time order.
        let slice = [UInt8](repeating: 0x5A, count: 100_000)
        var audioSent = 0
        for index in 0..<300 {
            let key = index % 30 == 0
            let time = MediaTime(milliseconds: Int64(index) * 33)
            publisher.send(EncodedVideoPacket(data: [0, 0, 0, 1, key ? 0x65 : 0x41] + slice, pts: time, dts: time,
                                              isKeyframe: key, captureTimeMicros: 0))
            while Int64(audioSent) * 1024 * 1000 / 48 <= time.micros {
                let pts = MediaTime(micros: Int64(audioSent) * 1024 * 1_000_000 / 48000)
                publisher.send(EncodedAudioPacket(data: [UInt8](repeating: 0x21, count: 300), pts: pts,
                                                  duration: MediaTime(micros: 21_333)))
                audioSent += 1
            }
        }
        var stats = publisher.stats
        for _ in 0..<100 {
            usleep(50_000)
            stats = publisher.stats
            if stats.droppedFrames + stats.sentFrames + stats.queuedFrames >= 299 { break }
        }
        #expect(stats.droppedFrames > 0, "\(stats)")
        #expect(stats.isCongested || stats.droppedFrames > 0)
        #expect(stats.droppedAudioFrames == 0, "\(stats)")
        #expect(stats.state == .publishing)
        // The queue measure sees audio too: many seconds of media wait.
        #expect(stats.queuedMilliseconds >= 500, "\(stats)")
        publisher.abort()
        #expect(publisher.waitUntilClosed(timeout: .seconds(2)))
    }

    @Test("metadata, AVC and AAC headers start each connection; audio and video share one timeline that never goes back")
    func headersAndTimelineAcrossReconnect() throws {
        let nginx = try Peers.NginxRTMP()
        defer { nginx.stop() }
        let proxy = try CutProxy(upstreamPort: nginx.port, cutFirstAfter: 60_000)
        defer { proxy.stop() }
        var options = RTMPPublishSink.Options()
        options.backoff = ReconnectBackoff(baseSeconds: 0.2, factor: 1, capSeconds: 0.2, jitter: 0, maxTries: 5)
        let sink = RTMPPublishSink(url: try RTMPURL(parsing: "rtmp://127.0.0.1:\(proxy.port)/live/audio-reconnect"),
                                   options: options)
        let encoder = try H264Encoder(config: H264EncoderConfig(width: 160, height: 120, fps: 30, bitrateKbps: 400,
                                                                keyframeIntervalSeconds: 60))
        let audioEncoder = try AACEncoder()
        let tone = ToneGenerator()
        sink.encoder = encoder
        try sink.open(video: encoder.streamInfo, audio: audioEncoder.streamInfo)

        let frame = VideoFrame(width: 160, height: 120)
        var index = 0
        let deadline = Date().addingTimeInterval(15)
        func secondConnectionFrames() throws -> Int {
            let sent = proxy.clientBytes
            guard sent.count >= 2 else { return 0 }
            return Self.items(try PublisherReconnectTests.messages(sent[1])).filter { $0.item == .interFrame }.count
        }
        while Date() < deadline, try secondConnectionFrames() < 20 {
            let y = frame.plane(0)
            for i in 0..<(frame.stride(0) * 120) { y[i] = UInt8(truncatingIfNeeded: i &* 7 &+ index &* 13) }
            frame.pts = MediaTime(frame: Int64(index), fps: 30)
            for packet in try encoder.encode(frame) { try sink.write(packet) }
            // 1600 samples: a video frame's time at 48 kHz, on the same clock.
            for packet in try audioEncoder.encode(tone.frame(start: Int64(index) * 1600, count: 1600)) { try sink.write(packet) }
            index += 1
            usleep(5_000)
        }
        try sink.close()

        let sent = proxy.clientBytes
        try #require(sent.count >= 2, "the publisher did not reconnect (\(sent.count) connection(s))")
        for (number, bytes) in sent.prefix(2).enumerated() {
            let messages = try PublisherReconnectTests.messages(bytes)
            let items = Self.items(messages)
            let kinds = items.map(\.item)
            #expect(Array(kinds.prefix(3)) == [.metadata, .videoHeader, .audioHeader], "connection \(number): \(kinds.prefix(6))")
            #expect(kinds.contains(.audioFrame), "connection \(number) carried no audio")
            // No inter frame before the first keyframe; audio does not wait for it.
            let firstKey = try #require(kinds.firstIndex(of: .keyframe))
            #expect(!kinds[..<firstKey].contains(.interFrame))
            // One timeline: timestamps never go back, across both tracks.
            let stamps = items.map(\.timestamp)
            #expect(zip(stamps, stamps.dropFirst()).allSatisfy { $0 <= $1 }, "connection \(number): \(stamps.prefix(40))")
            // The metadata names the AAC track.
            let values = try Self.metadata(messages)
            #expect(values.audioCodecID == 10 && values.audioSampleRate == 48000 && values.videoCodecID == 7)
        }
        // In the first connection audio and video start together (the same capture instant).
        let first = Self.items(try PublisherReconnectTests.messages(sent[0]))
        let firstVideo = try #require(first.first { $0.item == .keyframe }?.timestamp)
        let firstAudio = try #require(first.first { $0.item == .audioFrame }?.timestamp)
        #expect(abs(Int(firstVideo) - Int(firstAudio)) <= 50, "video at \(firstVideo) ms, audio at \(firstAudio) ms")
        #expect(sink.status.reconnects == 1)
    }

    @Test("audio only: metadata without video keys and the AAC header start each connection of a reconnect, no video at all")
    func audioOnlyReconnect() throws {
        let nginx = try Peers.NginxRTMP()
        defer { nginx.stop() }
        let proxy = try CutProxy(upstreamPort: nginx.port, cutFirstAfter: 12_000)
        defer { proxy.stop() }
        var options = RTMPPublishSink.Options()
        options.backoff = ReconnectBackoff(baseSeconds: 0.2, factor: 1, capSeconds: 0.2, jitter: 0, maxTries: 5)
        let sink = RTMPPublishSink(url: try RTMPURL(parsing: "rtmp://127.0.0.1:\(proxy.port)/live/radio"), options: options)
        let encoder = try AACEncoder()
        let tone = ToneGenerator()
        try sink.open(video: nil, audio: encoder.streamInfo)
        var block: Int64 = 0
        let deadline = Date().addingTimeInterval(10)
        func secondConnectionFrames() throws -> Int {
            let sent = proxy.clientBytes
            guard sent.count >= 2 else { return 0 }
            return Self.items(try PublisherReconnectTests.messages(sent[1])).filter { $0.item == .audioFrame }.count
        }
        while Date() < deadline, try secondConnectionFrames() < 30 {
            // 100 ms of sound at a time, faster than real time.
            for packet in try encoder.encode(tone.frame(start: block * 4800, count: 4800)) { try sink.write(packet) }
            block += 1
            usleep(20_000)
        }
        try sink.close()
        let sent = proxy.clientBytes
        try #require(sent.count >= 2, "the publisher did not reconnect (\(sent.count) connection(s))")
        for (number, bytes) in sent.prefix(2).enumerated() {
            let messages = try PublisherReconnectTests.messages(bytes)
            let kinds = Self.items(messages).map(\.item)
            #expect(Array(kinds.prefix(2)) == [.metadata, .audioHeader], "connection \(number): \(kinds.prefix(4))")
            #expect(Set(kinds.dropFirst(2)) == [.audioFrame], "connection \(number): \(Set(kinds))")
            let values = try Self.metadata(messages)
            #expect(values.hasVideo == false && values.videoCodecID == nil && values.audioCodecID == 10)
        }
    }

    @Test("one capture clock on the wire: each marked frame of the test pattern and its marker beep carry the same time")
    func markerFrameMeetsBeep() throws {
        // LiveLine's relay: nginx-rtmp (live on, no interleave) shifts each track on its
        // own for a player joining mid-stream, by up to a GOP.
        let relay = try RelayServer(configuration: .init(rtmp: RTMPServer.Configuration(port: 0), httpPort: 0, loops: 1))
        defer { relay.shutdown() }
        let url = "rtmp://127.0.0.1:\(relay.rtmpPort)/live/sync"
        var configuration = HosterConfiguration()
        (configuration.width, configuration.height, configuration.bitrateKbps) = (320, 240, 600)
        configuration.keyframeIntervalSeconds = 1
        let hoster = try HosterPipeline(configuration: configuration)
        let sink = RTMPPublishSink(url: try RTMPURL(parsing: url))
        hoster.addSink(sink)
        try hoster.start(frameLimit: 30 * 8)
        defer {
            hoster.stop()
            _ = try? hoster.wait()
        }
        Thread.sleep(forTimeInterval: 0.5)
        let directory = try Peers.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let videoPath = directory.appendingPathComponent("v.gray").path, audioPath = directory.appendingPathComponent("a.pcm").path
        // ffmpeg shifts both tracks by the same start time; showinfo / ashowinfo print the times.
        let decode = try Peers.run("/usr/bin/ffmpeg", ["-v", "info", "-nostdin", "-i", url, "-t", "3.5",
                                                       "-map", "0:v", "-vf", "showinfo", "-f", "rawvideo", "-pix_fmt", "gray", videoPath,
                                                       "-map", "0:a", "-t", "3.5", "-af", "ashowinfo", "-ac", "1", "-f", "s16le", audioPath])
        #expect(decode.status == 0, "\(decode.stderr.suffix(500))")
        func times(_ filter: String) -> [Double] {
            decode.stderr.split(separator: "\n").filter { $0.contains("Parsed_\(filter)_") && $0.contains(" n:") }.compactMap { line in
                line.range(of: "pts_time:").flatMap { Double(line[$0.upperBound...].prefix { !$0.isWhitespace }) }
            }
        }
        let videoTimes = times("showinfo"), audioStart = try #require(times("ashowinfo").first)
        // The marked frame: the one frame of each second whose patch flashes white, brighter
        // than the frames on either side of it.
        let pictures = [UInt8](try Data(contentsOf: URL(fileURLWithPath: videoPath)))
        let size = 320 * 240
        let count = min(videoTimes.count, pictures.count / size)
        var marked: [Double] = []
        if count >= 3 {
            for index in 1..<(count - 1) {
                let flashed = stride(from: index * size, to: (index + 1) * size, by: 3).filter { offset in
                    Int(pictures[offset]) > Int(pictures[offset - size]) + 100 && Int(pictures[offset]) > Int(pictures[offset + size]) + 100
                }.count
                if flashed > 50 { marked.append(videoTimes[index]) }
            }
        }
        let pcm = try Data(contentsOf: URL(fileURLWithPath: audioPath))
        let samples = pcm.withUnsafeBytes { $0.bindMemory(to: Int16.self).map { Float(Int16(littleEndian: $0)) / 32768 } }
        // A beep starts where a 5 ms window first holds mostly 3 kHz: half the window in.
        let beep = ToneDetector(frequency: ToneGenerator.markerFrequency, sampleRate: 48000)
        var onsets: [Double] = []
        var inBeep = false
        for start in stride(from: 0, to: samples.count - 240, by: 24) {
            let now = beep.share(in: samples[start..<start + 240]) > 0.5
            if now, !inBeep { onsets.append(audioStart + Double(start + 120) / 48000) }
            inBeep = now
        }
        try #require(marked.count >= 2 && onsets.count >= 2, "marked frames at \(marked), beeps at \(onsets)")
        for time in marked {
            let nearest = try #require(onsets.min { abs($0 - time) < abs($1 - time) })
            #expect(abs(nearest - time) <= 0.01, "marked frame at \(time) s, beep at \(nearest) s")
        }
    }
}
