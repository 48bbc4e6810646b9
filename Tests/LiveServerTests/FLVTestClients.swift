import Foundation
import LiveNet
import LiveTestSupport
@testable import LiveServer

/// One FLV tag as a test reads it back.
struct TestFLVTag: Equatable {
    var type: UInt8
    var timestamp: UInt32
    var payload: [UInt8]

    var isVideo: Bool { type == 9 }
    var isAudio: Bool { type == 8 }
    var isScript: Bool { type == 18 }
    /// An AVC or AAC sequence header.
    var isSequenceHeader: Bool { (isVideo || isAudio) && payload.count >= 2 && payload[1] == 0 }
    var isKeyframe: Bool { isVideo && payload.first.map { $0 >> 4 == 1 } == true && !isSequenceHeader }
}

/// A checking FLV parser for tests: the 13-byte header, then whole tags whose
/// PreviousTagSize matches; a half-received tag at the end is left for later.
enum TestFLV {
    struct Malformed: Error, CustomStringConvertible { let description: String }

    /// The header's flags byte and the whole tags in `bytes`; throws on anything malformed.
    static func parse(_ bytes: [UInt8]) throws -> (flags: UInt8, tags: [TestFLVTag]) {
        guard bytes.count >= 13 else { return (0, []) }
        guard Array(bytes[0..<4]) == [0x46, 0x4C, 0x56, 0x01], Array(bytes[5..<13]) == [0, 0, 0, 9, 0, 0, 0, 0] else {
            throw Malformed(description: "not an FLV header: \(bytes.prefix(13))")
        }
        var tags: [TestFLVTag] = []
        var offset = 13
        while offset + 11 <= bytes.count {
            let size = Int(bytes[offset + 1]) << 16 | Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            guard offset + 11 + size + 4 <= bytes.count else { break }
            let timestamp = UInt32(bytes[offset + 7]) << 24 | UInt32(bytes[offset + 4]) << 16 | UInt32(bytes[offset + 5]) << 8
                | UInt32(bytes[offset + 6])
            let end = offset + 11 + size
            let previous = Int(bytes[end]) << 24 | Int(bytes[end + 1]) << 16 | Int(bytes[end + 2]) << 8 | Int(bytes[end + 3])
            guard previous == 11 + size, [8, 9, 18].contains(bytes[offset]) else {
                throw Malformed(description: "tag at \(offset): type \(bytes[offset]), size \(size), PreviousTagSize \(previous)")
            }
            tags.append(TestFLVTag(type: bytes[offset], timestamp: timestamp, payload: Array(bytes[(offset + 11)..<end])))
            offset = end + 4
        }
        return (bytes[4], tags)
    }
}

/// An HTTP-FLV viewer over a blocking socket: sends the GET, reads the head and takes
/// the body apart (chunked, or until close), so tests see exactly what went out.
final class TestFLVViewer {
    let socket: TestSocket
    private(set) var status = 0
    private(set) var head = ""
    /// The body so far, without the chunked framing.
    private(set) var body: [UInt8] = []
    /// The last chunk arrived (chunked) or the server closed.
    private(set) var ended = false
    private(set) var sawLastChunk = false
    private var pending: [UInt8] = []
    private var chunked = false

    init(port: UInt16, path: String, version: String = "HTTP/1.1", headers: [String] = [], receiveBufferSize: Int32? = nil) throws {
        socket = try TestSocket(port: port, receiveBufferSize: receiveBufferSize)
        let fields = (["Host: 127.0.0.1"] + headers).map { $0 + "\r\n" }.joined()
        socket.send(Array("GET \(path) \(version)\r\n\(fields)\r\n".utf8))
    }

    /// Reads until the response head is in; false on a timeout or close before it.
    func readHead(timeout: Double = 5) -> Bool {
        read(timeout: timeout) { self.status != 0 }
        return status != 0
    }

    /// The value of a header field of the head (case-insensitive name).
    func header(_ name: String) -> String? {
        for line in head.components(separatedBy: "\r\n").dropFirst() {
            let parts = line.split(separator: ":", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == name.lowercased() { return parts[1].trimmingCharacters(in: .whitespaces) }
        }
        return nil
    }

    /// Reads until `done` holds, the body ends or `timeout` passes.
    func read(timeout: Double, until done: () -> Bool = { false }) {
        let deadline = Date().addingTimeInterval(timeout)
        while !done(), !ended, deadline.timeIntervalSinceNow > 0 {
            switch socket.receive(timeout: deadline.timeIntervalSinceNow) {
            case .bytes(let bytes):
                pending += bytes
                take()
            case .closed:
                ended = true
            case .timedOut:
                return
            }
        }
    }

    /// The FLV tags of the body so far.
    func tags() throws -> [TestFLVTag] { try TestFLV.parse(body).tags }

    private func take() {
        if status == 0 {
            guard let end = pending.firstRange(of: [0x0D, 0x0A, 0x0D, 0x0A]) else { return }
            head = String(decoding: pending[..<end.lowerBound], as: UTF8.self)
            status = Int(head.split(separator: " ").dropFirst().first ?? "") ?? -1
            chunked = header("Transfer-Encoding")?.lowercased() == "chunked"
            pending.removeFirst(end.upperBound)
        }
        guard chunked else {
            body += pending
            pending.removeAll()
            return
        }
        while let line = pending.firstRange(of: [0x0D, 0x0A]) {
            let sizeText = String(decoding: pending[..<line.lowerBound], as: UTF8.self)
            guard let size = Int(sizeText, radix: 16) else {
                body = []
                ended = true
                return
            }
            guard pending.count >= line.upperBound + size + 2 else { return }
            body += pending[line.upperBound..<(line.upperBound + size)]
            pending.removeFirst(line.upperBound + size + 2)
            if size == 0 {
                sawLastChunk = true
                ended = true
                return
            }
        }
    }
}

/// A WebSocket FLV viewer on a LiveNet loop: keeps every binary message and the close.
final class TestWebSocketViewer: Sendable {
    let messages = Locked<[[UInt8]]>([])
    let closeCode = Locked<UInt16?>(nil)
    let failure = Locked<String?>(nil)
    let opened = Locked(false)

    init(url: String, on loop: EventLoop) {
        WebSocketClient.connect(url: url, on: loop, maxMessage: 4 << 20) { [self] result in
            switch result {
            case .failure(let error):
                failure.update { $0 = "\(error)" }
            case .success(let socket):
                opened.update { $0 = true }
                socket.onMessage = { [self] _, message in
                    if case .binary(let bytes) = message { messages.update { $0.append(bytes) } }
                }
                socket.onClose = { [self] _, code, _ in closeCode.update { $0 = code } }
            }
        }
    }
}
