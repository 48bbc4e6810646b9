/// The line's limits and timeouts (DESIGN.md §4, sdk-facts "Co-host line").
public struct LineLimits: Sendable, Equatable {
    /// Co-hosts on the line besides the hoster (the SDK's host + 3).
    public var maxCohosts: Int
    /// An application the hoster leaves unanswered this long is cancelled (605, "timeout").
    public var applyTimeout: Duration
    /// A participant that sends nothing for this long counts as gone.
    public var heartbeatTimeout: Duration
    public var maxUserData = 512
    public var maxLiveInfo = 1024
    public var maxUserName = 256
    public var maxHeader = 512
    public var maxContent = 1024
    /// Members per page of `GET /api/live/{liveId}/members`.
    public var membersPerPage = 15

    public init(maxCohosts: Int = 3, applyTimeout: Duration = .seconds(30), heartbeatTimeout: Duration = .seconds(30)) {
        self.maxCohosts = maxCohosts
        self.applyTimeout = applyTimeout
        self.heartbeatTimeout = heartbeatTimeout
    }
}
