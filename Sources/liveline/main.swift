import Foundation
import LiveCore
import LiveLine

/// `liveline`: parses the command line and hands over to a subcommand.
let usage = """
    liveline — live video on Linux

    Usage: liveline <command> [options]

    Commands:
      host      capture, filter, mix and encode H.264; push RTMP, record, open a co-host line
      guest     play an RTMP stream (decode, snapshot, y4m, record, latency); apply to co-host
      call      a 1v1 private call: wait for calls (--listen) or call a user (--to)
      serve     relay RTMP streams, run the co-host line and call signaling and an HTTP API
      token     make the server's secret file or mint an access token
      layout    print the rectangles of a mix layout (JSON, a drawing or a PNG)
      devices   list V4L2 cameras with their formats and sizes
      help      show this text

    Options:
      --version  print the version
      --help     show this text

    Run 'liveline <command> --help' for the options of a command.

    Exit status: 0 done (also when the reader of stdout went away), 1 a runtime failure
    (network, file, device, a push or line that failed), 2 a usage error, 3 refused by
    the line or the server (601, 602, 604, 605, a refused token, publish or play, a
    call rejected, busy, offline or unanswered).
    """

// A reader that goes away (`| head`, Ctrl-C in a pipeline) must end a run cleanly, not
// kill the process: SIGPIPE is caught and dropped, so the write fails with EPIPE, which
// each output handles. Caught, not ignored: programs started from here (--token-command)
// get it back at its default, where an ignored signal would be inherited.
signal(SIGPIPE) { _ in }

let arguments = Array(CommandLine.arguments.dropFirst())
guard let command = arguments.first else {
    printError(usage)
    exit(ExitStatus.usage)
}
let rest = Array(arguments.dropFirst())
let status: Int32
switch command {
case "host": status = HostCommand.main(rest)
case "guest": status = GuestCommand.main(rest)
case "call": status = CallCommand.main(rest)
case "devices": status = DevicesCommand.main(rest)
case "layout": status = LayoutCommand.main(rest)
case "serve": status = ServeCommand.main(rest)
case "token": status = TokenCommand.main(rest)
case "help", "--help", "-h":
    print(usage)
    status = 0
case "--version", "version":
    print("liveline \(LiveLineSDK.version)")
    status = 0
default:
    printError("liveline: unknown command '\(command)'\n\n\(usage)")
    status = ExitStatus.usage
}
Log.flush()
exit(status)
