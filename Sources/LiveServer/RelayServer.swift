import Foundation
import LiveAuth
import LiveCore
import LiveNet
import LiveSignal

/// `liveline serve`: the RTMP relay and its HTTP API on their own ports, sharing one
/// group of event loops (one per core unless told).
public final class RelayServer: Sendable {
    public struct Configuration: Sendable {
        public var rtmp: RTMPServer.Configuration
        public var httpHost: String
        /// 0 picks a free port (see `httpPort`).
        public var httpPort: UInt16
        /// Event loop threads.
        public var loops: Int
        /// The co-host line on `/line` (DESIGN.md §4).
        public var line = LineLimits()
        /// The 1v1 calls on `/call` (DESIGN.md §5).
        public var call = CallLimits()
        /// The token verifier (nil: no access control). It checks RTMP publish and play,
        /// and every HTTP route but `/healthz`, `/metrics` and the line's `/line` and the
        /// call's `/call`, which check their own. Stored in `rtmp.auth`.
        public var auth: TokenVerifier? {
            get { rtmp.auth }
            set { rtmp.auth = newValue }
        }
        /// What happens to a live RTMP session whose token expires. Stored in `rtmp.onExpiry`.
        public var onExpiry: TokenExpiryPolicy {
            get { rtmp.onExpiry }
            set { rtmp.onExpiry = newValue }
        }
        /// Caps of the HTTP port: API connections, the line's WebSockets, per address.
        public var httpCapacity = HTTPServer.Capacity()
        /// HLS of the live streams on the HTTP port (`HLSService`); nil: off.
        public var hls: HLSService.Limits? = HLSService.Limits()

        public init(rtmp: RTMPServer.Configuration = RTMPServer.Configuration(), httpHost: String = "127.0.0.1",
                    httpPort: UInt16 = 8080, loops: Int = RelayServer.defaultLoopCount) {
            self.rtmp = rtmp
            self.httpHost = httpHost
            self.httpPort = httpPort
            self.loops = loops
        }
    }

    /// One loop per online core.
    public static var defaultLoopCount: Int { max(1, ProcessInfo.processInfo.activeProcessorCount) }

    public let configuration: Configuration
    public let group: EventLoopGroup
    public let rtmp: RTMPServer
    public let http: HTTPServer
    /// The co-host line's signaling (WebSocket `/line`, `/api/live`).
    public let line: LineService
    /// The 1v1 calls' signaling (WebSocket `/call`).
    public let call: CallService
    /// HLS of the live streams (`/{app}/{stream}.m3u8`), nil when off.
    public let hls: HLSService?

    /// Why one of the relay's ports could not be opened.
    public struct ListenError: Error, CustomStringConvertible, Equatable, Sendable {
        /// Which port: the RTMP relay's or the HTTP API's (and the line's WebSocket).
        public enum Listener: String, Sendable { case rtmp = "RTMP", http = "HTTP" }

        public let listener: Listener
        public let host: String
        public let port: UInt16
        public let cause: NetError

        public var description: String {
            let address = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
            return switch cause.errno {
            case EADDRINUSE?: "the \(listener.rawValue) address \(address) is already in use (by another liveline serve or server?)"
            case EACCES?: "may not listen for \(listener.rawValue) on \(address): ports below 1024 need privileges"
            default: "cannot listen for \(listener.rawValue) on \(address): \(cause)"
            }
        }
    }

    /// Starts the loops, binds both ports and starts serving. Throws (with everything
    /// it started stopped again) `ListenError` when a port cannot be bound, `NetError`
    /// when the loops cannot start.
    public init(configuration: Configuration = Configuration()) throws {
        self.configuration = configuration
        let group = try EventLoopGroup(count: configuration.loops, name: "liveline-relay")
        let line = LineService(limits: configuration.line, group: group, verifier: configuration.auth)
        self.line = line
        let call = CallService(limits: configuration.call, group: group, verifier: configuration.auth)
        self.call = call
        do {
            let rtmp = try ListenError.naming(.rtmp, configuration.rtmp.host, configuration.rtmp.port) { () throws(NetError) in
                try RTMPServer(configuration: configuration.rtmp, group: group)
            }
            self.rtmp = rtmp
            // With tokens, a call's stream is also the business of its user's token only.
            let checksUsers = configuration.auth != nil
            rtmp.publishAuthorizer.install { [weak line, weak call] key, query, claims in
                line?.publishRefusal(streamName: key.name, query: query)
                    ?? call?.publishRefusal(streamName: key.name, query: query, userId: claims?.sub, checksUsers: checksUsers)
            }
            // A hear stream is played only by its co-host; with tokens, a co-host stream only
            // by its line's hoster and co-hosts. A call's stream only by the call's other user.
            rtmp.playAuthorizer.install { [weak line, weak call] key, query, claims in
                line?.playRefusal(streamName: key.name, query: query, userId: claims?.sub, checksUsers: checksUsers)
                    ?? call?.playRefusal(streamName: key.name, query: query, userId: claims?.sub, checksUsers: checksUsers)
            }
            line.publisherQuery = { [weak rtmp] key in rtmp?.publisherQuery(of: key) }
            // A co-host's stream lives in the app its co-host chose: end it in every app.
            line.onCohostGone = { [weak rtmp] pubId in
                guard let rtmp else { return }
                for stream in rtmp.streams() where stream.name == pubId || stream.name == pubId + LineStreams.hearSuffix {
                    rtmp.endPublisher(of: StreamKey(app: stream.app, name: stream.name))
                }
            }
            // An ended call's streams end in every app (each user chose its app).
            call.onCallEnded = { [weak rtmp] roomId in
                guard let rtmp else { return }
                let names = [true, false].map { CallStreams.streamName(roomId: roomId, caller: $0) }
                for stream in rtmp.streams() where names.contains(stream.name) {
                    rtmp.endPublisher(of: StreamKey(app: stream.app, name: stream.name))
                }
            }
            let hls = configuration.hls.map { HLSService(limits: $0, server: rtmp, group: group) }
            self.hls = hls
            let surroundings = RelayHTTPAPI.Surroundings(group: group, hls: hls)
            do {
                http = try ListenError.naming(.http, configuration.httpHost, configuration.httpPort) { () throws(NetError) in
                    try HTTPServer(host: configuration.httpHost, port: configuration.httpPort, group: group,
                                   router: RelayHTTPAPI.router(for: rtmp, line: line, call: call, hls: hls, surroundings: surroundings),
                                   capacity: configuration.httpCapacity)
                }
            } catch {
                hls?.stop()
                throw error
            }
            surroundings.http = http
            // Clients find the line from the RTMP URL they were given: every connect's
            // answer names the signaling port (and its host when it differs).
            let httpHost = configuration.httpHost
            let sameHost = ["0.0.0.0", "::", "", configuration.rtmp.host].contains(httpHost)
            rtmp.connectAnnouncement = LineSignalAnnouncement(port: Int(http.localPort), host: sameHost ? nil : httpHost).properties
        } catch {
            line.stop()
            call.stop()
            group.shutdown()
            throw error
        }
        self.group = group
    }

    public var rtmpPort: UInt16 { rtmp.localPort }
    public var httpPort: UInt16 { http.localPort }

    /// Stops accepting, closes every connection and joins the loop threads.
    public func shutdown() {
        rtmp.close()
        http.close()
        hls?.stop()
        line.stop()
        call.stop()
        group.shutdown()
    }
}

extension RelayServer.ListenError {
    /// Runs `open` (which binds `listener`'s port), turning its failure into a ListenError.
    static func naming<Value>(_ listener: Listener, _ host: String, _ port: UInt16,
                              _ open: () throws(NetError) -> Value) throws(RelayServer.ListenError) -> Value {
        do {
            return try open()
        } catch {
            throw RelayServer.ListenError(listener: listener, host: host, port: port, cause: error)
        }
    }
}
