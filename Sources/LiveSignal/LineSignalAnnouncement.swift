import LiveRTMP

/// Where a relay's co-host line signaling listens, as the relay announces it in the
/// information object of every connect `_result`: the AMF0 properties `lineSignalPort`
/// (a number), `lineSignalPath` ("/line") and, only when its HTTP port listens on one
/// address other than the RTMP port's, `lineSignalHost`. A client that reached the
/// relay at rtmp://HOST:PORT/… finds the signaling at ws://HOST:lineSignalPort/line.
/// Other RTMP servers (nginx-rtmp, SRS, a CDN) announce nothing: there is no line there.
///
/// Pure. What a server announces is checked like anything a peer sends: a port in
/// 1…65535, a path of at most 256 printable bytes starting with "/", a host name
/// without spaces, slashes or control characters.
public struct LineSignalAnnouncement: Equatable, Sendable {
    public static let portKey = "lineSignalPort"
    public static let pathKey = "lineSignalPath"
    public static let hostKey = "lineSignalHost"

    public var port: Int
    public var path: String
    /// nil: the host the client reached the RTMP server at.
    public var host: String?

    public init(port: Int, path: String = "/line", host: String? = nil) {
        self.port = port
        self.path = path
        self.host = host
    }

    /// The announcement in a connect `_result`'s information object; nil when there is
    /// none, or when it is malformed.
    public init?(information: AMF0Object) {
        guard let number = information[Self.portKey]?.numberValue, number.rounded() == number,
              number >= 1, number <= 65535 else { return nil }
        let path = information[Self.pathKey]?.stringValue ?? "/line"
        guard path.hasPrefix("/"), path.utf8.count <= 256, Self.isPrintable(path, allowSlash: true) else { return nil }
        var host: String?
        if let announced = information[Self.hostKey]?.stringValue {
            guard !announced.isEmpty, announced.utf8.count <= 253, Self.isPrintable(announced, allowSlash: false) else { return nil }
            host = announced
        }
        self.init(port: Int(number), path: path, host: host)
    }

    /// The properties the relay adds to connect's `_result`.
    public var properties: AMF0Object {
        var object: AMF0Object = [Self.portKey: .number(Double(port)), Self.pathKey: .string(path)]
        if let host { object[Self.hostKey] = .string(host) }
        return object
    }

    /// The signaling URL for a client that reached the RTMP server at `rtmpHost`.
    public func signalURL(rtmpHost: String) -> String {
        let name = host ?? rtmpHost
        return "ws://\(name.contains(":") ? "[\(name)]" : name):\(port)\(path)"
    }

    private static func isPrintable(_ text: String, allowSlash: Bool) -> Bool {
        text.unicodeScalars.allSatisfy { $0.value > 0x20 && $0.value != 0x7F && (allowSlash || $0 != "/") }
    }
}
