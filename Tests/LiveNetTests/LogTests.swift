import Foundation
import Glibc
import LiveTestSupport
import Testing
@testable import LiveCore

/// LiveCore's Log, tested here with the event loops it must never block.
@Suite("Log")
struct LogTests {
    @Test("logging into a pipe nobody reads never blocks: lines beyond the queue are dropped, counted and reported later")
    func neverBlocksOnAFullPipe() throws {
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        defer { close(ends[0]) }
        let writer = LogWriter(fd: ends[1], capacity: 100)
        let line = String(repeating: "x", count: 199) + "\n"
        // 20 000 lines of 200 bytes: 4 MB, far more than the 64 KiB a pipe holds, so
        // the writer thread blocks on write(2) and the queue fills up behind it.
        let start = Date()
        for _ in 0..<20_000 { writer.enqueue(line) }
        let elapsed = Date().timeIntervalSince(start)
        #expect(elapsed < 2, "enqueueing took \(elapsed) s")
        let dropped = writer.droppedCount
        #expect(dropped > 0)
        #expect(dropped < 20_000)

        // A reader appears: everything queued comes out, with the drops reported.
        let reader = ends[0]
        let text = Locked("")
        let drained = DispatchSemaphore(value: 0)
        Thread {
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(reader, $0.baseAddress, $0.count) }
                if count <= 0 { break }
                text.update { $0 += String(decoding: buffer[0..<count], as: UTF8.self) }
            }
            drained.signal()
        }.start()
        writer.flush(timeout: .seconds(5))
        close(ends[1])
        #expect(drained.wait(timeout: .now() + 5) == .success)
        let lines = text.value.split(separator: "\n")
        let written = lines.filter { $0 == line.dropLast() }.count
        let prefix = "liveline warning: ", suffix = " log line(s) dropped (the log queue was full)"
        let reported = lines.filter { $0.hasPrefix(prefix) && $0.hasSuffix(suffix) }
            .compactMap { Int($0.dropFirst(prefix.count).dropLast(suffix.count)) }
        #expect(!reported.isEmpty)
        #expect(reported.reduce(0, +) == dropped)
        #expect(written + dropped == 20_000)
        #expect(lines.count == written + reported.count)
    }

    @Test("Log.threshold (the anyRTC SDK's setLogLevel): lines below it are not written, .none writes nothing")
    func thresholdFilters() throws {
        // What Log writes to stderr goes into a pipe for the moment of the test.
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        defer { close(ends[0]) }
        let saved = dup(2)
        try #require(saved >= 0 && dup2(ends[1], 2) == 2)
        close(ends[1])
        let marker = UUID().uuidString
        let before = Log.threshold
        for (level, name) in [(LogLevel.error, "error"), (.info, "info"), (.none, "none")] {
            Log.threshold = level
            Log.info("\(marker) info at \(name)")
            Log.warning("\(marker) warning at \(name)")
            Log.error("\(marker) error at \(name)")
        }
        Log.threshold = before
        Log.flush()
        dup2(saved, 2)
        close(saved)
        var text = ""
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(ends[0], $0.baseAddress, $0.count) }
            if count <= 0 { break }
            text += String(decoding: buffer[0..<count], as: UTF8.self)
        }
        let written = text.split(separator: "\n").filter { $0.contains(marker) }
            .compactMap { line in line.range(of: "liveline ").map { line[$0.lowerBound...].replacingOccurrences(of: marker + " ", with: "") } }
        #expect(written == [
            "liveline error: error at error",
            "liveline info: info at info", "liveline warning: warning at info", "liveline error: error at info",
        ])
    }

    @Test("flush returns once everything queued is written")
    func flushWritesEverything() throws {
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        defer { close(ends[0]) }
        let writer = LogWriter(fd: ends[1], capacity: 1000)
        for index in 0..<100 { writer.enqueue("line \(index)\n") }
        writer.flush(timeout: .seconds(5))
        close(ends[1])
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(ends[0], $0.baseAddress, $0.count) }
            if count <= 0 { break }
            bytes += buffer[0..<count]
        }
        let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n")
        #expect(lines.count == 100)
        #expect(lines.last == "line 99")
        #expect(writer.droppedCount == 0)
    }

    @Test("with timestamps (liveline serve), a line starts with the UTC time to the millisecond")
    func timestampedLine() {
        // 2026-12-01 21:58:24.123456 UTC
        let micros: UInt64 = 1_796_162_304_123_456
        #expect(Log.timestamp(micros) == "2026-12-01T21:58:24.123Z")
        #expect(Log.line(.info, "rtmp 127.0.0.1:5000: playing live/x", wallMicros: micros)
            == "2026-12-01T21:58:24.123Z liveline info: rtmp 127.0.0.1:5000: playing live/x\n")
        #expect(Log.line(.warning, "w", wallMicros: nil) == "liveline warning: w\n")
    }
}

@Suite("LogThrottle")
struct LogThrottleTests {
    @Test("the first occurrence is reported at once, the rest of a burst once a second with its count")
    func burst() {
        var throttle = LogThrottle()
        #expect(throttle.record(nowMicros: 10_000_000) == 1)
        #expect(throttle.dueMicros == nil)
        for offset in 1...50 as ClosedRange<UInt64> { #expect(throttle.record(nowMicros: 10_000_000 + offset * 1000) == nil) }
        #expect(throttle.pending == 50)
        #expect(throttle.dueMicros == 11_000_000)
        #expect(throttle.take(nowMicros: 10_999_999) == nil)
        #expect(throttle.take(nowMicros: 11_000_000) == 50)
        #expect(throttle.take(nowMicros: 13_000_000) == nil)
        // Quiet for a while: the next one is reported at once again.
        #expect(throttle.record(nowMicros: 13_000_000) == 1)
        #expect(throttle.total == 52)
    }
}
