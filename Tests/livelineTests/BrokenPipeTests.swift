import Foundation
import Testing

/// A reader of stdout that goes away (`| head -2`, Ctrl-C in a pipeline) ends a run
/// cleanly: exit 0, the summary on stderr, never a crash or a death by SIGPIPE.
@Suite("liveline with a reader that goes away", .serialized)
struct BrokenPipeTests {
    /// Runs `script` in bash; its stdout's last line is `status=N`, N the first
    /// command's exit status in the pipeline (`${PIPESTATUS[0]}`).
    static func bash(_ script: String) throws -> (status: Int?, stdout: String, stderr: String) {
        let result = try CLI.run("/bin/bash", ["-c", script + "; echo \"status=${PIPESTATUS[0]}\""])
        let last = result.stdout.split(separator: "\n").last { $0.hasPrefix("status=") }
        return (last.flatMap { Int($0.dropFirst("status=".count)) }, result.stdout, result.stderr)
    }

    static func quoted(_ arguments: [String]) -> String {
        ([CLI.liveline] + arguments).map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
    }

    static func summary(in text: String) -> [String: Any]? {
        text.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
            .last { $0["event"] as? String == "summary" }
    }

    @Test("host --stats json | head -2: the run stops at the next line, exit 0, the summary on stderr")
    func hostIntoHead() throws {
        let started = Date()
        let run = try Self.bash(Self.quoted(["host", "--size", "160x120", "--fps", "10", "--stats", "json", "--duration", "20"])
                                + " | head -2")
        // Before: killed by SIGPIPE at the third line (141).
        #expect(run.status == 0, "stdout: \(run.stdout) stderr: \(run.stderr)")
        #expect(Date().timeIntervalSince(started) < 10, "the run went on after its reader left")
        #expect(run.stdout.split(separator: "\n").filter { $0.hasPrefix("{") }.count == 2)
        let summary = try #require(Self.summary(in: run.stderr), "no summary on stderr: \(run.stderr)")
        #expect((summary["frames"] as? Int ?? 0) > 0)
        #expect(!run.stderr.contains("Fatal error"))
    }

    @Test("guest --stats json | head -1: exit 0, ended \"output closed\", the summary on stderr")
    func guestIntoHead() throws {
        let server = try Server()
        defer { server.background.stop() }
        let started = Date()
        let run = try Self.bash(Self.quoted(["guest", server.url("nobody"), "--stats", "json", "--timeout", "20"]) + " | head -1")
        // Before: "Fatal error … Broken pipe" and SIGILL (132) at the second line.
        #expect(run.status == 0, "stdout: \(run.stdout) stderr: \(run.stderr)")
        #expect(!run.stderr.contains("Fatal error"), "\(run.stderr)")
        #expect(Date().timeIntervalSince(started) < 10, "the run went on after its reader left")
        let summary = try #require(Self.summary(in: run.stderr), "no summary on stderr: \(run.stderr)")
        #expect(summary["ended"] as? String == "output closed", "\(summary)")
    }

    @Test("Ctrl-C with the reader gone (| tr …): exit 0 and the summary on stderr", arguments: ["host", "guest"])
    func interruptInPipeline(command: String) throws {
        let server = try Server()
        defer { server.background.stop() }
        let arguments = command == "host"
            ? ["host", "--size", "160x120", "--fps", "10", "--stats", "json", "--duration", "20"]
            : ["guest", server.url("nobody"), "--stats", "json", "--timeout", "20"]
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CLI.liveline)
        process.arguments = arguments
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        // The first line arrives, then the reader dies with the rest of the pipeline.
        let first = output.fileHandleForReading.availableData
        #expect(!first.isEmpty)
        try output.fileHandleForReading.close()
        kill(process.processIdentifier, SIGINT)
        let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        // Before: the guest crashed (SIGILL) and the hoster died of SIGPIPE.
        #expect(process.terminationReason == .exit, "stderr: \(stderr)")
        #expect(process.terminationStatus == 0, "stderr: \(stderr)")
        #expect(Self.summary(in: stderr) != nil, "no summary on stderr: \(stderr)")
    }

    @Test("host 2>&1 | head -1: status lines that nobody reads are dropped, the run goes on to its end, exit 0")
    func stderrIntoHead() throws {
        let started = Date()
        let run = try Self.bash(Self.quoted(["host", "--size", "160x120", "--fps", "10", "--duration", "3"]) + " 2>&1 | head -1")
        // Before: killed by SIGPIPE (141) at the second status line.
        #expect(run.status == 0, "stdout: \(run.stdout) stderr: \(run.stderr)")
        #expect(Date().timeIntervalSince(started) >= 2.5)
    }

    @Test("a --token-command starts with SIGPIPE at its default, not ignored")
    func tokenCommandSignals() throws {
        // Bit 12 of SigIgn is SIGPIPE (13).
        let check = "[ $(( 0x$(awk '/^SigIgn/ { print $2 }' /proc/self/status) >> 12 & 1 )) = 0 ] && echo token "
            + "|| { echo 'SIGPIPE is ignored' >&2; exit 1; }"
        let result = try CLI.liveline("host", "rtmp://127.0.0.1:1/live/x", "--size", "160x120", "--duration", "0.2",
                                      "--token-command", check)
        #expect(!result.stderr.contains("SIGPIPE is ignored"), "stderr: \(result.stderr)")
        #expect(result.stderr.contains("cannot connect"), "stderr: \(result.stderr)")
    }

    @Test("commands that print once end with 0 when nobody reads", arguments: [
        ["layout", "--json"], ["layout"], ["devices"], ["--help"], ["host", "--help"], ["token", "--secret-file", "SECRET", "--sub", "a", "--play", "live/x"],
    ])
    func printOnce(arguments: [String]) throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let secret = directory.appendingPathComponent("secret").path
        #expect(try CLI.liveline("token", "--new-secret", secret).status == 0)
        let command = Self.quoted(arguments.map { $0 == "SECRET" ? secret : $0 })
        // The reader closes its end at once; the command writes half a second later.
        let run = try Self.bash("{ sleep 0.5; \(command); } | (exec 0<&-; sleep 2)")
        // Before: killed by SIGPIPE (141).
        #expect(run.status == 0, "stderr: \(run.stderr)")
        #expect(!run.stderr.contains("Fatal error"))
    }
}
