import LiveNet

/// The relay's HTTP API: `GET /api/streams` (JSON array of `StreamStats`),
/// `GET /healthz` ("ok") and `GET /metrics` (Prometheus text format 0.0.4); with a
/// line, also the WebSocket `GET /line`, the living list `GET /api/live` and
/// `GET /api/live/{liveId}/members?page=N` (see `LineHTTPAPI`). With auth on, every
/// route but `/healthz`, `/metrics` and `/line` needs an `api` token (see `HTTPAccess`).
public enum RelayHTTPAPI {
    /// The routes, answered on the HTTP connection's loop from the server's counters.
    public static func router(for server: RTMPServer, line: LineService? = nil) -> HTTPRouter {
        var router = HTTPRouter()
        if let line { LineHTTPAPI.add(line, to: &router) }
        router.get("/api/streams") { _ in .response(.json(server.streams())) }
        router.get("/healthz") { _ in .response(.text("ok\n")) }
        router.get("/metrics") { _ in
            var response = HTTPResponse.text(metricsText(server))
            response.headers.set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
            return .response(response)
        }
        guard let verifier = server.configuration.auth else { return router }
        return HTTPAccess.guarded(router, verifier: verifier)
    }

    /// The metrics page: totals, then per-stream series labelled app and name.
    public static func metricsText(_ server: RTMPServer) -> String {
        let streams = server.streams()
        let counters = server.counters
        var text = ""
        func metric(_ name: String, _ type: String, _ help: String, _ samples: [(labels: String, value: String)]) {
            text += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
            for sample in samples { text += "\(name)\(sample.labels) \(sample.value)\n" }
        }
        func total(_ value: UInt64) -> [(labels: String, value: String)] { [("", String(value))] }
        metric("liveline_rtmp_connections", "gauge", "Open RTMP connections.", [("", String(server.connectionCount))])
        metric("liveline_rtmp_connections_refused_total", "counter", "Connections closed at once because the cap was reached.",
               [("", String(server.listener.refusedCount))])
        metric("liveline_streams", "gauge", "Streams with a publisher.", [("", String(streams.filter { $0.publisher != nil }.count))])
        metric("liveline_players", "gauge", "Players of all streams.", [("", String(streams.reduce(0) { $0 + $1.players }))])
        metric("liveline_bytes_in_total", "counter", "Bytes read from RTMP connections.",
               total(counters.bytesIn.load(ordering: .relaxed)))
        metric("liveline_bytes_out_total", "counter", "Bytes queued to RTMP connections.",
               total(counters.bytesOut.load(ordering: .relaxed)))
        metric("liveline_dropped_frames_total", "counter", "Video frames not sent to players that fell behind.",
               total(counters.droppedFrames.load(ordering: .relaxed)))
        metric("liveline_protocol_errors_total", "counter", "Connections closed for malformed input.",
               total(counters.protocolErrors.load(ordering: .relaxed)))
        metric("liveline_timeouts_total", "counter", "Connections closed by a handshake or idle timeout.",
               total(counters.timeouts.load(ordering: .relaxed)))
        metric("liveline_publish_refused_total", "counter", "Publishes refused with NetStream.Publish.BadName.",
               total(counters.refusedPublishes.load(ordering: .relaxed)))
        metric("liveline_publish_takeovers_total", "counter", "Publishers replaced by their returning selves.",
               total(counters.takeovers.load(ordering: .relaxed)))
        metric("liveline_play_refused_total", "counter", "Plays refused for their token or the co-host play rule.",
               total(counters.refusedPlays.load(ordering: .relaxed)))
        metric("liveline_connect_refused_total", "counter", "Connects refused with NetConnection.Connect.Rejected.",
               total(counters.refusedConnects.load(ordering: .relaxed)))
        func labels(_ stream: StreamStats) -> String {
            "{app=\"\(escape(stream.app))\",name=\"\(escape(stream.name))\"}"
        }
        metric("liveline_stream_players", "gauge", "Players of the stream.", streams.map { (labels($0), String($0.players)) })
        metric("liveline_stream_bitrate_bits_per_second", "gauge", "Media bitrate over the last second.",
               streams.map { (labels($0), String($0.bitrate)) })
        metric("liveline_stream_fps", "gauge", "Video frames per second over the last second.",
               streams.map { (labels($0), String($0.fps)) })
        metric("liveline_stream_frames_total", "counter", "Video frames relayed since the publisher started.",
               streams.map { (labels($0), String($0.frames)) })
        metric("liveline_stream_dropped_frames_total", "counter", "Video frames dropped for the stream's slow players.",
               streams.map { (labels($0), String($0.droppedFrames)) })
        return text
    }

    /// A label value as the text format wants it: backslash, quote and newline escaped.
    static func escape(_ value: String) -> String {
        value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
    }
}
