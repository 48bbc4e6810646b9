import Foundation
import Testing
@testable import LiveRTMP

@Suite("FLV tag reader")
struct FLVTagReaderTests {
    /// A stream as `FLVTagWriter` makes it: header, then three tags (one with an
    /// extended timestamp).
    static let tags: [FLVTagReader.Tag] = [
        .init(type: FLVTagWriter.TagType.script, timestamp: 0, payload: [2, 0, 10] + Array("onMetaData".utf8)),
        .init(type: FLVTagWriter.TagType.video, timestamp: 40, payload: [0x17, 1, 0, 0, 0, 0xAA, 0xBB]),
        .init(type: FLVTagWriter.TagType.audio, timestamp: 0x0123_4567, payload: [0xAF, 1, 0x21]),
    ]

    static var stream: [UInt8] {
        var bytes = FLVTagWriter.header(hasAudio: true, hasVideo: true)
        for tag in tags { FLVTagWriter.appendTag(type: tag.type, timestamp: tag.timestamp, payload: tag.payload, to: &bytes) }
        return bytes
    }

    static func readAll(_ pieces: [ArraySlice<UInt8>], maxTagBytes: Int = FLVTagReader.defaultMaxTagBytes) throws -> [FLVTagReader.Tag] {
        var reader = FLVTagReader(maxTagBytes: maxTagBytes)
        var tags: [FLVTagReader.Tag] = []
        for piece in pieces {
            reader.append(contentsOf: piece)
            while let tag = try reader.next() { tags.append(tag) }
        }
        return tags
    }

    @Test("the writer's stream reads back tag for tag: type, timestamp with its extended byte, payload")
    func roundTrip() throws {
        var reader = FLVTagReader()
        reader.append(contentsOf: Self.stream)
        var tags: [FLVTagReader.Tag] = []
        while let tag = try reader.next() { tags.append(tag) }
        #expect(tags == Self.tags)
        #expect(reader.header == FLVTagReader.Header(hasAudio: true, hasVideo: true))
        #expect(reader.tagCount == 3)
        #expect(reader.bufferedByteCount == 0)
    }

    @Test("split at every offset, and fed byte by byte, the same tags come out")
    func splitAnywhere() throws {
        let stream = Self.stream[...]
        for split in 0...stream.count {
            let tags = try Self.readAll([stream.prefix(split), stream.dropFirst(split)])
            #expect(tags == Self.tags, "split at \(split)")
        }
        #expect(try Self.readAll(stream.indices.map { stream[$0...$0] }) == Self.tags)
    }

    @Test("one byte short of a tag gives nothing; the last byte gives the tag")
    func oneShort() throws {
        let stream = Self.stream
        let end = 13 + 11 + Self.tags[0].payload.count  // header, first tag, without its PreviousTagSize
        var reader = FLVTagReader()
        reader.append(contentsOf: stream[..<(end - 1)])
        #expect(try reader.next() == nil)
        reader.append(contentsOf: stream[(end - 1)..<end])
        #expect(try reader.next() == Self.tags[0])
        #expect(try reader.next() == nil)
    }

    @Test("what is not FLV is refused from its first byte: an HTML page, an RTMP handshake")
    func notFLV() {
        var reader = FLVTagReader()
        reader.append(contentsOf: Array("<".utf8))
        #expect(throws: FLVTagReader.Error.notFLV) { try reader.next() }
        // Spent: the same error again, nothing held.
        reader.append(contentsOf: Self.stream)
        #expect(throws: FLVTagReader.Error.notFLV) { try reader.next() }
        #expect(reader.bufferedByteCount == 0)
        var rtmp = FLVTagReader()
        rtmp.append(contentsOf: [3, 0, 0, 0])
        #expect(throws: FLVTagReader.Error.notFLV) { try rtmp.next() }
    }

    @Test("a bad header: version 2, a header size below 9 or past the budget")
    func badHeader() {
        var version = Self.stream
        version[3] = 2
        #expect(throws: FLVTagReader.Error.unsupportedVersion(2)) { try Self.readAll([version[...]]) }
        var small = Self.stream
        small[8] = 8
        #expect(throws: FLVTagReader.Error.badHeaderSize(8)) { try Self.readAll([small[...]]) }
        var huge = Self.stream
        huge[5] = 0x7F
        #expect(throws: FLVTagReader.Error.badHeaderSize(0x7F00_0009)) { try Self.readAll([huge[...]]) }
    }

    @Test("a longer header is skipped to its DataOffset")
    func longerHeader() throws {
        var stream = Self.stream
        stream[8] = 12
        stream.insert(contentsOf: [0xEE, 0xEE, 0xEE], at: 9)
        #expect(try Self.readAll([stream[...]]) == Self.tags)
    }

    @Test("a tag over the budget is refused from its header, before its payload arrives")
    func tagTooLarge() {
        var bytes = FLVTagWriter.header(hasAudio: false, hasVideo: true)
        bytes += [9, 0x10, 0, 0, 0, 0, 0, 0, 0, 0, 0]  // a 1 MiB video tag's header alone
        #expect(throws: FLVTagReader.Error.tagTooLarge(size: 0x10_0000, limit: 1000)) {
            try Self.readAll([bytes[...]], maxTagBytes: 1000)
        }
    }

    @Test("a PreviousTagSize that does not match its tag: out of step, refused")
    func previousTagSizeMismatch() {
        var stream = Self.stream
        let previousOfFirst = 13 + 11 + Self.tags[0].payload.count
        stream[previousOfFirst + 3] &+= 1
        let expected = UInt32(11 + Self.tags[0].payload.count)
        #expect(throws: FLVTagReader.Error.previousTagSizeMismatch(expected: expected, found: expected + 1)) {
            try Self.readAll([stream[...]])
        }
        var first = Self.stream
        first[12] = 1
        #expect(throws: FLVTagReader.Error.previousTagSizeMismatch(expected: 0, found: 1)) { try Self.readAll([first[...]]) }
    }

    @Test("an encrypted tag (the Filter bit) is refused")
    func encrypted() {
        var stream = Self.stream
        stream[13] |= 0x20
        #expect(throws: FLVTagReader.Error.encryptedTag) { try Self.readAll([stream[...]]) }
    }

    @Test("ffmpeg's FLV muxer: onMetaData first, the AVC and AAC sequence headers, then frames, all read")
    func ffmpegStream() throws {
        let bytes = try Self.ffmpegFLV()
        let tags = try Self.readAll([bytes[...]])
        #expect(tags.first?.type == FLVTagWriter.TagType.script)
        let video = tags.filter { $0.type == FLVTagWriter.TagType.video }
        let audio = tags.filter { $0.type == FLVTagWriter.TagType.audio }
        #expect(video.first.map { $0.payload.prefix(2) == [0x17, 0] } == true, "the AVC sequence header comes first")
        #expect(audio.first.map { $0.payload.prefix(2) == [0xAF, 0] } == true, "the AAC sequence header comes first")
        // 0.5 s at 10 fps (ffmpeg may end with an end-of-sequence tag too).
        let frames = video.filter { $0.payload.count > 1 && $0.payload[1] == 1 }
        #expect((5...6).contains(frames.count), "\(frames.count) frames")
        #expect(try FLVVideoTag(parsing: frames[0].payload).isKeyframe)
        #expect(zip(frames, frames.dropFirst()).allSatisfy { $0.timestamp < $1.timestamp })
    }

    /// 0.5 s of H.264 and AAC as ffmpeg writes FLV.
    static func ffmpegFLV() throws -> [UInt8] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
        process.arguments = ["-hide_banner", "-loglevel", "error", "-f", "lavfi", "-i", "testsrc=size=64x48:rate=10",
                             "-f", "lavfi", "-i", "sine=f=440:sample_rate=44100", "-t", "0.5", "-c:v", "libx264",
                             "-pix_fmt", "yuv420p", "-c:a", "aac", "-f", "flv", "-"]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0)
        return Array(data)
    }
}
