import Foundation
import Testing

/// Exit codes that tell what happened (0 ok, 1 runtime failure, 2 usage, 3 refused by
/// the line or the server) and summaries that agree with the run.
@Suite("liveline exit codes and summaries", .serialized)
struct ExitStatusTests {
    static func objects(_ text: String) -> [[String: Any]] {
        text.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    static func event(_ name: String, in text: String) -> [String: Any]? {
        objects(text).last { $0["event"] as? String == name }
    }

    // MARK: - runtime failures and refusals

    @Test("an accepted co-host whose push fails: exit 1 with cohostPush.failed, not 0")
    func cohostPushFails() throws {
        let server = try Server()
        defer { server.background.stop() }
        let hoster = try KitProcess(["host", server.url("room"), "--source", "color:white", "--size", "160x90", "--line", "room",
                                     "--accept", "auto", "--stats", "json"])
        defer { hoster.stop() }
        #expect(hoster.waitFor(timeout: 10) { $0["event"] as? String == "lineResult" && $0["code"] as? Int == 0 } != nil)
        // The guest finds the line through the proxy (its first connection); its push, the
        // next one, finds nobody listening there.
        let proxy = try OneShotProxy(upstreamPort: server.rtmpPort)
        let started = Date()
        let guest = try CLI.liveline("guest", "rtmp://127.0.0.1:\(proxy.port)/live/room", "--apply", "--no-play",
                                     "--source", "color:red", "--size", "160x90", "--stats", "json", "--duration", "30")
        #expect(guest.status == 1, "stderr: \(guest.stderr)")
        #expect(guest.stdout.contains("\"event\":\"applicationResult\",\"code\":0"), "stdout: \(guest.stdout)")
        #expect(guest.stdout.contains("\"event\":\"cohostPush.failed\""), "stdout: \(guest.stdout)")
        #expect(guest.stderr.contains("the co-host push failed"), "stderr: \(guest.stderr)")
        #expect(Date().timeIntervalSince(started) < 20)
    }

    @Test("host --line with a liveInfo over 1024 bytes: refused by the line, exit 3")
    func liveInfoTooLong() throws {
        let server = try Server()
        defer { server.background.stop() }
        let result = try CLI.liveline("host", server.url("big"), "--source", "color:white", "--size", "160x90", "--line", "big",
                                      "--accept", "none", "--signal", "ws://127.0.0.1:\(server.httpPort)/line",
                                      "--live-info", String(repeating: "x", count: 1025), "--duration", "20")
        #expect(result.status == 3, "stderr: \(result.stderr)")
        #expect(result.stderr.contains("the co-host line was not opened: code 4"), "stderr: \(result.stderr)")
    }

    // MARK: - summaries

    @Test("host --stats json that cannot connect: a failed event and a summary with the error on stdout, exit 1")
    func hostFailsAtStart() throws {
        let result = try CLI.liveline("host", "rtmp://127.0.0.1:1/live/x", "--size", "160x120", "--stats", "json", "--duration", "5")
        #expect(result.status == 1, "stderr: \(result.stderr)")
        // Before: nothing at all on stdout.
        let failed = try #require(Self.event("failed", in: result.stdout), "stdout: \(result.stdout)")
        #expect(failed["code"] as? Int == 100)
        // The kit's own failed event (onRtmpStreamFailed for the first connect), once.
        #expect(result.stdout.components(separatedBy: "\"event\":\"failed\"").count == 2, "stdout: \(result.stdout)")
        let summary = try #require(Self.event("summary", in: result.stdout), "stdout: \(result.stdout)")
        #expect((summary["error"] as? String)?.contains("rtmp://127.0.0.1:1/live/x") == true, "\(summary)")
        #expect(summary["frames"] as? Int == 0)
    }

    @Test("host --stats json with a source or recording that cannot be used: failed and a summary on stdout, exit 1", arguments: [
        ["--source", "file:/nonexistent/clip.mp4"], ["--record", "/nonexistent/a.flv"],
    ])
    func hostUnusableInput(arguments: [String]) throws {
        let result = try CLI.run(CLI.liveline, ["host", "--size", "160x120", "--stats", "json", "--duration", "1"] + arguments)
        #expect(result.status == 1, "stderr: \(result.stderr)")
        #expect(Self.event("failed", in: result.stdout) != nil, "stdout: \(result.stdout)")
        let summary = try #require(Self.event("summary", in: result.stdout), "stdout: \(result.stdout)")
        #expect((summary["error"] as? String)?.contains("/nonexistent/") == true, "\(summary)")
        // Before (--record): the summary named the recording it never made.
        #expect(summary["record"] is NSNull, "\(summary)")
    }

    @Test("host --stats json whose reconnect tries run out still ends with a summary, exit 1")
    func hostRetriesRunOut() throws {
        let server = try Server()
        let host = try KitProcess(["host", server.url("gone"), "--size", "160x120", "--reconnect-tries", "0", "--stats", "json"])
        defer { host.stop() }
        #expect(host.waitFor(timeout: 10) { $0["event"] as? String == "ok" } != nil)
        // Pushing frames first (a loaded machine can connect before the first is encoded).
        #expect(host.waitFor(timeout: 10) { ($0["frames"] as? Int ?? 0) > 0 } != nil, "\(host.names)")
        server.background.stop()
        let deadline = Date().addingTimeInterval(10)
        while host.process.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.1) }
        #expect(!host.process.isRunning)
        host.process.waitUntilExit()
        Thread.sleep(forTimeInterval: 0.3)
        #expect(host.process.terminationStatus == 1)
        #expect(host.names.contains("failed"), "\(host.names)")
        // Before: the failure ended the run without a summary.
        let summary = try #require(host.events.last { $0.object["event"] as? String == "summary" }?.object, "\(host.names)")
        #expect(summary["error"] as? String != nil, "\(summary)")
        #expect((summary["frames"] as? Int ?? 0) > 0)
    }

    @Test("the final lines of hoster and guest count the drops and reconnects their status lines showed")
    func summariesAgree() throws {
        let server = try Server()
        let url = server.url("agree")
        final class Box: @unchecked Sendable { var result: CLI.Result? }  // written once, read after the group waits
        let host = Box(), guest = Box()
        let group = DispatchGroup()
        for (box, arguments, delay) in [(host, ["host", url, "--size", "160x120", "--fps", "15", "--keyint", "1", "--duration", "16"], 0.0),
                                        (guest, ["guest", url, "--duration", "10.5"], 1.0)] {
            group.enter()
            DispatchQueue.global().async {
                Thread.sleep(forTimeInterval: delay)
                box.result = try? CLI.run(CLI.liveline, arguments)
                group.leave()
            }
        }
        // The server goes away once the guest plays (on a loaded machine its start can
        // take longer than the host's head start).
        let deadline = Date().addingTimeInterval(20)
        while server.players(of: "agree") == 0, Date() < deadline { Thread.sleep(forTimeInterval: 0.1) }
        Thread.sleep(forTimeInterval: 1)
        let restarted = try server.killAndRestart()
        defer { restarted.stop() }
        group.wait()
        func number(before word: String, in line: String) -> Int? {
            let words = line.replacingOccurrences(of: ",", with: "").split(separator: " ")
            return words.firstIndex(of: Substring(word)).flatMap { $0 > 0 ? Int(words[$0 - 1]) : nil }
        }
        func number(after word: String, in line: String) -> Int? {
            let words = line.replacingOccurrences(of: ",", with: "").split(separator: " ")
            return words.firstIndex(of: Substring(word)).flatMap { $0 + 1 < words.count ? Int(words[$0 + 1]) : nil }
        }

        let hosted = try #require(host.result)
        #expect(hosted.status == 0, "stderr: \(hosted.stderr)")
        let hostLines = hosted.stderr.split(separator: "\n").map(String.init)
        let status = try #require(hostLines.last { $0.contains(" frames ") && $0.contains("dropped ") }, "stderr: \(hosted.stderr)")
        let final = try #require(hostLines.last { $0.hasPrefix("done:") }, "stderr: \(hosted.stderr)")
        let shown = try #require(number(after: "dropped", in: status), "\(status)")
        #expect(shown > 0, "no frame dropped while the server was away: \(status)")
        #expect(status.contains("reconnects 1"), "\(status)")
        // Before: "0 dropped" and no reconnect in the final line.
        let total = try #require(number(before: "dropped", in: final), "\(final)")
        #expect(total >= shown, "status: \(status)\nfinal: \(final)")
        #expect(final.contains("1 reconnects"), "\(final)")

        let played = try #require(guest.result)
        #expect(played.status == 0, "stderr: \(played.stderr)")
        let guestLines = played.stderr.split(separator: "\n").map(String.init)
        let guestStatus = try #require(guestLines.last { $0.contains(" frames ") && !$0.hasPrefix("done") }, "stderr: \(played.stderr)")
        let guestFinal = try #require(guestLines.last { $0.hasPrefix("done") }, "stderr: \(played.stderr)")
        #expect(guestStatus.contains("reconnects 1"), "\(guestStatus)")
        // Before: the guest's final line said nothing of its reconnect, skips or drops.
        #expect(guestFinal.contains("reconnects 1"), "\(guestFinal)")
        for word in ["skipped", "dropped"] {
            if let counted = number(after: word, in: guestStatus) {
                #expect((number(after: word, in: guestFinal) ?? 0) >= counted, "status: \(guestStatus)\nfinal: \(guestFinal)")
            }
        }
    }

    @Test("guest: a snapshot or recording path that cannot be written is an error at start, exit 1", arguments: [
        ["--snapshot", "/nonexistent-folder/x.png"], ["--record", "/nonexistent-folder/x.flv"],
    ])
    func unwritableOutputs(arguments: [String]) throws {
        let server = try Server()
        defer { server.background.stop() }
        let started = Date()
        let result = try CLI.run(CLI.liveline, ["guest", server.url("nobody"), "--timeout", "20"] + arguments)
        #expect(result.status == 1, "stderr: \(result.stderr)")
        // Before: found only after the run (here: after waiting 20 s for a stream).
        #expect(result.stderr.contains("cannot be written: there is no folder '/nonexistent-folder'"), "stderr: \(result.stderr)")
        #expect(Date().timeIntervalSince(started) < 10)
        // A program reading the JSON lines gets the end and a summary too.
        let json = try CLI.run(CLI.liveline, ["guest", server.url("nobody"), "--timeout", "20", "--stats", "json"] + arguments)
        #expect(json.status == 1)
        #expect(Self.event("closed", in: json.stdout)?["code"] as? Int == 4, "stdout: \(json.stdout)")
        let summary = try #require(Self.event("summary", in: json.stdout), "stdout: \(json.stdout)")
        #expect((summary["error"] as? String)?.contains("/nonexistent-folder") == true, "\(summary)")
        #expect(summary["snapshot"] is NSNull && summary["record"] is NSNull, "\(summary)")
    }

    @Test("guest of a stream nobody publishes: connected, waiting; then closed with 102 and exit 1; the summary names no snapshot")
    func missingStream() throws {
        let server = try Server()
        defer { server.background.stop() }
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let snapshot = directory.appendingPathComponent("never.png").path
        let result = try CLI.liveline("guest", server.url("nobody"), "--timeout", "2.5", "--stats", "json", "--snapshot", snapshot)
        #expect(result.status == 1, "stderr: \(result.stderr)")
        let events = Self.objects(result.stdout)
        // Before: a bare {"event":"ok"}, zero-frame stats, closed with 101.
        let first = try #require(events.first)
        #expect(first["event"] as? String == "ok")
        #expect(first["message"] as? String == "connected, waiting for the stream", "\(first)")
        let stats = events.filter { $0["event"] as? String == "stats" }
        #expect(!stats.isEmpty && stats.allSatisfy { $0["waiting"] as? Bool == true }, "\(stats)")
        let closed = try #require(Self.event("closed", in: result.stdout), "stdout: \(result.stdout)")
        #expect(closed["code"] as? Int == 102, "\(closed)")
        #expect((closed["message"] as? String)?.contains("no video") == true, "\(closed)")
        let summary = try #require(Self.event("summary", in: result.stdout))
        #expect(summary["snapshot"] is NSNull, "the summary names a snapshot that was never written: \(summary)")
        #expect(!FileManager.default.fileExists(atPath: snapshot))

        let human = try CLI.liveline("guest", server.url("nobody"), "--timeout", "1.5")
        #expect(human.status == 1)
        #expect(human.stderr.contains("connected to \(server.url("nobody")), waiting for the stream"), "stderr: \(human.stderr)")
    }

    @Test("guest recording to a full disk: plays on, the summary says so and names no recording, exit 1")
    func recordingFails() throws {
        let server = try Server()
        defer { server.background.stop() }
        let host = try KitProcess(["host", server.url("full"), "--size", "160x120", "--keyint", "1", "--duration", "20", "--stats", "json"])
        defer { host.stop() }
        #expect(host.waitFor(timeout: 10) { $0["event"] as? String == "ok" } != nil)
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // /dev/full: every write fails with ENOSPC, as on a full disk.
        let record = directory.appendingPathComponent("rec.flv").path
        try FileManager.default.createSymbolicLink(atPath: record, withDestinationPath: "/dev/full")
        let result = try CLI.liveline("guest", server.url("full"), "--frames", "40", "--record", record, "--stats", "json")
        // Before: exit 1 as if playing had failed ("closed" with 101), the file named as recorded.
        #expect(result.status == 1, "stderr: \(result.stderr)")
        #expect(result.stderr.contains("recording to \(record) stopped"), "stderr: \(result.stderr)")
        #expect(Self.event("closed", in: result.stdout)?["code"] as? Int == 0, "stdout: \(result.stdout)")
        #expect(Self.event("recordingFailed", in: result.stdout) != nil, "stdout: \(result.stdout)")
        let summary = try #require(Self.event("summary", in: result.stdout))
        // Before: "record" still named the file it could not write.
        #expect(summary["record"] is NSNull, "\(summary)")
        #expect(summary["ended"] as? String == "frames", "\(summary)")
        #expect((summary["recordError"] as? String)?.contains("No space left on device") == true, "\(summary)")
        let first = Self.objects(result.stdout).map { $0["event"] as? String }
        #expect(Array(first.prefix(2)) == ["ok", "firstFrame"], "\(first)")
    }
}

/// Forwards the first connection to `upstreamPort` on loopback and then stops listening,
/// so every later connection is refused.
final class OneShotProxy: @unchecked Sendable {
    // @unchecked: only `port`, immutable; the sockets belong to the threads it starts.
    let port: Int

    init(upstreamPort: Int) throws {
        let (listener, port) = try TroubleProxy.listen()
        self.port = port
        Thread.detachNewThread {
            let client = accept(listener, nil, nil)
            close(listener)
            guard client >= 0 else { return }
            guard let server = TroubleProxy.connect(toPort: upstreamPort) else {
                close(client)
                return
            }
            Thread.detachNewThread { Self.pump(from: server, to: client) }
            Self.pump(from: client, to: server)
        }
    }

    private static func pump(from source: Int32, to destination: Int32) {
        var buffer = [UInt8](repeating: 0, count: 16384)
        while true {
            let n = recv(source, &buffer, buffer.count, 0)
            if n <= 0 { break }
            if buffer.withUnsafeBytes({ send(destination, $0.baseAddress, n, Int32(MSG_NOSIGNAL)) }) != n { break }
        }
        shutdown(source, Int32(SHUT_RDWR))
        shutdown(destination, Int32(SHUT_RDWR))
    }
}
