import Foundation
import LiveAuth

/// `--token T` / `--token-command CMD` of `liveline host` and `liveline guest`: where the
/// kits get the access token for each connect and reconnect (and the line session for
/// its renewals).
enum TokenOption {
    static let help = """
        Access (a relay started with --auth-secret-file):
          --token TOKEN        the access token, put on the RTMP URL as ?token= (it cannot
                               be renewed: make it last the whole run)
          --token-command CMD  run CMD with /bin/sh whenever a token is needed (connect,
                               reconnect, renewal); its trimmed standard output is the token
        """

    /// The provider the options ask for; nil when neither is given.
    static func parse(_ arguments: inout Arguments) throws -> TokenProvider? {
        let token = try arguments.value("--token")
        let command = try arguments.value("--token-command")
        switch (token, command) {
        case (nil, nil):
            return nil
        case (let token?, nil):
            guard !token.isEmpty else { throw UsageError("--token needs a non-empty token") }
            return IssuedToken.fixedProvider(token)
        case (nil, let command?):
            guard !command.trimmingCharacters(in: .whitespaces).isEmpty else {
                throw UsageError("--token-command needs a command")
            }
            let runner = ShellTokenSource(command: command)
            return { try runner.issue() }
        case (_?, _?):
            throw UsageError("give --token or --token-command, not both")
        }
    }
}

/// A shell command that prints an access token (the app's own token service, say
/// `curl -s https://app.example/token`): run through /bin/sh for every token needed.
struct ShellTokenSource: Sendable {
    /// Why the command gave no token.
    enum Error: Swift.Error, CustomStringConvertible {
        case cannotRun(command: String, reason: String)
        case failed(command: String, status: Int32)
        case timedOut(command: String, seconds: Int)
        case noOutput(command: String)
        case tooLong(command: String, limit: Int)

        var description: String {
            switch self {
            case let .cannotRun(command, reason): "token command '\(command)' could not run: \(reason)"
            case let .failed(command, status): "token command '\(command)' exited with status \(status)"
            case let .timedOut(command, seconds): "token command '\(command)' did not finish within \(seconds) s"
            case let .noOutput(command): "token command '\(command)' printed no token"
            case let .tooLong(command, limit): "token command '\(command)' printed more than \(limit) bytes"
            }
        }
    }

    let command: String
    /// A command that hangs is killed after this.
    var timeoutSeconds = 30
    /// More output than a token can be is refused.
    static let outputLimit = 16384

    /// Runs the command once and reads its token (uid and expiry from the token's claims).
    func issue() throws -> IssuedToken {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command]
        let out = Pipe()
        process.standardOutput = out
        // The command's own messages reach the user directly, above the error that follows.
        process.standardError = FileHandle.standardError
        process.standardInput = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            throw Error.cannotRun(command: command, reason: "\(error)")
        }
        let killer = DispatchWorkItem { if process.isRunning { process.terminate() } }
        DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(timeoutSeconds), execute: killer)
        let output = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        killer.cancel()
        if process.terminationReason == .uncaughtSignal, process.terminationStatus == SIGTERM {
            throw Error.timedOut(command: command, seconds: timeoutSeconds)
        }
        guard process.terminationStatus == 0 else {
            throw Error.failed(command: command, status: process.terminationStatus)
        }
        guard output.count <= Self.outputLimit else { throw Error.tooLong(command: command, limit: Self.outputLimit) }
        let token = String(decoding: output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard !token.isEmpty else { throw Error.noOutput(command: command) }
        return IssuedToken(peeking: token)
    }
}
