import LiveCore
import LiveNet
import LiveSignal
import Synchronization

/// The relay's HTTP API: `GET /api/streams` (JSON array of `StreamStats`),
/// `GET /healthz` ("ok") and `GET /metrics` (Prometheus text format 0.0.4); with a
/// line, also the WebSocket `GET /line`, the living list `GET /api/live` and
/// `GET /api/live/{liveId}/members?page=N` (see `LineHTTPAPI`); with a call service, the
/// WebSocket `GET /call`; HTTP-FLV `GET /{app}/{stream}.flv` and the WebSocket FLV feed
/// `GET /ws/{app}/{stream}` (see `FLVHTTPAPI`); the watch page `GET /watch/{app}/{stream}`
/// that plays that feed in a browser (see `WatchPage`); with HLS, `GET /{app}/{stream}.m3u8`
/// and its segments (see `HLSHTTPRoutes`). With auth on, every route but `/healthz`,
/// `/metrics`, `/line`, `/call`, the viewers' (FLV and HLS: a `play` token) and the watch
/// page needs an `api` token (see `HTTPAccess`).
public enum RelayHTTPAPI {
    /// What `/metrics` reports beside the relay's own counters: the loops' refused tasks
    /// and, once it exists (it is made with these routes), the HTTP server's refusals.
    public final class Surroundings: Sendable {
        let group: EventLoopGroup?
        /// HLS, when on: its streams and bytes.
        let hls: HLSService?
        let httpServer = Mutex<HTTPServer?>(nil)

        public init(group: EventLoopGroup? = nil, hls: HLSService? = nil) {
            self.group = group
            self.hls = hls
        }

        /// The HTTP server that serves these routes.
        public var http: HTTPServer? {
            get { httpServer.withLock { $0 } }
            set { httpServer.withLock { $0 = newValue } }
        }
    }

    /// The routes, answered on the HTTP connection's loop from the server's counters.
    public static func router(for server: RTMPServer, line: LineService? = nil, call: CallService? = nil,
                              hls: HLSService? = nil, surroundings: Surroundings = Surroundings()) -> HTTPRouter {
        var router = HTTPRouter()
        // First: a path of theirs reaches them whatever else matches, as the token check
        // leaves their requests to them.
        if let hls { HLSHTTPRoutes.add(hls, to: &router) }
        if let line { LineHTTPAPI.add(line, to: &router) }
        if let call { router.get("/call", call.webSocketHandler()) }
        FLVHTTPAPI.add(server, to: &router)
        WatchPage.add(to: &router)
        router.get("/api/streams") { _ in .response(.json(publicStreams(server.streams()))) }
        router.get("/healthz") { _ in .response(.text("ok\n")) }
        WebConsole.add(to: &router)
        router.get("/metrics") { _ in
            var response = HTTPResponse.text(metricsText(server, surroundings: surroundings, call: call))
            response.headers.set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
            return .response(response)
        }
        guard let verifier = server.configuration.auth else { return router }
        return HTTPAccess.guarded(router, verifier: verifier, checksOwnToken: { request in
            hls != nil && HLSHTTPRoutes.checksOwnToken(request)
        })
    }

    /// The metrics page: totals (with a call service, its users and calls), then
    /// per-stream series labelled app and name.
    public static func metricsText(_ server: RTMPServer, surroundings: Surroundings = Surroundings(),
                                   call: CallService? = nil) -> String {
        let streams = server.streams()
        let listed = publicStreams(streams)
        let counters = server.counters
        var text = ""
        func metric(_ name: String, _ type: String, _ help: String, _ samples: [(labels: String, value: String)]) {
            text += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
            for sample in samples { text += "\(name)\(sample.labels) \(sample.value)\n" }
        }
        func total(_ value: UInt64) -> [(labels: String, value: String)] { [("", String(value))] }
        metric("liveline_rtmp_connections", "gauge", "Open RTMP connections.", [("", String(server.connectionCount))])
        metric("liveline_rtmp_connections_refused_total", "counter", "RTMP connections closed at once: the cap was reached or their address had its share.",
               [("", String(server.listener.refusedCount))])
        metric("liveline_rtmp_connections_refused_per_address_total", "counter",
               "RTMP connections closed at once because their address had its share (--max-per-ip).",
               [("", String(server.listener.refusedFromAddressCount))])
        if let http = surroundings.http {
            metric("liveline_http_connections_refused_total", "counter", "HTTP connections closed at once: the cap was reached or their address had its share.",
                   [("", String(http.listener.refusedCount))])
            metric("liveline_http_connections_refused_per_address_total", "counter",
                   "HTTP connections closed at once because their address had its share (--max-per-ip).",
                   [("", String(http.listener.refusedFromAddressCount))])
            metric("liveline_http_api_refused_total", "counter", "API requests answered 503 because every API slot was busy.",
                   [("", String(http.refusedAPIConnectionCount))])
            metric("liveline_http_api_evicted_total", "counter", "Idle API connections closed to make room for a new one.",
                   [("", String(http.evictedConnectionCount))])
            metric("liveline_http_upgrades_refused_total", "counter", "WebSocket upgrades answered 503 because the cap was reached.",
                   [("", String(http.refusedUpgradeCount))])
        }
        if let group = surroundings.group {
            metric("liveline_loop_tasks_dropped_total", "counter", "Tasks the event loops refused because their queue was full.",
                   [("", String(group.loops.reduce(0) { $0 + $1.droppedTaskCount }))])
        }
        for sample in surroundings.hls?.metricSamples ?? [] { metric(sample.name, sample.type, sample.help, [("", sample.value)]) }
        metric("liveline_log_lines_dropped_total", "counter", "Log lines dropped because standard error did not keep up.",
               [("", String(Log.droppedLineCount))])
        metric("liveline_streams", "gauge", "Streams with a publisher.", [("", String(streams.filter { $0.publisher != nil }.count))])
        metric("liveline_players", "gauge", "Players of all streams.", [("", String(streams.reduce(0) { $0 + $1.players }))])
        metric("liveline_flv_players", "gauge", "HTTP-FLV and WebSocket FLV players of all streams (also in liveline_players).",
               FLVHTTPAPI.playerCounts(streams))
        metric("liveline_flv_bytes_out_total", "counter", "Bytes queued to HTTP-FLV and WebSocket FLV players.",
               total(counters.flvBytesOut.load(ordering: .relaxed)))
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
        if let call {
            metric("liveline_call_users", "gauge", "Users registered for 1v1 calls.", [("", String(call.userCount))])
            metric("liveline_calls", "gauge", "1v1 calls invited or in progress.", [("", String(call.callCount))])
        }
        metric("liveline_hidden_streams", "gauge", "Co-host and call streams, left out of the per-stream series and /api/streams.",
               [("", String(streams.count - listed.count))])
        metric("liveline_unfinished_message_bytes", "gauge", "Bytes RTMP connections hold in unfinished messages.",
               [("", String(server.unfinishedBudget.usedBytes))])
        metric("liveline_unfinished_budget_closes_total", "counter",
               "Connections closed because the server-wide budget of unfinished messages was spent.",
               total(server.unfinishedBudget.refusedCount))
        metric("liveline_gop_cache_bytes", "gauge", "Bytes the GOP caches of all streams hold.",
               [("", String(server.gopBudget.usedBytes))])
        metric("liveline_gop_cache_budget_drops_total", "counter",
               "GOPs dropped to headers only because the server-wide GOP cache budget was spent.",
               total(server.gopBudget.refusedCount))
        func labels(_ stream: StreamStats) -> String {
            "{app=\"\(escape(stream.app))\",name=\"\(escape(stream.name))\"}"
        }
        metric("liveline_stream_players", "gauge", "Players of the stream.", listed.map { (labels($0), String($0.players)) })
        metric("liveline_stream_bitrate_bits_per_second", "gauge", "Media bitrate over the last second.",
               listed.map { (labels($0), String($0.bitrate)) })
        metric("liveline_stream_audio_bitrate_bits_per_second", "gauge", "Audio bitrate over the last second (streams with audio).",
               listed.compactMap { stream in stream.audioBitrate.map { (labels(stream), String($0)) } })
        metric("liveline_stream_fps", "gauge", "Video frames per second over the last second.",
               listed.map { (labels($0), String($0.fps)) })
        metric("liveline_stream_frames_total", "counter", "Video frames relayed since the publisher started.",
               listed.map { (labels($0), String($0.frames)) })
        metric("liveline_stream_dropped_frames_total", "counter", "Video frames dropped for the stream's slow players.",
               listed.map { (labels($0), String($0.droppedFrames)) })
        return text
    }

    /// The streams anyone may see: co-host streams (named `LineRegistry.pubIdPrefix`…) are
    /// the line's business and a call's streams (`CallStreams.prefix`…) its two users':
    /// both stay out of public listings.
    static func publicStreams(_ streams: [StreamStats]) -> [StreamStats] {
        streams.filter { !$0.name.hasPrefix(LineRegistry.pubIdPrefix) && !$0.name.hasPrefix(CallStreams.prefix) }
    }

    /// A label value as the text format wants it: backslash, quote and newline escaped.
    static func escape(_ value: String) -> String {
        value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
    }
}
