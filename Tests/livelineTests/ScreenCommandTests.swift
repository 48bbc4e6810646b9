import Foundation
import LiveTestSupport
import Testing

@Suite("liveline host with a screen (Xvfb): --source screen: and the share commands", .serialized,
       .enabled(if: VirtualDisplay.isAvailable, "Xvfb and xsetroot are not installed (scripts/setup)"))
struct ScreenCommandTests {
    /// `liveline guest URL --y4m -`: the colours of the top-left corner of the picture
    /// (the shared area while sharing) and of the middle of the camera's tile.
    final class Viewer {
        let process = Process()
        let reader: Y4MReader

        init(_ url: String) throws {
            process.executableURL = URL(fileURLWithPath: CLI.liveline)
            process.arguments = ["guest", url, "--y4m", "-"]
            let pipe = Pipe()
            process.standardOutput = pipe
            process.standardError = FileHandle.nullDevice
            try process.run()
            reader = Y4MReader(handle: pipe.fileHandleForReading, points: [(48, 36)])
        }

        /// Waits for a frame whose corner is near `want` (each of r, g, b within 40); the
        /// last colour seen when none is.
        func waitFor(_ want: (r: Int, g: Int, b: Int), timeout: TimeInterval = 8) -> (r: Int, g: Int, b: Int)? {
            let close = { (c: (r: Int, g: Int, b: Int)) in abs(c.r - want.r) < 40 && abs(c.g - want.g) < 40 && abs(c.b - want.b) < 40 }
            if let hit = reader.waitFor(timeout: timeout, { close($0.colours[0]) }) { return hit.colours[0] }
            return reader.all.last?.colours[0]
        }

        func stop() {
            process.terminate()
            process.waitUntilExit()
        }
    }

    /// `liveline host URL` with `arguments` and JSON lines, once it publishes.
    static func host(_ url: String, _ arguments: [String], input: Pipe? = nil) throws -> KitProcess {
        let host = try KitProcess(["host", url, "--size", "320x180", "--fps", "10", "--keyint", "0.5", "--duration", "20",
                                   "--stats", "json"] + arguments, input: input)
        #expect(host.waitFor(timeout: 10) { $0["event"] as? String == "ok" } != nil, "stderr: \(host.stderr)")
        return host
    }

    @Test("host --source screen::N pushes the screen: a player sees its colour, and a new one once it is repainted")
    func hostsTheScreen() throws {
        let display = try VirtualDisplay(width: 320, height: 180)
        defer { display.stop() }
        try display.paint("#ff0000")
        let server = try Server()
        defer { server.background.stop() }
        let url = "rtmp://127.0.0.1:\(server.rtmpPort)/live/screen"
        let host = try Self.host(url, ["--source", "screen:\(display.name)"])
        defer { host.stop() }
        let viewer = try Viewer(url)
        defer { viewer.stop() }
        let red = try #require(viewer.waitFor((255, 0, 0)))
        #expect(red.r > 200 && red.g < 50 && red.b < 50, "played \(red)")
        try display.paint("#0000ff")
        let blue = try #require(viewer.waitFor((0, 0, 255)))
        #expect(blue.b > 200 && blue.r < 50 && blue.g < 50, "played \(blue)")
    }

    @Test("stdin share screen::N INFO / unshare: shareEnable and shareClose lines, a guest on the line hears shareOpen / shareClose, and the player sees the screen, then the camera again")
    func sharesFromStdin() throws {
        let display = try VirtualDisplay(width: 320, height: 180)
        defer { display.stop() }
        try display.paint("#ff0000")
        let server = try Server()
        defer { server.background.stop() }
        let url = "rtmp://127.0.0.1:\(server.rtmpPort)/live/desk"
        let input = Pipe()
        let signal = "ws://127.0.0.1:\(server.httpPort)/line"
        let host = try Self.host(url, ["--source", "color:#00ff00", "--line", "desk", "--signal", signal], input: input)
        defer { host.stop() }
        let viewer = try Viewer(url)
        defer { viewer.stop() }
        // A guest on the line hears the room's share events.
        let guest = try KitProcess(["guest", url, "--line", "desk", "--no-play", "--signal", signal, "--stats", "json", "--duration", "20"])
        defer { guest.stop() }
        #expect(guest.waitFor(timeout: 10) { $0["event"] as? String == "lineResult" && $0["code"] as? Int == 0 } != nil,
                "stderr: \(guest.stderr)")
        let green = try #require(viewer.waitFor((0, 255, 0)))
        #expect(green.g > 200 && green.r < 50, "before sharing: \(green)")

        input.fileHandleForWriting.write(Data("share screen:\(display.name) my slides\n".utf8))
        #expect(host.waitFor(timeout: 5) { $0["event"] as? String == "shareEnable" && $0["enable"] as? Bool == true } != nil,
                "stderr: \(host.stderr)")
        #expect(guest.waitFor(timeout: 5) { $0["event"] as? String == "shareOpen" && $0["shareInfo"] as? String == "my slides"
            && $0["type"] as? Int == 0 && $0["userId"] as? String == "hoster" } != nil, "guest: \(guest.names)")
        let red = try #require(viewer.waitFor((255, 0, 0)))
        #expect(red.r > 200 && red.g < 50, "while sharing: \(red)")

        input.fileHandleForWriting.write(Data("unshare\n".utf8))
        #expect(host.waitFor(timeout: 5) { $0["event"] as? String == "shareClose" && $0["reason"] as? String == "stopped" } != nil)
        #expect(guest.waitFor(timeout: 5) { $0["event"] as? String == "shareClose" && $0["userId"] as? String == "hoster" } != nil)
        let shareEnd = Date()
        let back = try #require(viewer.reader.waitFor(after: shareEnd, timeout: 8) { $0.colours[0].g > 200 }?.colours[0])
        #expect(back.g > 200 && back.r < 50, "after unshare: \(back)")

        // A share that cannot start says why and the run goes on.
        input.fileHandleForWriting.write(Data("share screen:nope\n".utf8))
        #expect(host.waitForError("share: invalid source 'screen:nope'", timeout: 5), "stderr: \(host.stderr)")
        #expect(host.process.isRunning)
    }

    @Test("a bad screen spec is a usage error (2); a display without an X server fails at start (1) naming it")
    func clearErrors() throws {
        let bad = try CLI.liveline("host", "--source", "screen::99+1", "--duration", "0.5")
        #expect(bad.status == 2)
        #expect(bad.stderr.contains("X,Y"), "stderr: \(bad.stderr)")

        let unused = try #require(VirtualDisplay.unusedNumber())
        let none = try CLI.liveline("host", "--source", "screen::\(unused)", "--size", "320x180", "--duration", "0.5")
        #expect(none.status == 1)
        #expect(none.stderr.contains("the screen of display :\(unused)") && none.stderr.contains("is an X server running"),
                "stderr: \(none.stderr)")
    }
}
