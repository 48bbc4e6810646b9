import Foundation
import LiveAuth
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
                                   and logged, at most one line a second with their count
          --max-per-ip N           connections from one address (IPv6: one /64), per port, beyond N
                                   are refused, HTTP with a 503; 127.0.0.1 and ::1 are not counted; 0: off (default 64)
          --max-api-connections N  HTTP API connections beyond N get a 503 (default 256)
          --max-line-connections N line and call WebSockets together beyond N get a 503 (default 4096)
          --gop-cache-ms MS        longest GOP kept for new players, 0 for headers only (default 10000)
          --loops N                event loop threads (default: one per core)
          --hls on|off             HLS of live streams on the HTTP port (default on)
          --hls-segment-ms MS      an HLS segment closes at the first keyframe MS after its start
                                   (default 1000; segments are the publisher's GOP when it is longer)
          --max-cohosts N          co-hosts on a line besides the hoster (default 3); a line
                                   never takes more than its hoster's mix shows (at most 4)
          --apply-timeout S        an unanswered co-host application is cancelled after S seconds (default 30)
          --heartbeat-timeout S    a line participant or call user silent for S seconds counts as gone
                                   (default 30; a call user's calls then end with peerGone)
          --max-members N          members of one line, hoster included; more are refused with 209 (default 1000)
          --token-will-expire S    with tokens, tokenWillExpire goes out S seconds before a line
                                   or call token expires, or half-way for shorter tokens (default 300)
          --auth-secret-file FILE  check access tokens signed with FILE's secret ('liveline token')
          --no-auth                allow listening beyond loopback without tokens (warns loudly)
          --on-expiry keep|close   a publisher or player whose token expires: keep it (default)
                                   or close it at its first ping (every 10 s) past the expiry
                                   (5 s of clock leeway); kits reconnect with a fresh token
          --verbose                log every connection on stderr (log lines start with the
                                   UTC time, 2026-12-01T21:58:24.123Z)
          --help                   show this text

        Prints one line when listening: ready rtmp://HOST:PORT http://HOST:PORT
        HTTP: GET /api/streams (JSON), GET /healthz, GET /metrics (Prometheus),
        GET /api/live (living list), GET /api/live/ID/members?page=N, and the co-host
        line's WebSocket at ws://HOST:PORT/line. HLS: GET /APP/STREAM.m3u8 (MPEG-TS
        segments at /APP/STREAM/N.ts; the newest 6 listed, older ones answer 404); a
        stream's first playlist request starts its segmenting and waits (up to 10 s) for
        the first segment; it stops when the publisher unpublishes, 5 s after its
        connection dropped, or after 30 s without a request.

        Stream names starting with "line-" are co-host pubIds: only the co-host given one
        may publish it, with ?line=SECRET. A line LIVE_ID is opened only by the publisher
        of a stream named LIVE_ID that published with ?lineKey=KEY and creates with that
        key (liveline host --line does this), or with --auth-secret-file by a token
        granting line-host on LIVE_ID; joins then need line-guest (or line-host), the
        token's sub is the user id, and tokenWillExpire goes out before a token expires
        (renewToken; unrenewed: 212).

        1v1 calls: users register on the WebSocket ws://HOST:PORT/call (one connection per
        user id; with --auth-secret-file a token with sub USER granting call on USER) and
        the server carries their call messages (invite, accept, reject, cancel, hangup).
        Streams named "call-ROOM-1" (the caller's) and "call-ROOM-2" (the callee's) exist
        only while their call lasts: each may be published only by its own user and
        played only by the other, with the ?call=SECRET the server gave that user (with
        tokens, also only with that user's token); the call's end ends both publishers,
        and a room is never used again. Call streams stay out of /api/streams and /metrics.

        Access control: with --auth-secret-file, RTMP publish and play need a token that
        grants publish/play on APP/NAME, as ?token=TOKEN on the stream URL (or on the
        connect URL); refusals are NetStream.Publish.BadName / NetStream.Play.Failed /
        NetConnection.Connect.Rejected with the reason. A live stream is taken over only
        by a publisher whose token grants it. HLS playlists and segments need a play token
        for APP/STREAM (?token=, repeated on the playlist's segment URIs). Every other HTTP
        route except /healthz, /metrics, /line and /call needs 'Authorization: Bearer
        TOKEN' (or ?token=) granting api on the path without its leading slash
        (api/streams; --api 'api/*' grants all), else 401 with {"code","message"}.
        Without a secret the server listens only on loopback unless --no-auth is given,
        and a live stream is taken over only after its publisher has been silent for 2 s.
        """

    static func run(_ arguments: inout Arguments) throws -> Int32 {
        var rtmp = RTMPServer.Configuration()
        var configuration = RelayServer.Configuration()
        let rtmpAddress = try address(arguments.value("--rtmp"), option: "--rtmp") ?? ("127.0.0.1", 1935)
        let httpAddress = try address(arguments.value("--http"), option: "--http") ?? ("127.0.0.1", 8080)
        if rtmpAddress.1 != 0, rtmpAddress == httpAddress {
            throw UsageError("--rtmp and --http are both \(rtmpAddress.0):\(rtmpAddress.1): give each its own port")
        }
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
        if let hls = try arguments.value("--hls") {
            guard hls == "on" || hls == "off" else { throw UsageError("--hls must be on or off, not '\(hls)'") }
            if hls == "off" { configuration.hls = nil }
        }
        if let ms = try arguments.int("--hls-segment-ms", in: 100...60_000) {
            guard configuration.hls != nil else { throw UsageError("--hls-segment-ms needs HLS on (it is --hls off)") }
            configuration.hls?.segmentTargetMilliseconds = UInt32(ms)
        }
        if let cohosts = try arguments.int("--max-cohosts", in: 0...64) { configuration.line.maxCohosts = cohosts }
        if let seconds = try arguments.double("--apply-timeout", in: 0.1...86_400) {
            configuration.line.applyTimeout = .milliseconds(Int(seconds * 1000))
        }
        if let members = try arguments.int("--max-members", in: 1...1_000_000) { configuration.line.maxMembers = members }
        if let seconds = try arguments.int("--token-will-expire", in: 1...86_400) {
            configuration.line.tokenWillExpireSeconds = Int64(seconds)
            configuration.call.tokenWillExpireSeconds = Int64(seconds)
        }
        if let seconds = try arguments.double("--heartbeat-timeout", in: 0.1...86_400) {
            configuration.line.heartbeatTimeout = .milliseconds(Int(seconds * 1000))
            configuration.call.heartbeatTimeout = configuration.line.heartbeatTimeout
        }
        let secretFile = try arguments.value("--auth-secret-file")
        let noAuth = arguments.flag("--no-auth")
        if let policy = try arguments.value("--on-expiry") {
            guard let value = TokenExpiryPolicy(rawValue: policy) else {
                throw UsageError("--on-expiry must be keep or close, not '\(policy)'")
            }
            rtmp.onExpiry = value
        }
        if arguments.flag("--verbose") { Log.threshold = .info }
        // A server's log is read later, next to other logs: every line says when.
        Log.timestamps = true
        let extra = arguments.positionals()
        try arguments.finish()
        if let extra = extra.first { throw Arguments.noConfigFile(given: extra) }
        rtmp.auth = try verifier(secretFile: secretFile, noAuth: noAuth, onExpiry: rtmp.onExpiry,
                                 listening: [("--rtmp", rtmpAddress), ("--http", httpAddress)])
        configuration.rtmp = rtmp

        signal(SIGPIPE, SIG_IGN)
        let stop = DispatchSemaphore(value: 0)
        let signals = StopSignals { stop.signal() }
        defer { withExtendedLifetime(signals) {} }

        let server: RelayServer
        do {
            server = try RelayServer(configuration: configuration)
        } catch let error as RelayServer.ListenError {
            let option = error.listener == .rtmp ? "--rtmp" : "--http"
            printError("liveline serve: \(error); choose another with \(option) HOST:PORT")
            return 1
        }
        printLine("ready rtmp://\(hostForURL(rtmp.host)):\(server.rtmpPort) http://\(hostForURL(configuration.httpHost)):\(server.httpPort)")
        stop.wait()
        printError("\(Log.timestamp(Clock.wallMicros())) liveline serve: stopping")
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

    /// The token verifier of `--auth-secret-file`, or nil: then every address must be loopback
    /// unless `--no-auth` (which warns loudly about each one that is not).
    private static func verifier(secretFile: String?, noAuth: Bool, onExpiry: TokenExpiryPolicy,
                                 listening: [(option: String, address: (host: String, port: UInt16))]) throws -> TokenVerifier? {
        if secretFile != nil, noAuth { throw UsageError("--auth-secret-file and --no-auth contradict each other") }
        guard let secretFile else {
            if onExpiry != .keep { throw UsageError("--on-expiry needs --auth-secret-file (without tokens nothing expires)") }
            let exposed = listening.filter { !isLoopback($0.address.host) }
            if let first = exposed.first, !noAuth {
                throw UsageError("""
                    \(first.option) \(first.address.host) is reachable beyond this machine and access control is off: \
                    give --auth-secret-file FILE (make one with 'liveline token --new-secret FILE'), \
                    or --no-auth to serve anyone who can connect
                    """)
            }
            for (option, address) in exposed {
                printError("""
                    liveline serve: WARNING: NO ACCESS CONTROL (--no-auth) on \(option) \(address.host):\(address.port): \
                    anyone who can connect may publish, play, take over streams and use the API
                    """)
            }
            return nil
        }
        let verifier = TokenVerifier(secret: try TokenSecret.load(path: secretFile))
        if let mode = (try? FileManager.default.attributesOfItem(atPath: secretFile))?[.posixPermissions] as? NSNumber,
           mode.intValue & 0o077 != 0 {
            printError("""
                liveline serve: warning: \(secretFile) can be read by others (mode \(String(mode.intValue, radix: 8))); \
                anyone who reads it can mint tokens: chmod 600 \(secretFile)
                """)
        }
        return verifier
    }

    /// Whether `host` is a loopback name or address (127.0.0.0/8, ::1, localhost).
    /// Any other host name counts as reachable from elsewhere.
    static func isLoopback(_ host: String) -> Bool {
        if host.lowercased() == "localhost" { return true }
        var v4 = in_addr()
        if inet_pton(AF_INET, host, &v4) == 1 { return UInt32(bigEndian: v4.s_addr) >> 24 == 127 }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, host, &v6) == 1 else { return false }
        let bytes = withUnsafeBytes(of: v6) { Array($0) }
        let loopback: [UInt8] = Array(repeating: 0, count: 15) + [1]
        let mappedPrefix: [UInt8] = Array(repeating: 0, count: 10) + [0xff, 0xff]
        return bytes == loopback || (Array(bytes[0..<12]) == mappedPrefix && bytes[12] == 127)
    }

    private static func hostForURL(_ host: String) -> String { host.contains(":") ? "[\(host)]" : host }
}
