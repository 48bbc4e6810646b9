import Foundation
import LiveAuth
import LiveCore
import LiveLine
import LiveRTMP
import Synchronization

/// The CLI guest's side of the line: joins, applies when asked, prints the events,
/// and says when the run should end (a refused application, the line closing).
final class GuestLineRole: Sendable {

    /// How the line part of the run ended.
    enum Outcome: Equatable, Sendable {
        /// Refused by the line or the server: the application (601 rejected, 602 full,
        /// 605 timed out), the join (604, 104, 213…), the token (212), the co-host push.
        /// Ends the run with status 3.
        case refused(LiveCode, String)
        /// The signaling could not be reached or was lost, or the co-host push failed.
        /// Ends the run with status 1.
        case failed(String)
        /// Co-hosting or the line ended normally (hung up, line closed).
        case ended(String)
    }

    let guest: Guest
    /// What the co-host push captures and encodes (for its status and summary).
    let cohost: HosterConfiguration
    private let options: LineOptions
    private let server: LineServer
    private let apply: Bool
    private let say: String?
    /// `--mute`: the co-host push starts with its sound off.
    private let muted: Bool
    private let emit: @Sendable (String) -> Void
    private let state = Mutex(State())

    private struct State {
        var outcome: Outcome?
        var pushStatus: HosterStatus?
        /// The line was lost and is being joined again.
        var rejoining = false
    }

    /// Throws when the line's signaling cannot be found from `url` (see `LineOptions.server(for:)`).
    /// `guest`: the kit that plays RTMP_URL too, whose heard sound switches to the hear
    /// stream while co-hosting.
    init(guest: Guest, options: LineOptions, url: RTMPURL, apply: Bool, say: String?,
         json: Bool, toStandardError: Bool, muted: Bool = false) throws {
        self.muted = muted
        self.guest = guest
        cohost = guest.options.cohost
        self.options = options
        server = try options.server(for: url)
        self.apply = apply
        self.say = say
        emit = { line in
            if !json || toStandardError { printError(line) } else { printLine(line) }
        }
        guest.onLineEvent = { [weak self] event in
            // The push's figures once a second, and its sound's levels, would drown the line's
            // events; the co-hosts' levels are JSON lines only, as the hoster's are.
            switch event {
            case .cohostPush(.status), .cohostPush(.localAudioActive): break
            case .remoteAudioActive where !json: break
            default: self?.emit(json ? lineEventJSON(event) : lineEventText(event))
            }
            self?.observe(event)
        }
    }

    var outcome: Outcome? { state.withLock { $0.outcome } }

    /// The co-host push's latest status (nil before the first one).
    var pushStatus: HosterStatus? { state.withLock { $0.pushStatus } }

    func start() throws {
        // The push starts muted; the room hears it once the guest co-hosts.
        if muted { guest.setLocalAudioEnable(false) }
        if apply { readCommands() }
        try guest.joinLine(server: server, liveId: options.liveId, userId: options.userId, userData: options.userData)
        if let say { guest.sendMessage(userName: options.userId, content: say) }
        if apply { guest.applyLine() }
    }

    /// `mute` and `unmute` on stdin switch the co-host push's sound (as host's).
    private func readCommands() {
        let guest = self.guest
        Thread.detachNewThread {
            while let text = readLine() {
                switch text.trimmingCharacters(in: .whitespaces) {
                case "mute": guest.setLocalAudioEnable(false)
                case "unmute": guest.setLocalAudioEnable(true)
                case "": continue
                default: printError("commands: mute | unmute")
                }
            }
        }
    }

    /// Hangs up (withdraws or leaves co-hosting) and leaves the room.
    func finish() {
        if guest.isCohosting { guest.hangupLine() }
        guest.leaveLine()
    }

    private func observe(_ event: LineSessionEvent) {
        var ending: Outcome?
        switch event {
        case .cohostPush(.status(let status)):
            state.withLock { $0.pushStatus = status }
        case .reconnecting:
            // Co-hosting ended with the connection; once joined again, apply again.
            state.withLock { $0.rejoining = true }
        case .lineResult(.ok, _):
            let again = state.withLock { state in
                defer { state.rejoining = false }
                return state.rejoining && state.outcome == nil
            }
            if again && apply { guest.applyLine() }
        case .applicationResult(let code, _, let reason) where code != .ok:
            ending = .refused(code, Self.refusal("the application was refused", code, reason))
        case .refused("apply", .lineNotStarted, _):
            // No line any more (its connection failed as the guest applied): the session's
            // own lineClosed, which always follows, says how it ended.
            break
        case .refused(let op, let code, let message) where op == "apply" || op == "join":
            ending = .refused(code, Self.refusal("the line refused \(op)", code, message))
        case .hungUp(let reason):
            ending = .ended("hung up by the hoster (\(reason))")
        case .lineLeave(_, let reason):
            ending = .ended("the line closed (\(reason))")
        case .lineClosed(.ok, let reason):
            ending = .ended("the line closed (\(reason))")
        case .lineClosed(let code, let reason) where code == .networkDisconnected || code == .serverError:
            ending = .failed("the co-host line was lost: code \(code.rawValue) (\(reason))")
        case .lineClosed(let code, let reason):
            ending = .refused(code, Self.refusal("the line ended the session", code, reason))
        case .authFailed(.authTimeout, let message):
            ending = .refused(.authTimeout, Self.refusal("the line ended the session", .authTimeout, message))
        // Codes only a server's refusal carries (202 and 212 may be the token provider's own).
        case .cohostPush(.failed(let code)) where [.liveError, .unauthorized, .tokenMustBeVerified].contains(code):
            ending = .refused(code, Self.refusal("the server refused the co-host push", code, ""))
        case .cohostPush(.failed(let code)):
            ending = .failed("the co-host push failed: code \(code.rawValue) (\(code.message))")
        default:
            break
        }
        guard let ending else { return }
        state.withLock { state in
            if state.outcome == nil { state.outcome = ending }
        }
    }

    private static func refusal(_ what: String, _ code: LiveCode, _ reason: String) -> String {
        "\(what): code \(code.rawValue) (\(code.message))" + reasonText(reason, code: code)
    }

    /// The reason of a refusal in words; nothing when the code's message says it already.
    private static func reasonText(_ reason: String, code: LiveCode) -> String {
        switch reason {
        // 605 is the anyRTC SDK's "is stopped"; LiveLine's server sends it when time runs out.
        case "timeout": ": the hoster did not answer in time"
        case "", "rejected", "lineFull", code.message: ""
        default: ", \(reason)"
        }
    }
}
