import Foundation
import Testing

/// `liveline call`: its command line, and 1v1 calls end to end on loopback through a
/// `liveline serve` (bob listens, alice and carol call).
@Suite("liveline call", .serialized)
struct CallCommandTests {
    @Test("a call's command line that cannot work is a usage error saying why", arguments: [
        (["call"], "missing --user"),
        (["call", "--user", "bob"], "give --listen (wait for calls) or --to PEER"),
        (["call", "--user", "bob", "--listen", "--to", "alice"], "--listen and --to exclude each other"),
        (["call", "--user", "alice", "--to", "bob", "--accept", "auto"], "--accept needs --listen"),
        (["call", "--user", "bob", "--listen", "--audio-only"], "--audio-only needs --to PEER"),
        (["call", "--user", "bob", "--listen", "--calls", "3"], "--calls needs --to PEER"),
        (["call", "--user", "bob", "--listen", "--accept", "sometimes"], "--accept must be auto or manual"),
        (["call", "--user", "bob smith", "--listen"], "--user: user id 'bob smith' has a character outside"),
        (["call", "--user", "alice", "--to", ""], "--to: an empty user id"),
        (["call", "--user", "alice", "--to", "alice"], "own --user"),
        (["call", "--user", "alice", "--to", "bob", "--calls", "0"], "--calls must be a whole number"),
        (["call", "--user", "alice", "--to", "bob", "--server", "http://127.0.0.1"], "--server needs rtmp://"),
        (["call", "--user", "alice", "--to", "bob", "--server", "rtmp://127.0.0.1/call/bob"], "no stream"),
        (["call", "--user", "alice", "--to", "bob", "--signal", "http://x/call"], "--signal needs a ws://HOST:PORT/call URL"),
        (["call", "--user", "alice", "--to", "bob", "--snapshot", "bob.jpg"], "--snapshot needs a file ending in .png"),
        (["call", "--user", "alice", "--to", "bob", "--y4m", "-", "--out", "-"], "cannot both write to standard output"),
        (["call", "--user", "alice", "--to", "bob", "--stats", "text"], "--stats accepts only 'json'"),
        (["call", "--user", "alice", "--to", "bob", "--size", "641x360"], "--size needs even width and height"),
        (["call", "--user", "alice", "--to", "bob", "--extension", String(repeating: "x", count: 1025)], "at most 1024"),
        (["call", "--user", "alice", "--to", "bob", "--tiemout-ms", "10"], "did you mean --timeout-ms?"),
        (["call", "--user", "alice", "--to", "bob", "bob"], "unexpected argument 'bob'"),
        (["call", "--user", "alice", "--to", "bob", "--audio-only", "--source", "color:red"], "--source color:red brings none"),
    ])
    func usageErrors(arguments: [String], message: String) throws {
        try UsageMessageTests.expectUsageError(arguments, message)
    }

    @Test("--help documents every option and shows an example, and liveline's help names the command")
    func help() throws {
        let help = try CLI.liveline("call", "--help")
        #expect(help.status == 0)
        let options = ["--user", "--listen", "--accept", "--to", "--audio-only", "--extension", "--calls", "--duration",
                       "--timeout-ms", "--max-call-seconds", "--server", "--signal", "--token", "--token-command",
                       "--source", "--audio-source", "--size", "--fps", "--bitrate", "--snapshot", "--y4m", "--out",
                       "--stats", "--help"]
        // The options the help defines: the `--name` starting a line (as liveline's own typo hints read them).
        let defined = help.stdout.split(separator: "\n").compactMap { line -> String? in
            let word = line.drop { $0 == " " }.prefix { !$0.isWhitespace }
            return word.hasPrefix("--") ? String(word) : nil
        }
        #expect(Set(defined) == Set(options), "\(help.stdout)")
        #expect(help.stdout.contains("liveline call --user alice --to bob"), "\(help.stdout)")
        let main = try CLI.liveline("--help")
        #expect(main.stdout.contains("call      a 1v1 private call"), "\(main.stdout)")
    }

    /// `liveline serve` on free ports and what a call on it needs.
    struct Line {
        let server: Server
        /// `serve`: more serve options (`--auth-secret-file FILE`).
        init(serve: [String] = []) throws { server = try Server(serve) }
        var options: [String] {
            ["--server", "rtmp://127.0.0.1:\(server.rtmpPort)", "--signal", "ws://127.0.0.1:\(server.httpPort)/call"]
        }

        /// A listener, JSON lines on; registered (prepared) when it returns.
        func listen(_ user: String, _ extra: [String], input: Any? = nil) throws -> KitProcess {
            let process = try KitProcess(["call", "--user", user, "--listen", "--stats", "json"] + options + extra, input: input)
            try #require(process.waitFor(timeout: 10) { Self.isState($0, "prepared") } != nil,
                         "\(user) did not register: \(process.stderr)")
            return process
        }

        /// A caller run to its end.
        func call(_ user: String, to peer: String, _ extra: [String]) throws -> (CLI.Result, [[String: Any]]) {
            let result = try CLI.run(CLI.liveline, ["call", "--user", user, "--to", peer, "--stats", "json"] + options + extra)
            return (result, CallCommandTests.lines(result.stdout))
        }

        static func isState(_ line: [String: Any], _ state: String, reason: String? = nil) -> Bool {
            line["event"] as? String == "state" && line["state"] as? String == state
                && (reason == nil || line["reason"] as? String == reason)
        }
    }

    static func lines(_ text: String) -> [[String: Any]] {
        text.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    /// The palette colour nearest to the centre of a PNG.
    static func centreColour(_ png: String, width: Int, height: Int) throws -> String {
        let rgb = try CLI.rgbFrame(png, index: 0, width: width, height: height)
        let i = ((height / 2) * width + width / 2) * 3
        return CohostLineTests.name((Int(rgb[i]), Int(rgb[i + 1]), Int(rgb[i + 2])))
    }

    @Test("alice calls bob, who accepts by himself: both connect, each sees the other's colour, alice hangs up after --duration, both summaries say why")
    func callAndHangUp() throws {
        let line = try Line()
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        // Each keeps a snapshot of the other: bob's is written as his play of alice stops,
        // alice's before her run ends (the kit's close waits for the call's media to stop).
        let (aliceSees, bobSees) = (dir.appendingPathComponent("bob.png").path, dir.appendingPathComponent("alice.png").path)
        let bob = try line.listen("bob", ["--accept", "auto", "--source", "color:blue", "--size", "320x180",
                                          "--snapshot", bobSees])
        defer { bob.stop() }
        let (alice, lines) = try line.call("alice", to: "bob", ["--source", "color:red", "--size", "320x180",
                                                                "--duration", "2", "--extension", "hello", "--snapshot", aliceSees])
        #expect(alice.status == 0, "alice: \(alice.stderr)\n\(alice.stdout)")
        #expect(lines.contains { Line.isState($0, "calling", reason: "localVideoCall") }, "\(alice.stdout)")
        #expect(lines.contains { Line.isState($0, "connected") }, "\(alice.stdout)")
        let aliceSummary = try #require(lines.first { $0["event"] as? String == "callSummary" }, "\(alice.stdout)")
        #expect(aliceSummary["ended"] as? String == "localHangup")
        #expect(aliceSummary["connected"] as? Bool == true)
        #expect((aliceSummary["connectedSeconds"] as? Double ?? 0) >= 2)
        #expect((aliceSummary["setupMs"] as? Double ?? 0) > 0, "\(aliceSummary)")
        #expect(aliceSummary["latencyP50Ms"] is Double, "\(aliceSummary)")
        let summary = try #require(lines.last, "\(alice.stdout)")
        #expect(summary["event"] as? String == "summary" && summary["calls"] as? Int == 1
                && summary["ended"] as? String == "localHangup", "\(summary)")

        // Bob heard who called with what, connected, and was hung up on.
        #expect(bob.waitFor(timeout: 5) { $0["event"] as? String == "callSummary" } != nil, "bob: \(bob.stderr)")
        let bobLines = bob.events.map(\.object)
        let incoming = try #require(bobLines.first { $0["event"] as? String == "incomingCall" }, "\(bob.names)")
        #expect(incoming["from"] as? String == "alice" && incoming["extension"] as? String == "hello", "\(incoming)")
        #expect(bobLines.contains { Line.isState($0, "connected") }, "\(bob.names)")
        #expect(bobLines.contains { Line.isState($0, "prepared", reason: "remoteHangup") }, "\(bob.names)")
        let bobSummary = try #require(bobLines.first { $0["event"] as? String == "callSummary" })
        #expect(bobSummary["ended"] as? String == "remoteHangup" && bobSummary["peerUserId"] as? String == "alice",
                "\(bobSummary)")
        #expect(bob.process.isRunning, "a listener goes on listening after a call")

        // Each saw the other's colour; alice's picture was written before she exited.
        #expect(FileManager.default.fileExists(atPath: aliceSees), "alice exited without writing her snapshot")
        let deadline = Date().addingTimeInterval(5)
        while !FileManager.default.fileExists(atPath: bobSees), Date() < deadline { Thread.sleep(forTimeInterval: 0.1) }
        Thread.sleep(forTimeInterval: 0.2)
        #expect(try Self.centreColour(aliceSees, width: 320, height: 180) == "blue")
        #expect(try Self.centreColour(bobSees, width: 320, height: 180) == "red")
    }

    @Test("bob answers 'reject busy-now' on stdin: alice's call ends remoteRejected with the reason, exit status 3")
    func rejectFromStdin() throws {
        let line = try Line()
        let typed = Pipe()
        let bob = try line.listen("bob", ["--accept", "manual", "--size", "160x90"], input: typed)
        defer { bob.stop() }
        let alice = try KitProcess(["call", "--user", "alice", "--to", "bob", "--size", "160x90", "--stats", "json"] + line.options)
        defer { alice.stop() }
        #expect(bob.waitFor(timeout: 10) { $0["event"] as? String == "incomingCall" && $0["from"] as? String == "alice" } != nil,
                "bob: \(bob.stderr)")
        typed.fileHandleForWriting.write(Data("reject busy-now\n".utf8))
        alice.process.waitUntilExit()
        #expect(alice.process.terminationStatus == 3, "alice: \(alice.stderr)")
        let ended = try #require(alice.events.map(\.object).first { Line.isState($0, "prepared", reason: "remoteRejected") },
                                 "\(alice.names)")
        #expect(ended["eventReason"] as? String == "busy-now" || (ended["info"] as? [String: String])?["rejectReason"] == "busy-now",
                "\(ended)")
        #expect(bob.waitFor(timeout: 5) { Line.isState($0, "prepared", reason: "localRejected") } != nil, "\(bob.names)")
    }

    @Test("no server to reach: exit 1 at once, saying what could not be reached")
    func noServer() throws {
        let result = try CLI.liveline("call", "--user", "alice", "--to", "bob", "--server", "rtmp://127.0.0.1:9")
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains("rtmp://127.0.0.1:9") && result.stderr.contains("Connection refused"), "\(result.stderr)")
        #expect(UsageMessageTests.typeName(in: result.stderr) == nil, "\(result.stderr)")
        // A relay whose HTTP port has no call signaling (a web page, not a WebSocket).
        let line = try Line()
        let wrong = try CLI.liveline("call", "--user", "alice", "--to", "bob", "--server", "rtmp://127.0.0.1:\(line.server.rtmpPort)",
                                     "--signal", "ws://127.0.0.1:\(line.server.httpPort)/nothing")
        #expect(wrong.status == 1, "\(wrong.stderr)")
        #expect(wrong.stderr.contains("/nothing") && UsageMessageTests.typeName(in: wrong.stderr) == nil, "\(wrong.stderr)")
    }

    @Test("Ctrl-C while the signaling does not answer the registration: out at once with 0")
    func stoppedWhileRegistering() throws {
        // A port that takes connections and never says a word.
        let (silent, port) = try TroubleProxy.listen()
        defer { close(silent) }
        let bob = try KitProcess(["call", "--user", "bob", "--listen", "--signal", "ws://127.0.0.1:\(port)/call"])
        Thread.sleep(forTimeInterval: 1)
        #expect(bob.process.isRunning, "bob: \(bob.stderr)")
        let started = Date()
        #expect(bob.stop() == 0, "bob: \(bob.stderr)")
        #expect(Date().timeIntervalSince(started) < 3)
    }

    @Test("--max-call-seconds: the call hangs up by itself with maxCallTimeExceeded, exit 0")
    func maxCallTime() throws {
        let line = try Line()
        let bob = try line.listen("bob", ["--accept", "auto", "--size", "160x90"])
        defer { bob.stop() }
        let (alice, lines) = try line.call("alice", to: "bob", ["--size", "160x90", "--max-call-seconds", "1"])
        #expect(alice.status == 0, "alice: \(alice.stderr)")
        let summary = try #require(lines.first { $0["event"] as? String == "callSummary" }, "\(alice.stdout)")
        #expect(summary["ended"] as? String == "maxCallTimeExceeded" && summary["connected"] as? Bool == true, "\(summary)")
        #expect(bob.waitFor(timeout: 5) { Line.isState($0, "prepared", reason: "remoteHangup") } != nil, "\(bob.names)")
    }

    @Test("calling a user who is not listening ends at once with remoteOffline, exit status 3")
    func offline() throws {
        let line = try Line()
        let started = Date()
        let (alice, lines) = try line.call("alice", to: "nobody", ["--size", "160x90"])
        #expect(alice.status == 3, "alice: \(alice.stderr)")
        #expect(lines.contains { Line.isState($0, "prepared", reason: "remoteOffline") }, "\(alice.stdout)")
        #expect(Date().timeIntervalSince(started) < 5, "not at once")
        // For people: a line per state on stderr, and the summary.
        let person = try CLI.run(CLI.liveline, ["call", "--user", "alice", "--to", "nobody", "--size", "160x90"] + line.options)
        #expect(person.status == 3 && person.stdout.isEmpty, "\(person.stdout)")
        #expect(person.stderr.contains("call: calling (localVideoCall) with nobody"), "\(person.stderr)")
        #expect(person.stderr.contains("call: prepared (remoteOffline"), "\(person.stderr)")
        #expect(person.stderr.contains("done: 1 call, 0 connected"), "\(person.stderr)")
    }

    @Test("an audio-only call connects on the peer's first sound, with no picture either way")
    func audioOnly() throws {
        let line = try Line()
        let bob = try line.listen("bob", ["--accept", "auto"])
        defer { bob.stop() }
        let (alice, lines) = try line.call("alice", to: "bob", ["--audio-only", "--duration", "1"])
        #expect(alice.status == 0, "alice: \(alice.stderr)")
        #expect(lines.contains { Line.isState($0, "calling", reason: "localAudioCall") }, "\(alice.stdout)")
        #expect(lines.contains { $0["event"] as? String == "remoteFirstAudio" }, "\(alice.stdout)")
        #expect(!lines.contains { $0["event"] as? String == "remoteFirstFrame" }, "\(alice.stdout)")
        let summary = try #require(lines.first { $0["event"] as? String == "callSummary" })
        #expect(summary["connected"] as? Bool == true && summary["frames"] as? Int == 0
                && (summary["audioFrames"] as? Int ?? 0) > 0, "\(summary)")
        #expect(bob.waitFor(timeout: 5) { $0["event"] as? String == "incomingCall" && $0["audioOnly"] as? Bool == true } != nil)
    }

    @Test("a call nobody answers ends after --timeout-ms on both sides: the caller exits 3 with callingTimeout; a listener's --duration ends its run with 0")
    func unanswered() throws {
        let line = try Line()
        let typed = Pipe()  // open, and never written to
        let bob = try line.listen("bob", ["--size", "160x90", "--timeout-ms", "1000", "--duration", "4"], input: typed)
        defer { bob.stop() }
        let started = Date()
        let (alice, lines) = try line.call("alice", to: "bob", ["--size", "160x90", "--timeout-ms", "1000"])
        #expect(alice.status == 3, "alice: \(alice.stderr)")
        #expect(lines.contains { Line.isState($0, "prepared", reason: "callingTimeout") }, "\(alice.stdout)")
        #expect(Date().timeIntervalSince(started) < 6, "the 1 s calling timer did not end it")
        #expect(bob.waitFor(timeout: 5) { Line.isState($0, "prepared") && $0["reason"] as? String != "none" } != nil,
                "\(bob.names)")
        bob.process.waitUntilExit()
        #expect(bob.process.terminationStatus == 0, "bob: \(bob.stderr)")
        #expect(bob.events.last?.object["event"] as? String == "summary", "\(bob.names)")
    }

    @Test("carol calls bob while he talks to alice: carol gets remoteCallBusy (exit 3), alice's call goes on")
    func busy() throws {
        let line = try Line()
        let bob = try line.listen("bob", ["--accept", "auto", "--size", "160x90"])
        defer { bob.stop() }
        let alice = try KitProcess(["call", "--user", "alice", "--to", "bob", "--size", "160x90", "--duration", "4",
                                    "--stats", "json"] + line.options)
        defer { alice.stop() }
        #expect(alice.waitFor(timeout: 10) { Line.isState($0, "connected") } != nil, "alice: \(alice.stderr)")
        let (carol, lines) = try line.call("carol", to: "bob", ["--size", "160x90"])
        #expect(carol.status == 3, "carol: \(carol.stderr)")
        #expect(lines.contains { Line.isState($0, "prepared", reason: "remoteCallBusy") }, "\(carol.stdout)")
        alice.process.waitUntilExit()
        #expect(alice.process.terminationStatus == 0, "alice: \(alice.stderr)")
        let summary = alice.events.map(\.object).first { $0["event"] as? String == "callSummary" }
        #expect(summary?["ended"] as? String == "localHangup", "\(alice.names)")
        #expect((summary?["connectedSeconds"] as? Double ?? 0) >= 4)
    }
}

/// `liveline call` driven from stdin and run as a series: the commands during a call,
/// answering by hand, --calls, a reader that leaves, and tokens.
@Suite("liveline call from stdin, in series, with tokens", .serialized)
struct CallCommandStdinTests {
    typealias Line = CallCommandTests.Line

    @Test("bob accepts by typing accept; alice's typed mute, hold and 'hangup bye' reach bob; both end with the reason")
    func typedCommands() throws {
        let line = try Line()
        let bobTypes = Pipe(), aliceTypes = Pipe()
        let bob = try line.listen("bob", ["--size", "160x90"], input: bobTypes)
        defer { bob.stop() }
        let alice = try KitProcess(["call", "--user", "alice", "--to", "bob", "--size", "160x90", "--stats", "json"]
                                   + line.options, input: aliceTypes)
        defer { alice.stop() }
        #expect(bob.waitFor(timeout: 10) { $0["event"] as? String == "incomingCall" } != nil, "bob: \(bob.stderr)")
        bobTypes.fileHandleForWriting.write(Data("accept\n".utf8))
        #expect(alice.waitFor(timeout: 10) { Line.isState($0, "connected") } != nil, "alice: \(alice.stderr)")
        #expect(bob.waitFor(timeout: 10) { Line.isState($0, "connected", reason: "recvRemoteFirstFrame") } != nil)
        // Connected: the stats come once a second.
        #expect(alice.waitFor(timeout: 3) { $0["event"] as? String == "stats" && $0["fps"] is Double } != nil)
        for (typed, seen) in [("mute", "peerMicMuted"), ("unmute", "peerMicUnmuted"), ("hold", "peerHeld"), ("unhold", "peerUnheld")] {
            aliceTypes.fileHandleForWriting.write(Data((typed + "\n").utf8))
            #expect(bob.waitFor(timeout: 5) { $0["event"] as? String == seen } != nil, "bob never saw \(seen): \(bob.names)")
        }
        aliceTypes.fileHandleForWriting.write(Data("hangup bye\n".utf8))
        alice.process.waitUntilExit()
        #expect(alice.process.terminationStatus == 0, "alice: \(alice.stderr)")
        #expect(alice.events.contains { Line.isState($0.object, "prepared", reason: "localHangup") }, "\(alice.names)")
        let ended = bob.waitFor(timeout: 5) {
            Line.isState($0, "prepared", reason: "remoteHangup")
                && ($0["eventReason"] as? String == "bye" || ($0["info"] as? [String: String])?["hangupReason"] == "bye")
        }
        #expect(ended != nil, "\(bob.events.map(\.object).filter { $0["event"] as? String == "state" })")
    }

    @Test("a listener answering by hand whose stdin is closed rejects with 'no answer'; the caller exits 3")
    func noOneToAnswer() throws {
        let line = try Line()
        let bob = try line.listen("bob", ["--size", "160x90"], input: FileHandle.nullDevice)
        defer { bob.stop() }
        let (alice, lines) = try line.call("alice", to: "bob", ["--size", "160x90"])
        #expect(alice.status == 3, "alice: \(alice.stderr)")
        #expect(lines.contains { Line.isState($0, "prepared", reason: "remoteRejected") }, "\(alice.stdout)")
    }

    @Test("--calls 3: three calls one after another, a summary each and p50/p95 of the setup at the end; Ctrl-C ends the listener with 0")
    func series() throws {
        let line = try Line()
        let bob = try line.listen("bob", ["--accept", "auto", "--size", "160x90"])
        let (alice, lines) = try line.call("alice", to: "bob", ["--size", "160x90", "--calls", "3", "--duration", "0.5"])
        #expect(alice.status == 0, "alice: \(alice.stderr)")
        let calls = lines.filter { $0["event"] as? String == "callSummary" }
        #expect(calls.map { $0["call"] as? Int } == [1, 2, 3], "\(alice.stdout)")
        #expect(calls.allSatisfy { $0["ended"] as? String == "localHangup" && $0["setupMs"] is Double }, "\(calls)")
        #expect(Set(calls.compactMap { $0["callId"] as? String }).count == 3, "every call has its own id")
        let summary = try #require(lines.last)
        #expect(summary["event"] as? String == "summary" && summary["calls"] as? Int == 3
                && summary["connectedCalls"] as? Int == 3, "\(summary)")
        let (p50, p95) = (try #require(summary["setupMsP50"] as? Double), try #require(summary["setupMsP95"] as? Double))
        #expect(p50 > 0 && p50 <= p95, "\(summary)")
        #expect(bob.waitFor(timeout: 5) { $0["event"] as? String == "callSummary" && $0["call"] as? Int == 3 } != nil)
        // The callee's figures of each call, though the next call comes at once.
        let bobCalls = bob.events.map(\.object).filter { $0["event"] as? String == "callSummary" }
        #expect(bobCalls.count == 3 && bobCalls.allSatisfy { $0["acceptToFirstFrameMs"] is Double }, "\(bobCalls)")
        #expect(bob.stop() == 0, "bob: \(bob.stderr)")
    }

    @Test("call --y4m - | a reader that stops after 30 frames, and --stats json | head -3: the call is hung up, exit 0, the summary on stderr")
    func readerGoesAway() throws {
        let line = try Line()
        let bob = try line.listen("bob", ["--accept", "auto", "--size", "160x90"])
        defer { bob.stop() }
        let caller = ["call", "--user", "alice", "--to", "bob", "--size", "160x90", "--stats", "json"] + line.options
        for (extra, reader) in [(["--y4m", "-"], " | ffmpeg -v error -i - -frames:v 30 -f null -"), ([], " | head -3")] {
            let started = Date()
            let run = try BrokenPipeTests.bash(BrokenPipeTests.quoted(caller + extra) + reader)
            #expect(run.status == 0, "stdout: \(run.stdout) stderr: \(run.stderr)")
            #expect(Date().timeIntervalSince(started) < 10, "the call went on after its reader left")
            let summary = try #require(BrokenPipeTests.summary(in: run.stderr), "no summary on stderr: \(run.stderr)")
            // head leaves while the call is still being set up (cancelled) or just after.
            let ended = extra.isEmpty ? ["localCancelled", "localHangup"] : ["localHangup"]
            #expect(ended.contains(summary["ended"] as? String ?? ""), "\(summary)")
        }
    }

    @Test("with tokens: bob listens with --token-command, alice calls with --token, a token for another user is refused with 3")
    func tokens() throws {
        let secrets = try TokenKitTests.Secrets()
        defer { try? FileManager.default.removeItem(at: secrets.directory) }
        func token(_ user: String) throws -> String {
            let result = try CLI.run(CLI.liveline, ["token", "--secret-file", secrets.secretFile, "--sub", user, "--call", user,
                                                    "--publish", "call/*", "--play", "call/*"])
            #expect(result.status == 0, "\(result.stderr)")
            return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let line = try Line(serve: ["--auth-secret-file", secrets.secretFile])
        let command = "'\(CLI.liveline)' token --secret-file '\(secrets.secretFile)' --sub bob --call bob --publish 'call/*' --play 'call/*'"
        let bob = try line.listen("bob", ["--accept", "auto", "--size", "160x90", "--token-command", command])
        defer { bob.stop() }
        let (alice, lines) = try line.call("alice", to: "bob", ["--size", "160x90", "--duration", "1", "--token", try token("alice")])
        #expect(alice.status == 0, "alice: \(alice.stderr)")
        #expect(lines.contains { Line.isState($0, "connected") }, "\(alice.stdout)")
        let (carol, _) = try line.call("carol", to: "bob", ["--size", "160x90", "--token", try token("alice")])
        #expect(carol.status == 3, "carol: \(carol.stderr)")
        #expect(carol.stderr.contains("carol"), "\(carol.stderr)")
    }

    @Test("a listener whose server restarts registers again and takes the next call")
    func listenerRegistersAgain() throws {
        let line = try Line()
        let bob = try line.listen("bob", ["--accept", "auto", "--size", "160x90"])
        defer { bob.stop() }
        let restarted = try line.server.killAndRestart(after: 0.5, http: line.server.httpPort)
        defer { restarted.stop() }
        #expect(bob.waitFor(timeout: 10) { $0["event"] as? String == "registering" && $0["try"] as? Int == 1 } != nil,
                "bob: \(bob.stderr) \(bob.names)")
        let again = bob.waitFor(timeout: 10) { _ in
            bob.events.filter { Line.isState($0.object, "prepared", reason: "none") }.count >= 2
        }
        #expect(again != nil, "bob did not register again: \(bob.names)")
        let (alice, lines) = try line.call("alice", to: "bob", ["--size", "160x90", "--duration", "0.5"])
        #expect(alice.status == 0, "alice: \(alice.stderr)")
        #expect(lines.contains { Line.isState($0, "connected") }, "\(alice.stdout)")
        #expect(bob.process.isRunning)
    }

    @Test("a second listener under a user id already registered is refused: exit 3")
    func userIdTaken() throws {
        let line = try Line()
        let bob = try line.listen("bob", ["--accept", "auto"])
        defer { bob.stop() }
        let second = try CLI.run(CLI.liveline, ["call", "--user", "bob", "--listen", "--duration", "5"] + line.options)
        #expect(second.status == 3, "\(second.stderr)")
        #expect(second.stderr.contains("604") || second.stderr.contains("registered"), "\(second.stderr)")
    }
}
