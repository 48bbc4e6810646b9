import Foundation
import LiveCore

/// One request a participant sends over the line's WebSocket (DESIGN.md §4), a JSON
/// text message such as `{"op":"apply","id":3}`. `id` is the client's own number, echoed
/// in the `reply` event that answers the request so a kit can match answers.
///
/// Fields per op (the anyRTC SDK method each stands for):
/// - hoster: `create` (liveId, userId, userData ≤ 512 B, liveInfo ≤ 1024 B, token,
///   maxCohosts: what its mix shows; createRTCLine), `accept` / `reject` / `hangup` (peerId; acceptRTCLine,
///   rejectRTCLine, hangupRTCLine), `close` (closeRTCLine), `setMaxCohosts` (maxCohosts:
///   what the mix shows after a template change; audioLine: true for an audio line),
///   `setLive` (live: the hoster's push started or stopped; create carries it too),
///   `shareOpen` (shareType, shareInfo ≤ 1024 B: the hoster shares a picture, such as its
///   screen; the anyRTC SDK's screen share) and `shareClose`, `audioLevel` (peerId, level
///   0–100, showTime: a co-host's voice level as the hoster mixes it; the room hears
///   `remoteAudioActive`)
/// - guest: `join` (liveId, userId, userData; joinRTCLine), `apply` (applyRTCLine),
///   `cancel` and `hangup` (hangupRTCLine: withdraw an application, leave the line),
///   `leave` (leaveRTCLine), `setAVStatus` (audio, video; setLocalAudio/VideoEnable)
/// - both: `message` (type "normal"|"barrage", userName ≤ 256 B required, header
///   ≤ 512 B, content ≤ 1024 B required; sendUserMessage), `heartbeat`, `renewToken`
///   (token; renewToken after tokenWillExpire)
///
/// Who may create: with tokens checked, a token allowing `line:host` on the live id
/// (`token` here or `?token=` on `/line`); join needs `line:guest` or `line:host`, and
/// the token's `sub` is the user id. Without tokens, the publisher of the stream named
/// like the line: `stream` is its "APP/NAME" (NAME = liveId) and `lineKey` the value of
/// `lineKey=` in the query it published with (`rtmp://HOST/APP/NAME?lineKey=SECRET`).
public struct LineRequest: Codable, Equatable, Sendable {
    public enum Op: String, Codable, Sendable, CaseIterable {
        case create, accept, reject, hangup, close, setMaxCohosts, setLive
        case join, apply, cancel, leave, setAVStatus
        case message, heartbeat, renewToken
        case shareOpen, shareClose
        case audioLevel
    }

    public var op: Op
    public var id: Int?
    public var liveId: String?
    public var userId: String?
    public var userData: String?
    public var liveInfo: String?
    public var token: String?
    public var peerId: String?
    /// The message type: "normal" (default) or "barrage".
    public var type: String?
    public var userName: String?
    public var header: String?
    public var content: String?
    public var audio: Bool?
    public var video: Bool?
    /// create without tokens: the hoster's stream, "APP/NAME", NAME being the liveId.
    public var stream: String?
    /// create without tokens: the `lineKey=` value of the hoster's publish query.
    public var lineKey: String?
    /// create and setMaxCohosts: the most co-hosts the hoster's mix can show; the line
    /// then accepts no more (and never more than the server's own limit). nil at create:
    /// the server's limit.
    public var maxCohosts: Int?
    /// create: true for an audio line (the hoster lives in audio mode, the anyRTC SDK's
    /// ARLivingMediaModeAudio): co-hosts push sound only, and the line's members hear it
    /// in `applicationResult`, `cohostOpened` and `cohostClosed`. nil or false: a video line.
    public var audioLine: Bool?
    /// create and setLive: whether the hoster's push is on (the guests hear liveStart /
    /// liveStop when it changes, and a joining guest hears liveStart while it is on).
    /// nil at create: on.
    public var live: Bool?
    /// shareOpen: the kind of share, the app's own number (the anyRTC SDK's share type,
    /// passed through untouched; nil: 0).
    public var shareType: Int?
    /// shareOpen: what is shared, for the room (the SDK's shareInfo), ≤ 1024 bytes.
    public var shareInfo: String?
    /// audioLevel: a co-host's voice level, 0–100, and how often the hoster reports it (ms).
    public var level: Int?
    public var showTime: Int?

    public init(op: Op, id: Int? = nil, liveId: String? = nil, userId: String? = nil, userData: String? = nil,
                liveInfo: String? = nil, token: String? = nil, peerId: String? = nil, type: String? = nil,
                userName: String? = nil, header: String? = nil, content: String? = nil,
                audio: Bool? = nil, video: Bool? = nil, stream: String? = nil, lineKey: String? = nil,
                maxCohosts: Int? = nil, audioLine: Bool? = nil, live: Bool? = nil) {
        self.op = op
        self.id = id
        self.liveId = liveId
        self.userId = userId
        self.userData = userData
        self.liveInfo = liveInfo
        self.token = token
        self.peerId = peerId
        self.type = type
        self.userName = userName
        self.header = header
        self.content = content
        self.audio = audio
        self.video = video
        self.stream = stream
        self.lineKey = lineKey
        self.maxCohosts = maxCohosts
        self.audioLine = audioLine
        self.live = live
    }

    /// The request as one JSON text message.
    public var jsonText: String { LineJSON.encode(self) }

    /// Parses a text message; a malformed one is answered with code 4 and the reason
    /// (the `id` is kept when it could still be read).
    public static func parse(_ text: String) -> Result<LineRequest, LineRefusal> {
        let data = Data(text.utf8)
        do {
            return .success(try JSONDecoder().decode(LineRequest.self, from: data))
        } catch {
            let id = (try? JSONSerialization.jsonObject(with: data) as? [String: Any])?["id"] as? Int
            let op = (try? JSONSerialization.jsonObject(with: data) as? [String: Any])?["op"] as? String
            let reason = op.map { LineRequest.Op(rawValue: $0) == nil ? "unknown op '\($0)'" : "malformed '\($0)' request" }
                ?? "not a line request (a JSON object with \"op\")"
            return .failure(LineRefusal(code: .invalidParams, message: reason, id: id))
        }
    }
}

/// A request refused before it reached a room: code and reason for the `reply`.
public struct LineRefusal: Error, Equatable, Sendable {
    public var code: LiveCode
    public var message: String
    public var id: Int?

    /// A refusal with `code` and a human `message`, answering the request numbered `id`.
    public init(code: LiveCode, message: String, id: Int? = nil) {
        self.code = code
        self.message = message
        self.id = id
    }
}

/// The line's JSON coding: sorted keys, no escaped slashes, nil fields left out.
package enum LineJSON {
    package static func encode<Value: Encodable>(_ value: Value) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Only strings, numbers and booleans: encoding cannot fail.
        return (try? String(decoding: encoder.encode(value), as: UTF8.self)) ?? "{}"
    }
}

/// Checks that text is exactly one JSON value by RFC 8259's grammar: no trailing commas,
/// comments, byte-order mark, single quotes, NaN, leading zeros or raw control
/// characters, and no more than `maxDepth` arrays and objects inside each other. Pure.
package struct LineJSONValidator {
    private let bytes: [UInt8]
    private let maxDepth: Int
    private var index = 0

    /// True when `text` is one strict JSON value (whitespace around it allowed).
    package static func isStrict(_ text: String, maxDepth: Int = 32) -> Bool {
        var validator = LineJSONValidator(bytes: Array(text.utf8), maxDepth: maxDepth)
        validator.skipSpace()
        guard validator.value(depth: 0) else { return false }
        validator.skipSpace()
        return validator.index == validator.bytes.count
    }

    private init(bytes: [UInt8], maxDepth: Int) {
        self.bytes = bytes
        self.maxDepth = maxDepth
    }

    private var peek: UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func skipSpace() {
        while let byte = peek, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { index += 1 }
    }

    private mutating func take(_ byte: UInt8) -> Bool {
        guard peek == byte else { return false }
        index += 1
        return true
    }

    private mutating func value(depth: Int) -> Bool {
        guard let first = peek else { return false }
        switch first {
        case UInt8(ascii: "{"): return container(close: UInt8(ascii: "}"), keyed: true, depth: depth + 1)
        case UInt8(ascii: "["): return container(close: UInt8(ascii: "]"), keyed: false, depth: depth + 1)
        case UInt8(ascii: "\""): return string()
        case UInt8(ascii: "t"): return literal("true")
        case UInt8(ascii: "f"): return literal("false")
        case UInt8(ascii: "n"): return literal("null")
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return number()
        default: return false
        }
    }

    private mutating func container(close: UInt8, keyed: Bool, depth: Int) -> Bool {
        guard depth <= maxDepth else { return false }
        index += 1
        skipSpace()
        if take(close) { return true }
        while true {
            if keyed {
                guard string() else { return false }
                skipSpace()
                guard take(UInt8(ascii: ":")) else { return false }
                skipSpace()
            }
            guard value(depth: depth) else { return false }
            skipSpace()
            if take(close) { return true }
            guard take(UInt8(ascii: ",")) else { return false }
            skipSpace()
        }
    }

    private mutating func string() -> Bool {
        guard take(UInt8(ascii: "\"")) else { return false }
        while let byte = peek {
            index += 1
            switch byte {
            case UInt8(ascii: "\""): return true
            case 0..<0x20: return false
            case UInt8(ascii: "\\"):
                guard let escaped = peek else { return false }
                index += 1
                switch escaped {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                     UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                    continue
                case UInt8(ascii: "u"):
                    for _ in 0..<4 {
                        guard let hex = peek, Self.isHexDigit(hex) else { return false }
                        index += 1
                    }
                default:
                    return false
                }
            default:
                continue
            }
        }
        return false
    }

    private mutating func number() -> Bool {
        _ = take(UInt8(ascii: "-"))
        if !take(UInt8(ascii: "0")) {
            guard digits() else { return false }
        }
        if take(UInt8(ascii: ".")) {
            guard digits() else { return false }
        }
        if take(UInt8(ascii: "e")) || take(UInt8(ascii: "E")) {
            if !take(UInt8(ascii: "+")) { _ = take(UInt8(ascii: "-")) }
            guard digits() else { return false }
        }
        return true
    }

    /// One or more decimal digits.
    private mutating func digits() -> Bool {
        let start = index
        while let byte = peek, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) { index += 1 }
        return index > start
    }

    private mutating func literal(_ word: String) -> Bool {
        for byte in word.utf8 {
            guard take(byte) else { return false }
        }
        return true
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
            || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte)
    }
}
