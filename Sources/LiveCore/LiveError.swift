/// The status codes of the anyRTC SDK (ARRtmpCode), kept with their numbers so people
/// who know the SDK can read them (reference/sdk-facts.md).
public enum LiveCode: Int, Sendable, CaseIterable {
    case ok = 0, unknown = 1, exception = 2, notInitialized = 3, invalidParams = 4, noNetwork = 5
    case cameraNotFound = 6, noCameraPermission = 7, noAudioPermission = 8, notSupported = 9
    case networkError = 100, networkDisconnected = 101, liveError = 102, exceptionError = 103, unauthorized = 104
    case badRequest = 201, authFailed = 202, noSuchUser = 203, serverError = 204, storageError = 205
    case accountInArrears = 206, locked = 207, serviceNotOpen = 208, noResources = 209
    case notSupportedByServer = 210, forcedExit = 211, authTimeout = 212, tokenMustBeVerified = 213
    case lineNotStarted = 600, hosterRejected = 601, lineFull = 602, closeError = 603, alreadyOpen = 604, isStopped = 605

    /// A short human explanation of the code.
    public var message: String {
        switch self {
        case .ok: "ok"
        case .unknown: "unknown error"
        case .exception: "exception"
        case .notInitialized: "not initialised"
        case .invalidParams: "invalid parameters"
        case .noNetwork: "no network"
        case .cameraNotFound: "camera not found"
        case .noCameraPermission: "no permission to use the camera"
        case .noAudioPermission: "no permission to use the microphone"
        case .notSupported: "not supported"
        case .networkError: "network error"
        case .networkDisconnected: "network disconnected"
        case .liveError: "live stream error"
        case .exceptionError: "exception"
        case .unauthorized: "unauthorized"
        case .badRequest: "bad request"
        case .authFailed: "authentication failed"
        case .noSuchUser: "no such user"
        case .serverError: "server error"
        case .storageError: "storage error"
        case .accountInArrears: "account in arrears"
        case .locked: "locked"
        case .serviceNotOpen: "service not open"
        case .noResources: "no resources"
        case .notSupportedByServer: "not supported by the server"
        case .forcedExit: "forced exit"
        case .authTimeout: "authentication timed out"
        case .tokenMustBeVerified: "the token must be verified"
        case .lineNotStarted: "the line has not started"
        case .hosterRejected: "the hoster rejected the application"
        case .lineFull: "the line is full"
        case .closeError: "error closing the line"
        case .alreadyOpen: "already open"
        case .isStopped: "stopped"
        }
    }
}

/// An error a user of LiveLine can act on: an anyRTC SDK code plus what went wrong.
public struct LiveError: Error, CustomStringConvertible, Equatable, Sendable {
    public let code: LiveCode
    public let detail: String
    /// The answer of a server that refused (a publish, a play, a token), as opposed to
    /// no answer at all or a local failure that carries the same code (a token provider
    /// that failed is 202 as well). The command line exits with 3 for a refusal.
    public let isRefusal: Bool

    public init(_ code: LiveCode, _ detail: String, isRefusal: Bool = false) {
        self.code = code
        self.detail = detail
        self.isRefusal = isRefusal
    }

    public var description: String { "\(detail) (code \(code.rawValue): \(code.message))" }
}
