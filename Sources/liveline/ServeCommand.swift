import Foundation
import LiveCore
import LiveServer

/// `liveline serve`: the RTMP relay and its HTTP API until SIGINT or SIGTERM.
enum ServeCommand: Command {
    static let name = "serve"
    static let help = """
        Usage: liveline serve [options]

        Relays RTMP streams: one publisher per stream name, any number of players, a GOP
        cache so players start at once, and an HTTP API.

          --rtmp HOST:PORT         RTMP address (default 127.0.0.1:1935; port 0 picks a free one)
          --http HOST:PORT         HTTP API address (default 127.0.0.1:8080; port 0 picks a free one)
          --max-connections N      RTMP connections beyond N are closed at once (default 4096)
          --max-per-ip N           connections from one address (IPv6: one /64), per port, beyond N
                                   are refused, HTTP with a 503; 127.0.0.1 and ::1 are not counted; 0: off (default 64)
          --max-api-connections N  HTTP API connections beyond N get a 503 (default 256)
          --max-line-connections N line WebSockets beyond N get a 503 (default 4096)
          --gop-cache-ms MS        longest GOP kept for new players, 0 for headers only (default 10000)
          --loops N                event loop threads (default: one per core)
          --max-cohosts N          co-hosts on a line besides the hoster (default 3)
          --apply-timeout S        an unanswered co-host application is cancelled after S seconds (default 30)
          --heartbeat-timeout S    a line participant silent for S seconds counts as gone (default 30)
          --verbose                log every connection on stderr
          --help                   show this text

        Prints one line when listening: ready rtmp://HOST:PORT http://HOST:PORT
        HTTP: GET /api/streams (JSON), GET /healthz, GET /metrics (Prometheus),
        GET /api/live (living list), GET /api/live/ID/members?page=N, and the co-host
        line's WebSocket at ws://HOST:PORT/line. Stream names starting with "line-" are
        co-host pubIds: only the co-host given one may publish it, with ?line=SECRET.
        """

    static func run(_ arguments: inout Arguments) throws -> Int32 {
        var rtmp = RTMPServer.Configuration()
        var configuration = RelayServer.Configuration()
        let rtmpAddress = try address(arguments.value("--rtmp"), option: "--rtmp") ?? ("127.0.0.1", 1935)
        let httpAddress = try address(arguments.value("--http"), option: "--http") ?? ("127.0.0.1", 8080)
        (rtmp.host, rtmp.port) = rtmpAddress
        (configuration.httpHost, configuration.httpPort) = httpAddress
        if let cap = try arguments.int("--max-connections", in: 1...1_000_000) { rtmp.maxConnections = cap }
        if let cap = try arguments.int("--max-per-ip", in: 0...1_000_000) {
            rtmp.perAddress.maxConnections = cap
            configuration.httpCapacity.perAddress.maxConnections = cap
        }
        if let cap = try arguments.int("--max-api-connections", in: 1...1_000_000) {
            configuration.httpCapacity.maxAPIConnections = cap
        }
        if let cap = try arguments.int("--max-line-connections", in: 0...1_000_000) {
            configuration.httpCapacity.maxUpgradedConnections = cap
        }
        if let ms = try arguments.int("--gop-cache-ms", in: 0...600_000) { rtmp.gopCache.maxDurationMilliseconds = UInt32(ms) }
        if let loops = try arguments.int("--loops", in: 1...256) { configuration.loops = loops }
        if let cohosts = try arguments.int("--max-cohosts", in: 0...64) { configuration.line.maxCohosts = cohosts }
        if let seconds = try arguments.double("--apply-timeout", in: 0.1...86_400) {
            configuration.line.applyTimeout = .milliseconds(Int(seconds * 1000))
        }
        if let seconds = try arguments.double("--heartbeat-timeout", in: 0.1...86_400) {
            configuration.line.heartbeatTimeout = .milliseconds(Int(seconds * 1000))
        }
        if arguments.flag("--verbose") { Log.threshold = .info }
        if let extra = arguments.positionals().first { throw UsageError("unexpected argument '\(extra)'") }
        try arguments.finish()
        configuration.rtmp = rtmp

        signal(SIGPIPE, SIG_IGN)
        let stop = DispatchSemaphore(value: 0)
        let signals = StopSignals { stop.signal() }
        defer { withExtendedLifetime(signals) {} }

        let server = try RelayServer(configuration: configuration)
        printLine("ready rtmp://\(hostForURL(rtmp.host)):\(server.rtmpPort) http://\(hostForURL(configuration.httpHost)):\(server.httpPort)")
        stop.wait()
        printError("liveline serve: stopping")
        server.shutdown()
        return 0
    }

    /// `HOST:PORT` (an IPv6 host in brackets), port 0...65535.
    private static func address(_ text: String?, option: String) throws -> (String, UInt16)? {
        guard let text else { return nil }
        guard let colon = text.lastIndex(of: ":") else { throw UsageError("\(option) must look like HOST:PORT, not '\(text)'") }
        var host = String(text[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty, let port = UInt16(text[text.index(after: colon)...]) else {
            throw UsageError("\(option) must look like HOST:PORT with a port in 0...65535, not '\(text)'")
        }
        return (host, port)
    }

    private static func hostForURL(_ host: String) -> String { host.contains(":") ? "[\(host)]" : host }
}
