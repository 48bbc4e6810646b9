import Foundation
import Glibc
import LiveAuth
import LiveCore
import LiveNet
import LiveRTMP
import LiveTestSupport
import Testing
@testable import LiveLine

/// The guest kit playing HTTP-FLV (`http://…/x.flv`) through the same events, decode
/// path and reconnect as RTMP, against ffmpeg's own HTTP server.
@Suite("Guest kit HTTP-FLV", .serialized)
struct GuestHTTPFLVTests {
    @Test("ffmpeg serving HTTP-FLV (chunked): ok, firstFrame 320x240, video and AAC audio decoded; its end is the stream's end")
    func playsFFmpeg() throws {
        let server = try FFmpegFLVServer(seconds: 3)
        defer { server.stop() }
        let guest = Guest()
        let events = Locked<[GuestEvent]>([])
        guest.onEvent = { event in events.update { $0.append(event) } }
        try guest.startPlay(url: server.url, sink: nil)
        #expect(eventually(10) { !guest.isPlaying })
        let names = events.value.map(\.name)
        #expect(names.first == "ok", "\(names)")
        #expect(events.value.contains(.firstFrame(width: 320, height: 240)), "\(names)")
        #expect(events.value.last == .closed(.ok), "\(names)")
        #expect(guest.playEnd?.reason == .streamEnded && guest.playEnd?.error == nil)
        let stats = guest.stats
        #expect(stats.frames > 60 && stats.width == 320 && stats.height == 240, "\(stats)")
        #expect(stats.audioFrames > 60 && stats.audioSampleRate == 48000, "\(stats)")
        #expect(stats.bytesReceived > 10_000)
    }

    @Test("a close-delimited HTTP/1.0 body plays the same; its close is a lost connection, retried")
    func closeDelimited() throws {
        let port = try FFmpegFLVServer.freePort()
        // ffmpeg writes FLV to a one-shot server that answers HTTP/1.0 with no length.
        let script = """
            socket, subprocess, sys = (__import__(m) for m in ("socket", "subprocess", "sys"))
            s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind(("127.0.0.1", \(port))); s.listen(1)
            c, _ = s.accept(); c.recv(4096)
            c.sendall(b"HTTP/1.0 200 OK\\r\\nContent-Type: video/x-flv\\r\\n\\r\\n")
            f = subprocess.Popen(["ffmpeg", "-nostdin", "-v", "error", "-re", "-f", "lavfi", "-i", "testsrc2=size=160x120:rate=30",
                "-t", "2", "-c:v", "libx264", "-preset", "ultrafast", "-g", "30", "-f", "flv", "-"], stdout=subprocess.PIPE)
            while True:
                b = f.stdout.read(4096)
                if not b: break
                c.sendall(b)
            c.close()
            """
        let python = Process()
        python.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        python.arguments = ["-c", script]
        try python.run()
        defer { if python.isRunning { python.terminate() }; python.waitUntilExit() }
        #expect(eventually(5) { FFmpegFLVServer.isListening(port) })
        var options = Guest.Options()
        options.reconnect = ReconnectBackoff(baseSeconds: 0.2, maxTries: 1)
        let guest = Guest(options: options)
        let events = Locked<[GuestEvent]>([])
        guest.onEvent = { event in events.update { $0.append(event) } }
        try guest.startPlay(url: "http://127.0.0.1:\(port)/x.flv", sink: nil)
        #expect(eventually(10) { !guest.isPlaying })
        #expect(events.value.contains(.firstFrame(width: 160, height: 120)), "\(events.value.map(\.name))")
        #expect(guest.stats.frames > 40)
        // The close was retried (reconnecting), and nobody listened any more.
        #expect(events.value.contains { $0.name == "reconnecting" }, "\(events.value.map(\.name))")
        #expect(guest.playEnd?.reason == .failed)
    }

    @Test("the server vanishes mid-stream: reconnecting, then the same URL served again plays on (reconnects 1)")
    func reconnects() throws {
        let first = try FFmpegFLVServer(seconds: 20)
        defer { first.stop() }
        var options = Guest.Options()
        options.reconnect = ReconnectBackoff(baseSeconds: 0.5, factor: 1, jitter: 0, maxTries: 10)
        let guest = Guest(options: options)
        let events = Locked<[GuestEvent]>([])
        guest.onEvent = { event in events.update { $0.append(event) } }
        try guest.startPlay(url: first.url, sink: nil)
        defer { guest.stopPlay() }
        #expect(eventually(8) { guest.stats.frames > 20 })
        first.kill()
        #expect(eventually(5) { events.value.contains { $0.name == "reconnecting" } })
        let framesBefore = guest.stats.frames
        let second = try FFmpegFLVServer(port: first.port, seconds: 20)
        defer { second.stop() }
        #expect(eventually(10) { guest.stats.reconnects == 1 && guest.stats.frames > framesBefore + 20 }, "\(guest.stats)")
        #expect(guest.isPlaying)
    }

    @Test("refusals: a 404 ends the play with the status (exit code's 'refused'), a relay's 401 JSON gives its SDK code")
    func refused() throws {
        let group = try EventLoopGroup(count: 1, name: "test-http")
        defer { group.shutdown() }
        var router = HTTPRouter()
        router.get("/live/locked.flv") { _ in
            .response(.json(text: #"{"code":213,"message":"no token"}"#, status: .unauthorized))
        }
        let server = try HTTPServer(host: "127.0.0.1", port: 0, group: group, router: router)
        defer { server.close() }
        let guest = Guest()
        try guest.startPlay(url: "http://127.0.0.1:\(server.localPort)/live/none.flv", sink: nil)
        #expect(eventually(5) { !guest.isPlaying })
        let error = try #require(guest.playEnd?.error as? GuestPlayError)
        guard case .player(let missing) = error else { Issue.record("\(error)"); return }
        #expect(missing.statusCode == "HTTP 404", "\(missing)")
        #expect("\(missing)".contains("the server refused: HTTP 404"), "\(missing)")
        try guest.startPlay(url: "http://127.0.0.1:\(server.localPort)/live/locked.flv", sink: nil)
        #expect(eventually(5) { !guest.isPlaying })
        guard case .player(let locked)? = guest.playEnd?.error as? GuestPlayError else { Issue.record("no error"); return }
        #expect(locked.refusalCode == .tokenMustBeVerified, "\(locked)")
        #expect("\(locked)".contains("213 no token"), "\(locked)")
    }

    @Test("hostile answers end the play at once with what was wrong: a web page (not FLV), a tag over the budget, no FLV header in time")
    func hostile() throws {
        let group = try EventLoopGroup(count: 1, name: "test-http")
        defer { group.shutdown() }
        var router = HTTPRouter()
        router.get("/page.flv") { _ in
            .response(HTTPResponse(status: .ok, headers: ["Content-Type": "text/html"], body: Array("<html>hello</html>".utf8)))
        }
        router.get("/huge.flv") { _ in
            // A header, then a video tag claiming 16 MiB − 1 bytes.
            .response(HTTPResponse(status: .ok, body: FLVTagWriter.header(hasAudio: false, hasVideo: true)
                + [9, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0, 0, 0, 0]))
        }
        let server = try HTTPServer(host: "127.0.0.1", port: 0, group: group, router: router)
        defer { server.close() }
        func play(_ path: String) throws -> (String, Double) {
            var options = Guest.Options()
            options.timeout = .seconds(2)
            let guest = Guest(options: options)
            let started = Date()
            try guest.startPlay(url: "http://127.0.0.1:\(server.localPort)\(path)", sink: nil)
            #expect(eventually(6) { !guest.isPlaying })
            #expect(guest.playEnd?.reason == .failed)
            let message = guest.playEnd?.error.map { "\($0)" } ?? ""
            return (message, Date().timeIntervalSince(started))
        }
        let (page, pageSeconds) = try play("/page.flv")
        #expect(page.contains("the body is not FLV") && pageSeconds < 1, "\(page) after \(pageSeconds) s")
        let (huge, _) = try play("/huge.flv")
        #expect(huge.contains("over the limit"), "\(huge)")
        // A server that answers nothing: the connect-and-answer limit.
        // The kernel completes its connections; nobody ever accepts or answers them.
        let silent = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(silent) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let listening = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(silent, $0, length) == 0 && listen(silent, 4) == 0 && getsockname(silent, $0, &length) == 0
            }
        }
        try #require(listening)
        var options = Guest.Options()
        options.timeout = .seconds(1)
        let guest = Guest(options: options)
        try guest.startPlay(url: "http://127.0.0.1:\(UInt16(bigEndian: address.sin_port))/x.flv", sink: nil)
        #expect(eventually(4) { !guest.isPlaying })
        let message = guest.playEnd?.error.map { "\($0)" } ?? ""
        #expect(message.contains("timed out"), "\(message)")
    }

    @Test("a token provider's token replaces the HTTP-FLV URL's ?token=, the query's other parameters kept")
    func tokenOnQuery() throws {
        let group = try EventLoopGroup(count: 1, name: "test-http")
        defer { group.shutdown() }
        let seen = Locked<[String]>([])
        var router = HTTPRouter()
        router.get("/live/x.flv") { request in
            seen.update { $0.append(request.target) }
            return .response(.text("nope", status: .notFound))
        }
        let server = try HTTPServer(host: "127.0.0.1", port: 0, group: group, router: router)
        defer { server.close() }
        var options = Guest.Options()
        options.tokenProvider = { IssuedToken(token: "fresh", uid: "bob", expiresAt: 0) }
        let guest = Guest(options: options)
        try guest.startPlay(url: "http://127.0.0.1:\(server.localPort)/live/x.flv?token=old&a=1", sink: nil)
        #expect(eventually(5) { !guest.isPlaying })
        #expect(seen.value == ["/live/x.flv?a=1&token=fresh"], "\(seen.value)")
    }
}
