import Foundation
import LiveCore
import LiveLine

/// One call of a run, as it ended: what the summaries say about it.
struct CallRecord {
    /// 1 for the run's first call.
    var index: Int
    var peer: String
    var callId: String
    /// Whether it reached `connected`, and for how long.
    var connected: Bool
    var connectedSeconds: Double
    /// The kit's figures at the end (the peer's play, the setup times).
    var stats: CallStats
    /// The state it ended in (`prepared`, or `failed` when the signaling went) and why.
    var state: CallState
    var reason: CallStateReason
    var eventReason: String

    /// Ended as a caller counts it: refused (exit 3), failed (exit 1), or done (0).
    enum Outcome {
        case done, refused, failed
    }

    /// A caller's call turned down or never answered counts as refused; one whose
    /// signaling or media went as failed, as does one the peer ended before it
    /// connected (its media could not start); a hang-up by either side as done.
    var callerOutcome: Outcome {
        if state == .failed { return .failed }
        switch reason {
        case .remoteRejected, .remoteCallBusy, .remoteOffline, .callingTimeout, .remoteCallingTimeout:
            return .refused
        case .networkUnstable, .messageFailed, .joinRTCFailed:
            return .failed
        case .remoteHangup where !connected:
            return .failed
        default:
            return .done
        }
    }
}

/// Formats a call's states, events and figures for people (one line each on stderr) or
/// programs (JSON lines on stdout, or stderr when stdout carries media).
final class CallReport: Sendable {
    let json: Bool
    let toStandardError: Bool

    init(json: Bool, toStandardError: Bool) {
        self.json = json
        self.toStandardError = toStandardError
    }

    /// A JSON line to stdout (stderr when stdout carries media, or when its reader has
    /// gone and `orStandardError`, so a summary is still seen).
    private func emitJSON(_ line: String, orStandardError: Bool = false) {
        printJSONLine(line, toStandardError: toStandardError, orStandardError: orStandardError)
    }

    /// A line for people (stderr), never with --stats json.
    func note(_ text: String) {
        if !json { printError("call: " + text) }
    }

    /// A listener that lost the signaling registers again: {"event":"registering","try":N,...}.
    func registering(try number: Int, of tries: Int, inSeconds seconds: Double, why: String) {
        if json {
            emitJSON(jsonLine(["event": "registering", "try": number, "inSeconds": seconds, "reason": why]))
        } else {
            printError("call: \(why); registering again in \(String(format: "%.0f", seconds)) s (try \(number) of \(tries))")
        }
    }

    /// A state change: {"event":"state",...} or `call: connected (recvRemoteFirstFrame) callId=…`.
    func state(_ change: CallStateChange) {
        if json {
            emitJSON(jsonLine([
                "event": "state", "state": change.state.name, "stateCode": change.state.rawValue,
                "reason": change.reason.name, "reasonCode": change.reason.rawValue,
                "eventReason": change.eventReason, "info": RawJSON(object: change.info),
            ]))
        } else {
            let why = [change.reason.name, ""].contains(change.eventReason) ? change.reason.name
                : "\(change.reason.name): \(change.eventReason)"
            var line = "call: \(change.state.name) (\(why))"
            if let peer = Self.peer(of: change) { line += " with \(peer)" }
            // The ids for people; the rest (room, the message's own fields) in the JSON lines.
            let shown: Set<String> = ["callId", "rejectReason", "hangupReason", "fromUserExtension"]
            for (key, value) in change.info.sorted(by: { $0.key < $1.key }) where shown.contains(key) {
                line += " \(key)=\(value)"
            }
            printError(line)
        }
    }

    /// The other user of the call a change is about (the info's `peerUserId`; the
    /// CallAPI's `remoteUserId` is the callee, whoever reads it), nil when none.
    static func peer(of change: CallStateChange) -> String? {
        change.info["peerUserId"]
    }

    /// An event besides the states; `answer`: with `--accept manual`, what to type.
    func event(_ event: CallSessionEvent, answer: Bool) {
        switch event {
        case let .incomingCall(from, callId, audioOnly, userExtension):
            if json {
                emitJSON(jsonLine(["event": event.name, "from": from, "callId": callId, "audioOnly": audioOnly,
                                   "extension": userExtension]))
            } else {
                var line = "call: incoming \(audioOnly ? "audio" : "video") call from \(from)"
                if let userExtension { line += " (extension: \(userExtension))" }
                printError(line + (answer ? "; type accept or reject [REASON]" : ""))
            }
        case let .remoteFirstFrame(width, height):
            if json {
                emitJSON(jsonLine(["event": event.name, "width": width, "height": height]))
            } else {
                printError("call: remoteFirstFrame \(width)x\(height)")
            }
        default:
            if json { emitJSON(jsonLine(["event": event.name])) } else { printError("call: " + event.name) }
        }
    }

    /// Once a second while connected: the peer's picture and both directions' rates.
    func tick(_ stats: CallStats, previous: CallStats, seconds: Double, connectedSeconds: Double, call: Int) {
        let remote = stats.remote
        let fps = Double(max(0, remote.frames - previous.remote.frames)) / max(seconds, 1e-6)
        let receiveKbps = remote.receiveBytesPerSecond * 8 / 1000
        let sent = (stats.local.bytes + stats.local.audioBytes) - (previous.local.bytes + previous.local.audioBytes)
        let sendKbps = Double(max(0, sent)) * 8 / 1000 / max(seconds, 1e-6)
        if json {
            emitJSON(jsonLine([
                "event": "stats", "call": call, "time": connectedSeconds, "frames": remote.frames, "fps": fps,
                "width": remote.width, "height": remote.height, "latencyP50Ms": remote.latencyP50Ms,
                "latencyP95Ms": remote.latencyP95Ms, "receiveKbps": receiveKbps, "sendKbps": sendKbps,
                "audioFrames": remote.audioFrames, "audioLevel": remote.audioLevel,
            ]))
        } else {
            var line = remote.frames == 0 && remote.audioFrames > 0
                ? String(format: "call %6.1fs  audio only, %d audio frames", connectedSeconds, remote.audioFrames)
                : String(format: "call %6.1fs  %5.1f fps %dx%d", connectedSeconds, fps, remote.width, remote.height)
            line += String(format: "  in %4.0f kbit/s  out %4.0f kbit/s", receiveKbps, sendKbps)
            if let level = remote.audioLevel { line += "  audio level \(level)" }
            if let p50 = remote.latencyP50Ms, let p95 = remote.latencyP95Ms {
                line += String(format: "  latency p50 %.0f ms p95 %.0f ms", p50, p95)
            }
            printError(line)
        }
    }

    /// After each call: how it went and how it ended.
    func callSummary(_ record: CallRecord) {
        let stats = record.stats, remote = record.stats.remote
        if json {
            emitJSON(jsonLine([
                "event": "callSummary", "call": record.index, "peerUserId": record.peer, "callId": record.callId,
                "connected": record.connected, "connectedSeconds": record.connectedSeconds, "setupMs": stats.setupMs,
                "acceptToFirstFrameMs": stats.acceptToFirstFrameMs, "latencyP50Ms": remote.latencyP50Ms,
                "latencyP95Ms": remote.latencyP95Ms, "latencySamples": remote.latencySamples, "frames": remote.frames,
                "width": remote.width, "height": remote.height, "audioFrames": remote.audioFrames,
                "ended": record.reason.name, "endedCode": record.reason.rawValue, "eventReason": record.eventReason,
                "state": record.state.name,
            ]), orStandardError: true)
        } else {
            printError("call \(record.index) with \(record.peer): " + Self.describe(record))
        }
    }

    /// At the end of the run: the last call, and p50/p95 over every call.
    func summary(_ records: [CallRecord], seconds: Double, error: Error?) {
        let last = records.last
        let setup = Self.percentiles(records.compactMap(\.stats.setupMs))
        let firstFrame = Self.percentiles(records.compactMap(\.stats.acceptToFirstFrameMs))
        let connected = records.filter(\.connected).count
        if json {
            emitJSON(jsonLine([
                "event": "summary", "calls": records.count, "connectedCalls": connected, "seconds": seconds,
                "setupMs": last?.stats.setupMs, "acceptToFirstFrameMs": last?.stats.acceptToFirstFrameMs,
                "latencyP50Ms": last?.stats.remote.latencyP50Ms, "latencyP95Ms": last?.stats.remote.latencyP95Ms,
                "setupMsP50": setup?.0, "setupMsP95": setup?.1,
                "acceptToFirstFrameMsP50": firstFrame?.0, "acceptToFirstFrameMsP95": firstFrame?.1,
                "ended": last?.reason.name, "endedCode": last?.reason.rawValue, "eventReason": last?.eventReason,
                "error": error.map { "\($0)" },
            ]), orStandardError: true)
            return
        }
        // A run that never began: the error says it all.
        if records.isEmpty, error != nil { return }
        var line = String(format: "done: %d call%@, %d connected, in %.1fs", records.count, records.count == 1 ? "" : "s",
                          connected, seconds)
        if records.count > 1 {
            if let setup { line += String(format: "; call → connected p50 %.0f ms p95 %.0f ms", setup.0, setup.1) }
            if let firstFrame {
                line += String(format: "; accept → first frame p50 %.0f ms p95 %.0f ms", firstFrame.0, firstFrame.1)
            }
        } else if let last {
            line += "; " + Self.describe(last)
        }
        printError(line)
    }

    /// `ended by remoteHangup ("bye") after 3.0 s connected; setup 180 ms, …`.
    private static func describe(_ record: CallRecord) -> String {
        var text = "ended by \(record.reason.name)"
        if ![record.reason.name, ""].contains(record.eventReason) { text += " (\(record.eventReason))" }
        text += record.connected ? String(format: " after %.1f s connected", record.connectedSeconds) : ", never connected"
        let stats = record.stats
        if let setup = stats.setupMs { text += String(format: "; call → connected %.0f ms", setup) }
        if let first = stats.acceptToFirstFrameMs { text += String(format: "; accept → first frame %.0f ms", first) }
        if let p50 = stats.remote.latencyP50Ms, let p95 = stats.remote.latencyP95Ms {
            text += String(format: "; the peer's picture: latency p50 %.1f ms p95 %.1f ms", p50, p95)
        }
        return text
    }

    /// p50 and p95 (nearest rank) of `values` in ms; nil when there are none.
    static func percentiles(_ values: [Double]) -> (Double, Double)? {
        var statistics = LatencyStatistics()
        for value in values { statistics.add(micros: Int64((value * 1000).rounded())) }
        return statistics.p50p95Ms
    }
}
