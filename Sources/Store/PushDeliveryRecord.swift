/// A direct push as the store holds it, for the admin API (which formats
/// it: `PushDeliveryJSON` in Roost). Both engines read the same fields.
public struct PushDeliveryRecord: Sendable {
    /// One entry of a push's attempt log.
    public struct Attempt: Sendable {
        public let attempt: Int64
        public let at: String
        public let status: Int64?
        public let error: String?

        public init(attempt: Int64, at: String, status: Int64?, error: String?) {
            self.attempt = attempt
            self.at = at
            self.status = status
            self.error = error
        }
    }

    public let rid: Int64
    public let token: String
    public let userID: String
    public let platform: String
    public let kind: String
    public let status: String
    public let attempts: Int64
    public let lastStatus: Int64?
    public let lastError: String?
    public let createdAt: String
    public let updatedAt: String
    public let collapseID: String?
    /// Every attempt: read only for one push (`pushDelivery(rid:)`), nil in lists.
    public var attemptLog: [Attempt]?

    public init(rid: Int64, token: String, userID: String, platform: String, kind: String, status: String, attempts: Int64,
                lastStatus: Int64?, lastError: String?, createdAt: String, updatedAt: String, collapseID: String?) {
        self.rid = rid
        self.token = token
        self.userID = userID
        self.platform = platform
        self.kind = kind
        self.status = status
        self.attempts = attempts
        self.lastStatus = lastStatus
        self.lastError = lastError
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.collapseID = collapseID
    }
}
