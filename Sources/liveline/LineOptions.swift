import Foundation
import LiveCore
import LiveLine
import LiveRTMP

/// The co-host line options `host` and `guest` share: which line, where its signaling
/// server is, and who this participant is.
struct LineOptions {
    var liveId: String
    /// `--signal ws://HOST:PORT/line`; nil: where the RTMP server says its line is.
    var signal: String?
    var userId: String
    var userData = ""

    static let help = """
          --signal URL         the line's signaling server, ws://HOST:PORT/line (default: the one
                               the RTMP server announces; liveline serve does, other servers
                               need it; one that disagrees with the announcement is an error)
          --user-id ID         who this participant is in the room
          --user-data TEXT     what the others see with the user id (≤ 512 bytes)
        """

    /// The options `parse` reads.
    static let names = ["--signal", "--user-id", "--user-data"]

    /// Parses `--signal`, `--user-id`, `--user-data` for the line `liveId`.
    static func parse(_ arguments: inout Arguments, liveId: String, defaultUserId: String) throws -> LineOptions {
        var options = LineOptions(liveId: liveId, userId: defaultUserId)
        options.signal = try signalURL(&arguments, path: "line")
        if let userId = try arguments.value("--user-id") { options.userId = userId }
        if let userData = try arguments.value("--user-data") { options.userData = userData }
        return options
    }

    /// `--signal ws://HOST:PORT/PATH` (the line's or the call's signaling), nil when not given.
    static func signalURL(_ arguments: inout Arguments, path: String) throws -> String? {
        guard let signal = try arguments.value("--signal") else { return nil }
        guard signal.hasPrefix("ws://"), signal.count > 5 else {
            throw UsageError("--signal needs a ws://HOST:PORT/\(path) URL, not '\(signal)'")
        }
        return signal
    }

    /// The line server for the stream at `url`, asked from the RTMP server itself (a line
    /// on another server would accept co-hosts whose push this one refuses); throws,
    /// saying what to pass, when it names none or another than `--signal`.
    func server(for url: RTMPURL) throws -> LineServer {
        do throws(LineServer.DiscoveryError) {
            return try LineServer.discover(rtmp: url, signalURL: signal)
        } catch {
            switch error {
            case .mismatch(_, _, let announced):
                throw LineSetupError("\(error); pass --signal \(announced) or leave --signal out")
            case .notAnnounced:
                throw LineSetupError("\(error): pass --signal ws://HOST:PORT/line")
            case .unreachable:
                throw LineSetupError("\(error)")
            }
        }
    }
}

/// The co-host line cannot be set up as asked (exit 1, with what to do about it).
struct LineSetupError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// One line event as a JSON line: `{"event":"application","peerId":…}`.
func lineEventJSON(_ event: LineSessionEvent) -> String {
    var line = jsonLine(["event": event.name])
    line.removeLast()
    for (key, value) in event.fields {
        let pair: String = switch value {
        case .text(let text): jsonLine([key: text])
        case .int(let number): jsonLine([key: number])
        case .bool(let flag): jsonLine([key: flag])
        }
        line += "," + pair.dropFirst().dropLast()
    }
    return line + "}"
}

/// One line event for people: `line: application peerId=… userId=…`.
func lineEventText(_ event: LineSessionEvent) -> String { lineEventText(event, prefix: "line") }

/// One event for people, as `PREFIX: NAME key=value …`.
func lineEventText(_ event: LineSessionEvent, prefix: String) -> String {
    let fields = event.fields.map { key, value -> String in
        switch value {
        case .text(let text): "\(key)=\(text)"
        case .int(let number): "\(key)=\(number)"
        case .bool(let flag): "\(key)=\(flag)"
        }
    }
    return (["\(prefix): " + event.name] + fields).joined(separator: " ")
}
