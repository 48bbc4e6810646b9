/// The line's limits and timeouts (DESIGN.md §4, sdk-facts "Co-host line").
public struct LineLimits: Sendable, Equatable {
    /// Co-hosts on the line besides the hoster (the SDK's host + 3).
    public var maxCohosts: Int
    /// An application the hoster leaves unanswered this long is cancelled (605, "timeout").
    public var applyTimeout: Duration
    /// A participant that sends nothing for this long counts as gone.
    public var heartbeatTimeout: Duration
    public var maxUserData = 512
    /// A live id (a stream name) longer than this is refused (4).
    public var maxLiveId = 256
    public var maxLiveInfo = 1024
    public var maxUserName = 256
    public var maxHeader = 512
    public var maxContent = 1024
    /// A shareOpen's shareInfo (the anyRTC SDK leaves it to the app; sized like liveInfo).
    public var maxShareInfo = 1024
    /// Members per page of `GET /api/live/{liveId}/members`.
    public var membersPerPage = 15
    /// Members of one room, hoster included; a join beyond is refused with 209 (no resources).
    public var maxMembers = 1000
    /// Requests (and pings) one connection may send per second on average, and in a burst;
    /// one over is answered with 201 (bad request), a further `requestBurst` over closes it.
    public var requestsPerSecond = 20.0
    public var requestBurst = 40.0
    /// Bytes of events waiting to be written to one participant; an event that would go
    /// beyond (or that its socket refuses) closes the participant instead of being lost.
    public var maxQueuedBytes = 256 << 10
    /// With tokens checked: `tokenWillExpire` goes out this many seconds before a
    /// participant's token expires (the anyRTC SDK's 300 s), or at half its remaining
    /// life when that is later; a token that expires unrenewed ends the session with 212.
    public var tokenWillExpireSeconds: Int64 = 300
    /// With tokens checked: a connection whose token was not verified (by a create, join
    /// or renewToken) this long after it opened is closed with 212 (auth timeout).
    public var admissionTimeout: Duration = .seconds(30)

    public init(maxCohosts: Int = 3, applyTimeout: Duration = .seconds(30), heartbeatTimeout: Duration = .seconds(30)) {
        self.maxCohosts = maxCohosts
        self.applyTimeout = applyTimeout
        self.heartbeatTimeout = heartbeatTimeout
    }
}
