/// One page of `GET /api/live/{liveId}/members?page=N`.
public struct LineMemberPage: Codable, Equatable, Sendable {
    public struct Member: Codable, Equatable, Sendable {
        public var userId: String
        public var userData: String
        /// "hoster", "cohost" or "guest".
        public var role: String

        public init(userId: String, userData: String, role: String) {
            (self.userId, self.userData, self.role) = (userId, userData, role)
        }
    }

    public var liveId: String
    public var page: Int
    public var pageSize: Int
    public var total: Int
    public var members: [Member]

    public init(liveId: String, page: Int, pageSize: Int, total: Int, members: [Member]) {
        (self.liveId, self.page, self.pageSize, self.total, self.members) = (liveId, page, pageSize, total, members)
    }
}
