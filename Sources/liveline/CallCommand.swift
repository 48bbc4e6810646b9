import Foundation
import LiveCore
import LiveLine
import LiveRTMP
import LiveSignal

/// `liveline call`: a 1v1 private call through a `liveline serve`, as the callee
/// (`--listen`) or the caller (`--to PEER`).
enum CallCommand: Command {
    static let name = "call"
    static let help = """
        Usage: liveline call --user ID --listen [--accept auto|manual] [options]
               liveline call --user ID --to PEER [--audio-only] [options]

        A 1v1 private call through a liveline serve. Both users register with the
        server's call signaling (ws://HOST:HTTPPORT/call) under their user ids; the caller
        invites, the callee accepts or rejects. An accepted call publishes each side's
        picture and sound to a fresh private stream only the two of them may play, and
        plays the other's. The call is connected once the peer's first frame is decoded
        (its first sound in an audio-only call). A call to a user who is not listening
        ends at once (remoteOffline); a user already in a call turns new calls down
        (remoteCallBusy); an unanswered call ends after --timeout-ms on both sides.

        Who calls whom:
          --user ID            who this side is: 1-64 letters, digits, '-', '_', '.', '@'
          --listen             wait for calls; after one ends, wait for the next, until
                               --duration or Ctrl-C. A lost signaling (a server restart)
                               is registered with again, 2 s x 1.5^n apart (at most 30 s),
                               10 tries ({"event":"registering"} with --stats json)
          --accept MODE        with --listen: auto accepts every call; manual (default)
                               prints each incoming call with its caller and extension and
                               reads stdin: accept | reject [REASON]. Once stdin is closed
                               (< /dev/null), calls are rejected ("no answer")
          --to PEER            call PEER, a user listening on the same server
          --audio-only         with --to: an audio call, no picture either way
          --extension TEXT     with --to: what the callee is shown with the call (at most
                               1024 bytes; the CallAPI's fromUserExtension)
          --calls N            with --to: N calls one after another, each hung up after
                               --duration (default 1); for measuring the setup
          --duration SECONDS   with --to: how long each call lasts once connected before
                               this side hangs up (default: until either side hangs up or
                               Ctrl-C); with --listen: the whole run
          --timeout-ms MS      the calling timer: a call not connected after MS ends, on
                               either side (callingTimeout / remoteCallingTimeout;
                               default 15000, 0: none)
          --max-call-seconds S a connected call hangs up after S (maxCallTimeExceeded)

        Server:
          --server URL         the liveline serve carrying the call, rtmp://HOST[:PORT][/APP]
                               (default rtmp://127.0.0.1:1935/call); the call's streams go
                               to APP (default call)
          --signal URL         its call signaling, ws://HOST:PORT/call (default: the one the
                               RTMP server announces; one that disagrees with it is an error)
        \(TokenOption.help)
        What this side sends:
          --source SPEC        test | color:NAME | color:#RRGGBB | file:PATH | v4l2:/dev/videoN |
                               screen:DISPLAY (as host's; default test, a moving pattern)
          --audio-source SPEC  tone | tone:HZ | silence | none | file:PATH | alsa:DEVICE |
                               pulse:NAME (default: what --source brings; with test, the
                               440 Hz tone with its 3 kHz beep each second)
          --size WxH           picture size (default 640x360)
          --fps N              frames per second, 1-60 (default 30)
          --bitrate KBPS       H.264 bitrate in kbit/s (default 800)

        What this side shows of the peer (each call's play writes them anew):
          --snapshot FILE.png  the peer's last decoded picture as a PNG when the call ends
          --y4m PATH|-         the peer's decoded pictures as YUV4MPEG2 to PATH, or stdout
                               with '-' (liveline call ... --y4m - | ffplay -)
          --out FILE|-         the peer's picture and sound as received (no re-encode):
                               FILE.nut, FILE.mkv, or NUT on stdout with '-'
                               Only one of --y4m and --out can be '-'

        Reports:
          --stats json         JSON lines on stdout (on stderr when --y4m or --out has
                               stdout): every state change ({"event":"state","state":
                               "connected","stateCode":4,"reason":"recvRemoteFirstFrame",
                               "reasonCode":13,"eventReason":"","info":{"callId":...}}),
                               the other events ({"event":"incomingCall","from":"alice",
                               "callId":...,"audioOnly":false,"extension":...},
                               "remoteFirstFrame" (width, height), "remoteFirstAudio",
                               "peerMicMuted", "peerMicUnmuted", "peerHeld", "peerUnheld",
                               "remoteJoined", "remoteLeft", "captureFirstLocalVideoFrame",
                               "publishFirstLocalVideoFrame"), once a second while
                               connected {"event":"stats"} (the peer's fps, size, glass-to-
                               glass latencyP50Ms/latencyP95Ms, receiveKbps, sendKbps), after
                               each call {"event":"callSummary"} (setupMs: call to
                               connected, acceptToFirstFrameMs, latencyP50Ms/P95Ms of the
                               peer's picture, connectedSeconds, ended: the reason, with
                               endedCode and eventReason) and at the end {"event":"summary"}
                               (the same for the last call, and p50/p95 over all calls);
                               otherwise a line per state change, event and second on stderr
          --help               show this text

        During a call, stdin takes: hangup [REASON] (cancels a call not yet answered) |
        mute | unmute (this side sends silence; the peer is told: peerMicMuted) | hold |
        unhold (this side sends black and silence until unhold; both sides are told:
        peerHeld), and with --accept manual: accept | reject [REASON].

        Exit status: 0 done (every call ended by a hang-up, or the listening ended);
        1 a failure (the signaling could not be reached, or was lost: by a listener once
        its tries ran out; a call's media failed or vanished: networkUnstable); 2 a usage
        error; 3 refused: the registration (604: the user id is taken, a refused token),
        or for the caller the call (remoteRejected, remoteCallBusy, remoteOffline,
        callingTimeout, remoteCallingTimeout). A refused or failed call ends the series
        of calls that --calls asked for.

        Example, with a liveline serve running (liveline serve):
          liveline call --user bob --listen --accept auto --source color:blue
          liveline call --user alice --to bob --source color:red --duration 10 --snapshot bob.png
        """

    static func run(_ arguments: inout Arguments) throws -> Int32 {
        let options = try CallOptions.parse(&arguments)
        return try CallRun(options: options).run()
    }
}

/// Everything `liveline call` was asked for, validated.
struct CallOptions {
    /// Which side of a call this run takes.
    enum Role: Equatable {
        /// `--listen`: wait for calls, answering them as `accept` says.
        case listen(accept: AcceptMode)
        /// `--to PEER`: call PEER, `calls` times one after another.
        case call(peer: String, audioOnly: Bool, calls: Int)
    }

    /// How incoming calls are answered (`--accept`).
    enum AcceptMode: String {
        case auto, manual
    }

    var role: Role
    var session: CallSession.Options
    /// Caller: how long each call lasts once connected; listener: the whole run.
    var duration: Double?
    var json = false
    /// Standard output carries media (`--y4m -`, `--out -`): every report line goes to stderr.
    var toStandardError = false

    /// The server when `--server` is not given: a liveline serve on this machine.
    static let defaultServer = RTMPURL(host: "127.0.0.1", app: "call", streamName: "")

    /// What each side publishes by default: a co-host's test pattern, size and rate (640x360, 30 fps, 800 kbit/s).
    static var defaultLocal: HosterConfiguration { Guest.Options().cohost }

    static func parse(_ arguments: inout Arguments) throws -> CallOptions {
        let limits = CallLimits()
        guard let user = try arguments.value("--user") else {
            throw UsageError("missing --user ID: who this side of the call is")
        }
        if let problem = limits.userIdProblem(user) { throw UsageError("--user: \(problem)") }
        let listen = arguments.flag("--listen")
        let peer = try arguments.value("--to")
        let role: Role
        switch (listen, peer) {
        case (false, nil):
            throw UsageError("give --listen (wait for calls) or --to PEER (call PEER)")
        case (true, _?):
            throw UsageError("--listen and --to exclude each other: one side listens, the other calls")
        case (true, nil):
            try arguments.reject(["--audio-only", "--extension", "--calls"],
                                 without: "--to PEER (the caller chooses the call)")
            var accept = AcceptMode.manual
            if let mode = try arguments.value("--accept") {
                guard let parsed = AcceptMode(rawValue: mode) else {
                    throw UsageError("--accept must be auto or manual, not '\(mode)'")
                }
                accept = parsed
            }
            role = .listen(accept: accept)
        case (false, let peer?):
            try arguments.reject(["--accept"], without: "--listen (it answers incoming calls)")
            if let problem = limits.userIdProblem(peer) { throw UsageError("--to: \(problem)") }
            guard peer != user else { throw UsageError("--to \(peer) is this side's own --user: call someone else") }
            role = .call(peer: peer, audioOnly: arguments.flag("--audio-only"),
                         calls: try arguments.int("--calls", in: 1...10_000) ?? 1)
        }
        let server = try serverURL(try arguments.value("--server"))
        var session = CallSession.Options(server: server, userId: user)
        session.local = defaultLocal
        if let extensionText = try arguments.value("--extension") {
            guard extensionText.utf8.count <= limits.maxExtension else {
                throw UsageError("--extension is \(extensionText.utf8.count) bytes; at most \(limits.maxExtension)")
            }
            session.userExtension = extensionText
        }
        session.signalURL = try LineOptions.signalURL(&arguments, path: "call")
        session.tokenProvider = try TokenOption.parse(&arguments)
        try arguments.picture(into: &session.local)
        if let spec = try HosterOptions.audioSource(&arguments) { session.local.audioSource = spec }
        if case .call(_, true, _) = role {
            // An audio call sends sound only: a source without any cannot make one.
            var audio = session.local
            audio.livingMediaMode = .audio
            guard (try? audio.audioSpec()) != nil else {
                throw UsageError("--audio-only sends sound only, and " + (audio.audioSource == nil
                    ? "--source \(audio.source) brings none: give --audio-source (tone, file:PATH, alsa:DEVICE, ...)"
                    : "--audio-source none sends none"))
            }
        }
        let duration = try arguments.seconds()
        if let ms = try arguments.int("--timeout-ms", in: 0...3_600_000) { session.callTimeoutMilliseconds = ms }
        session.maxCallSeconds = try arguments.seconds("--max-call-seconds")
        let snapshot = try arguments.value("--snapshot")
        let y4m = try arguments.value("--y4m")
        let out = try arguments.value("--out")
        let json = try arguments.statsJSON()
        let positionals = arguments.positionals()
        try arguments.finish()
        if let first = positionals.first { throw UsageError("unexpected argument '\(first)'") }
        try PlayOutputs.checkSnapshot(snapshot)
        try PlayOutputs.checkOut(out)
        let onStandardOutput = try PlayOutputs.onStandardOutput([("--y4m", y4m), ("--out", out)])
        (session.play.snapshotPath, session.play.y4mPath, session.play.outPath) = (snapshot, y4m, out)
        return CallOptions(role: role, session: session, duration: duration, json: json,
                           toStandardError: !onStandardOutput.isEmpty)
    }

    /// `--server rtmp://HOST[:PORT][/APP]`: where the call's streams go (APP default
    /// `call`); a stream name is refused, since every call makes its own.
    static func serverURL(_ text: String?) throws -> RTMPURL {
        guard let text else { return defaultServer }
        let scheme = "rtmp://"
        guard text.lowercased().hasPrefix(scheme) else {
            throw UsageError("--server needs rtmp://HOST[:PORT][/APP], not '\(RTMPURL.redacted(text))'")
        }
        guard !text.contains("?") else {
            throw UsageError("--server takes no query (a token goes in --token): '\(RTMPURL.redacted(text))'")
        }
        let rest = text.dropFirst(scheme.count)
        let path = rest.firstIndex(of: "/").map { rest[$0...].dropFirst() } ?? ""
        let segments = path.split(separator: "/", omittingEmptySubsequences: true)
        guard segments.count <= 1 else {
            throw UsageError("--server names the server and at most its APP (rtmp://HOST[:PORT][/APP]), "
                             + "no stream: every call makes its own, not '\(text)'")
        }
        let authority = rest.prefix { $0 != "/" }
        let full = "\(scheme)\(authority)/\(segments.first ?? "call")/-"
        do {
            var url = try RTMPURL(parsing: full)
            url.streamName = ""
            return url
        } catch {
            // The error names the URL checked: show the one given.
            throw UsageError("--server: " + "\(error)".replacingOccurrences(of: RTMPURL.redacted(full), with: RTMPURL.redacted(text)))
        }
    }
}
