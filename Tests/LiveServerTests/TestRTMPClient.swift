import Foundation
@testable import LiveRTMP

/// An RTMP publisher or player for tests, built from LiveRTMP's pure cores over a
/// blocking socket: every step is explicit, so tests can stop reading, send garbage or
/// look at the exact messages a server sends.
// @unchecked: used by one thread at a time (a test may hand it to a sender thread and stop touching it).
final class TestRTMPClient: @unchecked Sendable {
    let socket: TestSocket
    var core: RTMPClientSessionCore
    private(set) var events: [RTMPClientSessionCore.Event] = []
    private(set) var closedByServer = false

    init(port: UInt16, path: String, mode: RTMPClientSessionCore.Mode, receiveBufferSize: Int32? = nil) throws {
        socket = try TestSocket(port: port, receiveBufferSize: receiveBufferSize)
        core = RTMPClientSessionCore(url: try RTMPURL(parsing: "rtmp://127.0.0.1:\(port)/\(path)"), mode: mode)
    }

    /// Handshake, connect and publish/play; returns the event that ended the start
    /// (`.publishing`, `.playing` or `.failed`), nil on a timeout.
    func start(timeout: Double = 5) throws -> RTMPClientSessionCore.Event? {
        var handshake = RTMPHandshakeClient()
        socket.send(handshake.start())
        var leftover: [UInt8] = []
        let deadline = Date().addingTimeInterval(timeout)
        while !handshake.isDone {
            guard case .bytes(let bytes) = socket.receive(timeout: max(0.01, deadline.timeIntervalSinceNow)) else { return nil }
            let step = try handshake.feed(bytes)
            socket.send(step.output)
            leftover = step.leftover
        }
        try core.start()
        socket.send(core.takeOutput())
        if !leftover.isEmpty { events += try core.feed(leftover) }
        return try pump(timeout: deadline.timeIntervalSinceNow) { event in
            switch event {
            case .publishing, .playing, .failed: true
            default: false
            }
        }
    }

    /// Reads and feeds until an event matches `done` (returned) or `timeout` passes (nil).
    @discardableResult
    func pump(timeout: Double, until done: (RTMPClientSessionCore.Event) -> Bool) throws -> RTMPClientSessionCore.Event? {
        let deadline = Date().addingTimeInterval(timeout)
        var checked = 0
        while true {
            while checked < events.count {
                defer { checked += 1 }
                if done(events[checked]) { return events[checked] }
            }
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { return nil }
            switch socket.receive(timeout: left) {
            case .bytes(let bytes):
                events += try core.feed(bytes)
                let output = core.takeOutput()
                if !output.isEmpty { socket.send(output) }
            case .closed:
                closedByServer = true
                return nil
            case .timedOut:
                return nil
            }
        }
    }

    /// The video messages received so far.
    var videoMessages: [RTMPRawMessage] {
        events.compactMap { if case .video(let raw) = $0 { raw } else { nil } }
    }

    func sendVideo(_ payload: [UInt8], timestamp: UInt32) throws {
        try core.sendVideo(payload, timestamp: timestamp)
        socket.send(core.takeOutput())
    }

    func sendAudio(_ payload: [UInt8], timestamp: UInt32) throws {
        try core.sendAudio(payload, timestamp: timestamp)
        socket.send(core.takeOutput())
    }

    /// The audio and video messages received so far, in order ("a" or "v" with the timestamp).
    var mediaStamps: [String] {
        events.compactMap { event in
            switch event {
            case .video(let raw): "v\(raw.timestamp)"
            case .audio(let raw): "a\(raw.timestamp)"
            default: nil
            }
        }
    }

    func sendMetadata(_ metadata: RTMPStreamMetadata) throws {
        try core.sendMetadata(metadata)
        socket.send(core.takeOutput())
    }

    /// Reads whatever the server sent (acknowledgement requests, pings) without blocking long.
    func drain() throws {
        while case .bytes(let bytes) = socket.receive(timeout: 0) {
            events += try core.feed(bytes)
            let output = core.takeOutput()
            if !output.isEmpty { socket.send(output) }
        }
    }
}

/// Synthetic H.264 FLV payloads: not decodable, but shaped as a relay sees them.
enum SyntheticVideo {
    static let sequenceHeader: [UInt8] = [0x17, 0x00, 0, 0, 0, 1, 0x64, 0, 0x1F, 0xFF, 0xE1, 0, 4, 0x67, 0x64, 0, 0x1F, 1, 0, 4, 0x68, 0xEE, 0x3C, 0x80]

    /// A keyframe or inter frame of `size` bytes whose body starts with `index`.
    static func frame(index: Int, keyframe: Bool, size: Int = 2000) -> [UInt8] {
        var payload: [UInt8] = [keyframe ? 0x17 : 0x27, 0x01, 0, 0, 0]
        let body = size - payload.count
        payload += [UInt8(body >> 24 & 0xFF), UInt8(body >> 16 & 0xFF), UInt8(body >> 8 & 0xFF), UInt8(body & 0xFF)]
        payload += [UInt8(index >> 8 & 0xFF), UInt8(index & 0xFF)]
        payload += [UInt8](repeating: UInt8(index & 0x7F), count: max(0, size - payload.count))
        return payload
    }

    /// The frame index written by `frame(index:keyframe:size:)`.
    static func index(of payload: [UInt8]) -> Int? {
        guard payload.count >= 11, payload[1] == 0x01 else { return nil }
        return Int(payload[9]) << 8 | Int(payload[10])
    }

    static func isKeyframe(_ payload: [UInt8]) -> Bool { payload.first.map { $0 >> 4 == 1 } ?? false }
    static func isSequenceHeader(_ payload: [UInt8]) -> Bool { payload.count >= 2 && payload[1] == 0 }
}
