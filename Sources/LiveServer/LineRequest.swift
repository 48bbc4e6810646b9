import Foundation
import LiveCore

/// One request a participant sends over the line's WebSocket (DESIGN.md §4), a JSON
/// text message such as `{"op":"apply","id":3}`. `id` is the client's own number, echoed
/// in the `reply` event that answers the request so a kit can match answers.
///
/// Fields per op (the seed method each stands for):
/// - hoster: `create` (liveId, userId, userData ≤ 512 B, liveInfo ≤ 1024 B, token;
///   createRTCLine), `accept` / `reject` / `hangup` (peerId; acceptRTCLine,
///   rejectRTCLine, hangupRTCLine), `close` (closeRTCLine)
/// - guest: `join` (liveId, userId, userData; joinRTCLine), `apply` (applyRTCLine),
///   `cancel` and `hangup` (hangupRTCLine: withdraw an application, leave the line),
///   `leave` (leaveRTCLine), `setAVStatus` (audio, video; setLocalAudio/VideoEnable)
/// - both: `message` (type "normal"|"barrage", userName ≤ 256 B required, header
///   ≤ 512 B, content ≤ 1024 B required; sendUserMessage), `heartbeat`
public struct LineRequest: Codable, Equatable, Sendable {
    public enum Op: String, Codable, Sendable, CaseIterable {
        case create, accept, reject, hangup, close
        case join, apply, cancel, leave, setAVStatus
        case message, heartbeat
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

    public init(op: Op, id: Int? = nil, liveId: String? = nil, userId: String? = nil, userData: String? = nil,
                liveInfo: String? = nil, token: String? = nil, peerId: String? = nil, type: String? = nil,
                userName: String? = nil, header: String? = nil, content: String? = nil,
                audio: Bool? = nil, video: Bool? = nil) {
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
}

/// The line's JSON coding: sorted keys, no escaped slashes, nil fields left out.
enum LineJSON {
    static func encode<Value: Encodable>(_ value: Value) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Only strings, numbers and booleans: encoding cannot fail.
        return (try? String(decoding: encoder.encode(value), as: UTF8.self)) ?? "{}"
    }
}
