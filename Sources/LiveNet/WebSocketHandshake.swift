import Foundation
import LiveCore

/// The opening handshake of RFC 6455 §4, as pure functions over requests, responses and
/// header bytes, shared by the server upgrade and `WebSocketClient`.
public enum WebSocketHandshake {
    /// The GUID every server appends to the client's key (§1.3).
    public static let guid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

    /// `Sec-WebSocket-Accept` for a client's `Sec-WebSocket-Key`: base64(SHA-1(key + GUID)).
    public static func acceptValue(forKey key: String) -> String {
        Data(SHA1.digest(Array((key + guid).utf8))).base64EncodedString()
    }

    /// A fresh `Sec-WebSocket-Key`: 16 random bytes in base64.
    public static func makeKey() -> String {
        var generator = SystemRandomNumberGenerator()
        return Data((0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }).base64EncodedString()
    }

    /// Checks an upgrade request (§4.2.1) and gives the 101 response to send, or the
    /// error response (400, or 426 naming version 13) with the reason in its body.
    public static func serverResponse(for request: HTTPRequest) -> Result<HTTPResponse, WebSocketError> {
        func refuse(_ reason: String) -> Result<HTTPResponse, WebSocketError> {
            .failure(.handshake(reason))
        }
        guard request.method == "GET" else { return refuse("the upgrade must be a GET, not \(request.method)") }
        guard request.minorVersion >= 1 else { return refuse("the upgrade needs HTTP/1.1") }
        guard request.headers.tokens("Upgrade").contains("websocket") else { return refuse("no 'Upgrade: websocket' header") }
        guard request.headers.tokens("Connection").contains("upgrade") else { return refuse("no 'Connection: Upgrade' header") }
        guard request.headers["Sec-WebSocket-Version"]?.trimmingCharacters(in: .whitespaces) == "13" else {
            return refuse("Sec-WebSocket-Version must be 13")
        }
        guard let key = request.headers["Sec-WebSocket-Key"]?.trimmingCharacters(in: .whitespaces),
              let decoded = Data(base64Encoded: key), decoded.count == 16 else {
            return refuse("Sec-WebSocket-Key must be 16 bytes in base64")
        }
        var headers = HTTPHeaders()
        headers.add("Upgrade", "websocket")
        headers.add("Connection", "Upgrade")
        headers.add("Sec-WebSocket-Accept", acceptValue(forKey: key))
        return .success(HTTPResponse(status: .switchingProtocols, headers: headers))
    }

    /// The response for a refused upgrade: 426 with the supported version when the
    /// version was wrong, 400 otherwise, the reason as text.
    public static func refusal(_ error: WebSocketError) -> HTTPResponse {
        var response = HTTPResponse.text("\(error)\n", status: .badRequest)
        if case .handshake(let reason) = error, reason.contains("Version") {
            response.status = HTTPStatus(code: 426, reason: "Upgrade Required")
            response.headers.set("Sec-WebSocket-Version", "13")
        }
        response.headers.set("Connection", "close")
        return response
    }

    /// The client's upgrade request for `path` on `host` (with its port when not 80).
    public static func clientRequest(host: String, port: UInt16, path: String, key: String) -> [UInt8] {
        let authority = port == 80 ? host : "\(host.contains(":") ? "[\(host)]" : host):\(port)"
        let text = "GET \(path.isEmpty ? "/" : path) HTTP/1.1\r\nHost: \(authority)\r\nUpgrade: websocket\r\n"
            + "Connection: Upgrade\r\nSec-WebSocket-Key: \(key)\r\nSec-WebSocket-Version: 13\r\n\r\n"
        return Array(text.utf8)
    }

    /// Looks for the end of the server's response head in `bytes`: nil while it is
    /// incomplete, else the head's length (including the blank line) once it checks out
    /// as a 101 answering `key` (§4.1, the client's checks).
    public static func parseServerResponse(_ bytes: [UInt8], key: String, maxHead: Int = 8192) throws(WebSocketError) -> Int? {
        let terminator: [UInt8] = [13, 10, 13, 10]
        var end: Int?
        if bytes.count >= 4 {
            for index in 0...(bytes.count - 4) where bytes[index..<index + 4].elementsEqual(terminator) {
                end = index + 4
                break
            }
        }
        guard let end else {
            if bytes.count > maxHead { throw .handshake("response head longer than \(maxHead) bytes") }
            return nil
        }
        let lines = String(decoding: bytes[0..<end - 4], as: UTF8.self).components(separatedBy: "\r\n")
        let status = lines[0].split(separator: " ", maxSplits: 2)
        guard status.count >= 2, status[0].hasPrefix("HTTP/1.") else { throw .handshake("malformed status line '\(lines[0])'") }
        guard status[1] == "101" else { throw .handshake("the server answered '\(lines[0])' instead of 101") }
        var headers = HTTPHeaders()
        for line in lines.dropFirst() where !line.isEmpty {
            guard let colon = line.firstIndex(of: ":") else { throw .handshake("malformed header line '\(line)'") }
            headers.add(String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        guard headers.tokens("Upgrade").contains("websocket") else { throw .handshake("101 without 'Upgrade: websocket'") }
        guard headers.tokens("Connection").contains("upgrade") else { throw .handshake("101 without 'Connection: Upgrade'") }
        guard headers["Sec-WebSocket-Accept"] == acceptValue(forKey: key) else {
            throw .handshake("Sec-WebSocket-Accept does not answer the key")
        }
        return end
    }
}
