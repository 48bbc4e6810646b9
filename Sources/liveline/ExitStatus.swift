import LiveCore
import LiveLine
import LiveRTMP

/// The exit status of every command:
///
/// - 0: done (the run ended as asked, by Ctrl-C, or because the reader of stdout left);
/// - 1: a runtime failure: network, file, device, a push or a line that failed or was lost;
/// - 2: a usage error: bad or contradictory options, printed with what is wrong;
/// - 3: refused by the line or the server: an application or join turned down (601,
///   602, 604, 605), a line not opened, a refused token, a refused publish or play.
enum ExitStatus {
    static let ok: Int32 = 0
    static let failure: Int32 = 1
    static let usage: Int32 = 2
    static let refused: Int32 = 3

    /// The status for the error that ended a command.
    static func of(_ error: Error) -> Int32 {
        switch error {
        case is UsageError: usage
        case let error as RTMPClientError: error.statusCode != nil ? refused : failure
        case GuestPlayError.player(let error): of(error)
        case let error as LiveError where error.isRefusal: refused
        default: failure
        }
    }
}
