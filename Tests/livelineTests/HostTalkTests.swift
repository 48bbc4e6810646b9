import Foundation
import Testing

/// What `liveline host` and a `--no-play` co-host tell the person running them.
@Suite("liveline host and co-host: what they say", .serialized)
struct HostTalkTests {
    @Test("host says where it pushes, token hidden, and that it connected")
    func saysWhereItPushes() throws {
        let server = try Server()
        defer { server.background.stop() }
        let result = try CLI.liveline("host", server.url("talk") + "?token=s3cr3t", "--source", "color:white",
                                      "--size", "160x90", "--duration", "2")
        #expect(result.status == 0, "\(result.stderr)")
        let url = server.url("talk") + "?token=…"
        #expect(result.stderr.contains("pushing to \(url)"), "\(result.stderr)")
        #expect(result.stderr.contains("connected: publishing to \(url)"), "\(result.stderr)")
        #expect(!result.stderr.contains("s3cr3t"))
    }

    @Test("--accept manual with stdin at its end: the hoster says so and applicants are rejected (601) at once, not after 30 s")
    func manualWithoutStdin() throws {
        let server = try Server()
        defer { server.background.stop() }
        let url = server.url("nostdin")
        let signal = "ws://127.0.0.1:\(server.httpPort)/line"
        let hoster = try KitProcess(["host", url, "--source", "color:white", "--size", "160x90", "--line", "nostdin",
                                     "--signal", signal, "--stats", "json", "--duration", "40"], input: FileHandle.nullDevice)
        defer { hoster.stop() }
        #expect(hoster.waitFor(timeout: 10) { $0["event"] as? String == "lineResult" && $0["code"] as? Int == 0 } != nil)
        #expect(hoster.waitForError("stdin is closed", timeout: 5), "\(hoster.stderr)")
        let started = Date()
        let guest = try CLI.liveline("guest", url, "--apply", "--no-play", "--signal", signal, "--stats", "json",
                                     "--duration", "25")
        // Before: the application waited for the server's 30 s timeout (605), or the guest's duration.
        #expect(Date().timeIntervalSince(started) < 10)
        #expect(guest.status == 3, "\(guest.stderr)")
        #expect(guest.stdout.contains("\"event\":\"applicationResult\",\"code\":601"), "\(guest.stdout)")
    }

    @Test("template, barrage and close typed on stdin: confirmed, a guest gets the barrage message and, at close, lineLeave then lineClosed 0 and exits 0; the push goes on after close")
    func typedCommandsConfirmed() throws {
        let server = try Server()
        defer { server.background.stop() }
        let url = server.url("typed")
        let input = Pipe()
        let hoster = try KitProcess(["host", url, "--source", "color:white", "--size", "320x180", "--line", "typed",
                                     "--signal", "ws://127.0.0.1:\(server.httpPort)/line", "--stats", "json",
                                     "--duration", "30"], input: input)
        defer { hoster.stop() }
        #expect(hoster.waitFor(timeout: 10) { $0["event"] as? String == "lineResult" && $0["code"] as? Int == 0 } != nil)
        input.fileHandleForWriting.write(Data("template equal\n".utf8))
        #expect(hoster.waitForError("template: the mix now uses equal", timeout: 5), "\(hoster.stderr)")
        let guest = try KitProcess(["guest", url, "--line", "typed", "--no-play", "--signal", "ws://127.0.0.1:\(server.httpPort)/line",
                                    "--user-id", "reader", "--stats", "json", "--duration", "20"])
        defer { _ = guest.stop() }
        #expect(guest.waitFor(timeout: 10) { $0["event"] as? String == "lineResult" && $0["code"] as? Int == 0 } != nil, "\(guest.names)")
        input.fileHandleForWriting.write(Data("barrage hello all\n".utf8))
        #expect(guest.waitFor(timeout: 5) {
            $0["event"] as? String == "message" && $0["type"] as? String == "barrage" && $0["content"] as? String == "hello all"
        } != nil, "\(guest.names)")
        input.fileHandleForWriting.write(Data("close\n".utf8))
        #expect(hoster.waitForError("closed the co-host line", timeout: 5), "\(hoster.stderr)")
        #expect(guest.waitFor(timeout: 5) { $0["event"] as? String == "lineClosed" && $0["code"] as? Int == 0 } != nil, "\(guest.names)")
        #expect(guest.names.firstIndex(of: "lineLeave").map { $0 < guest.names.firstIndex(of: "lineClosed")! } == true, "\(guest.names)")
        // The line's end ends the guest's --no-play run, with 0.
        let deadline = Date().addingTimeInterval(5)
        while guest.process.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        #expect(!guest.process.isRunning && guest.process.terminationStatus == 0)
        let frames = { (hoster.events.last { $0.object["event"] as? String == "stats" }?.object["frames"] as? Int) ?? 0 }
        let before = frames()
        Thread.sleep(forTimeInterval: 2)
        #expect(hoster.process.isRunning)
        #expect(frames() > before)
    }

    @Test("accept, say, reject and hangup typed on stdin reach the applicants; close prints lineClosed 0")
    func answersTypedOnStdin() throws {
        let server = try Server()
        defer { server.background.stop() }
        let url = server.url("answers")
        let signal = "ws://127.0.0.1:\(server.httpPort)/line"
        let input = Pipe()
        let hoster = try KitProcess(["host", url, "--source", "color:white", "--size", "320x180", "--line", "answers",
                                     "--accept", "manual", "--signal", signal, "--stats", "json", "--duration", "30"], input: input)
        defer { hoster.stop() }
        #expect(hoster.waitFor(timeout: 10) { $0["event"] as? String == "lineResult" && $0["code"] as? Int == 0 } != nil)
        func type(_ line: String) { input.fileHandleForWriting.write(Data((line + "\n").utf8)) }
        func applicant(_ user: String) throws -> (KitProcess, String) {
            let guest = try KitProcess(["guest", url, "--apply", "--no-play", "--source", "color:red", "--size", "160x90",
                                        "--signal", signal, "--user-id", user, "--stats", "json", "--duration", "20"])
            let applied = { (event: [String: Any]) in event["event"] as? String == "application" && event["userId"] as? String == user }
            _ = hoster.waitFor(timeout: 10, applied)
            let peer = try #require(hoster.events.first { applied($0.object) }?.object["peerId"] as? String, "\(hoster.names)")
            return (guest, peer)
        }
        let (ann, annPeer) = try applicant("ann")
        defer { ann.stop() }
        type("accept \(annPeer)")
        #expect(ann.waitFor(timeout: 5) { $0["event"] as? String == "applicationResult" && $0["code"] as? Int == 0 } != nil, "\(ann.names)")
        #expect(ann.waitFor(timeout: 10) { $0["event"] as? String == "cohostPush.ok" } != nil, "\(ann.names)")
        type("say hello ann")
        #expect(ann.waitFor(timeout: 5) {
            $0["event"] as? String == "message" && $0["type"] as? String == "normal" && $0["content"] as? String == "hello ann"
        } != nil, "\(ann.names)")
        let (bob, bobPeer) = try applicant("bob")
        defer { bob.stop() }
        type("reject \(bobPeer)")
        #expect(bob.waitFor(timeout: 5) { $0["event"] as? String == "applicationResult" && $0["code"] as? Int == 601 } != nil, "\(bob.names)")
        type("hangup \(annPeer)")
        #expect(ann.waitFor(timeout: 5) { $0["event"] as? String == "hungUp" } != nil, "\(ann.names)")
        #expect(hoster.waitFor(timeout: 5) { $0["event"] as? String == "cohostClosed" && $0["peerId"] as? String == annPeer } != nil)
        type("close")
        #expect(hoster.waitFor(timeout: 5) { $0["event"] as? String == "lineClosed" && $0["code"] as? Int == 0 } != nil, "\(hoster.names)")
        #expect(hoster.names.last { $0.hasPrefix("line") || $0.hasPrefix("cohost") } == "lineClosed", "\(hoster.names)")
    }

    @Test("--sub-background FILE: a co-host tile before the co-host's first frame shows the image's colour to a viewer, then the co-host's picture")
    func subBackgroundBeforeTheFirstFrame() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("liveline-fill-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let fill = dir.appendingPathComponent("green.png").path
        let made = try CLI.run("/usr/bin/ffmpeg", ["-nostdin", "-v", "error", "-f", "lavfi", "-i", "color=c=0x00ff00:s=64x36",
                                                   "-frames:v", "1", fill])
        try #require(made.status == 0, "\(made.stderr)")
        let server = try Server()
        defer { server.background.stop() }
        let url = server.url("fill")
        let signal = "ws://127.0.0.1:\(server.httpPort)/line"
        let input = Pipe()
        let hoster = try KitProcess(["host", url, "--source", "color:white", "--size", "640x360", "--mix", "equal", "--line", "fill",
                                     "--accept", "manual", "--sub-background", fill, "--signal", signal, "--stats", "json",
                                     "--duration", "30"], input: input)
        defer { hoster.stop() }
        #expect(hoster.waitFor(timeout: 10) { $0["event"] as? String == "lineResult" && $0["code"] as? Int == 0 } != nil)
        let viewerProcess = Process()
        viewerProcess.executableURL = URL(fileURLWithPath: CLI.liveline)
        viewerProcess.arguments = ["guest", url, "--y4m", "-"]
        let pipe = Pipe()
        viewerProcess.standardOutput = pipe
        viewerProcess.standardError = FileHandle.nullDevice
        try viewerProcess.run()
        defer {
            viewerProcess.terminate()
            viewerProcess.waitUntilExit()
        }
        let viewer = Y4MReader(handle: pipe.fileHandleForReading, points: try CohostLineTests.centres(cohosts: 1))
        #expect(viewer.waitFor(timeout: 10) { _ in true } != nil)

        // The co-host is held still (SIGSTOP) before it is accepted: its stream cannot start.
        let cohost = try KitProcess(["guest", url, "--apply", "--no-play", "--source", "color:red", "--size", "160x90",
                                     "--signal", signal, "--user-id", "co", "--stats", "json", "--duration", "20"])
        defer {
            kill(cohost.process.processIdentifier, SIGCONT)
            cohost.stop()
        }
        let applied = { (event: [String: Any]) in event["event"] as? String == "application" }
        _ = hoster.waitFor(timeout: 10, applied)
        let peer = try #require(hoster.events.first { applied($0.object) }?.object["peerId"] as? String, "\(hoster.names)")
        kill(cohost.process.processIdentifier, SIGSTOP)
        input.fileHandleForWriting.write(Data("accept \(peer)\n".utf8))
        let opened = try #require(hoster.waitFor(timeout: 5) { $0["event"] as? String == "cohostOpened" })
        let tile = { (frame: Y4MReader.Frame) in CohostLineTests.name(frame.colours[1]) }
        #expect(viewer.waitFor(after: opened, timeout: 5) { tile($0) == "green" } != nil, "\(viewer.all.suffix(3).map(tile))")
        kill(cohost.process.processIdentifier, SIGCONT)
        #expect(viewer.waitFor(after: opened, timeout: 10) { tile($0) == "red" } != nil, "\(viewer.all.suffix(3).map(tile))")
    }

    @Test("a --no-play co-host reports its own push once a second and ends with a summary")
    func cohostReportsItsPush() throws {
        let server = try Server()
        defer { server.background.stop() }
        let url = server.url("solo")
        let signal = "ws://127.0.0.1:\(server.httpPort)/line"
        let hoster = try KitProcess(["host", url, "--source", "color:white", "--size", "320x180", "--line", "solo",
                                     "--accept", "auto", "--signal", signal, "--stats", "json", "--duration", "30"])
        defer { hoster.stop() }
        #expect(hoster.waitFor(timeout: 10) { $0["event"] as? String == "lineResult" && $0["code"] as? Int == 0 } != nil)
        let guest = try CLI.liveline("guest", url, "--apply", "--no-play", "--signal", signal, "--source", "color:red",
                                     "--size", "160x90", "--fps", "15", "--stats", "json", "--duration", "5")
        #expect(guest.status == 0, "\(guest.stderr)")
        let lines = guest.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        let stats = lines.filter { $0["event"] as? String == "stats" }
        #expect(stats.count >= 2, "\(guest.stdout)")
        #expect(stats.last?["frames"] as? Int ?? 0 > 0)
        let summary = try #require(lines.first { $0["event"] as? String == "summary" }, "\(guest.stdout)")
        #expect(summary["frames"] as? Int ?? 0 >= 15, "\(summary)")
        #expect(summary["width"] as? Int == 160 && summary["height"] as? Int == 90)
        // Hanging up at the end stops the push on purpose: the server ending its stream then is no loss.
        let names = lines.compactMap { $0["event"] as? String }
        #expect(!names.contains("cohostPush.reconnecting") && !names.contains("cohostPush.failed"), "\(names)")

        // For people: the status line and the summary on stderr.
        let human = try CLI.liveline("guest", url, "--apply", "--no-play", "--signal", signal, "--source", "color:red",
                                     "--size", "160x90", "--duration", "4", "--user-id", "human")
        #expect(human.status == 0, "\(human.stderr)")
        #expect(human.stderr.contains("done: "), "\(human.stderr)")
        #expect(human.stderr.contains(" fps"), "\(human.stderr)")
    }
}
