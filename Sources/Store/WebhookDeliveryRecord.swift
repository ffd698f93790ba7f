import JSON

/// A webhook delivery as the store holds it, for the admin API (which
/// formats it: `DeliveryJSON` in Roost). Both engines read the same fields.
public struct WebhookDeliveryRecord: Sendable {
    /// One entry of a delivery's attempt log.
    public struct Attempt: Sendable {
        public let attempt: Int64
        public let at: String
        public let status: Int64?
        public let error: String?
        public let durationMilliseconds: Int64

        public init(attempt: Int64, at: String, status: Int64?, error: String?, durationMilliseconds: Int64) {
            self.attempt = attempt
            self.at = at
            self.status = status
            self.error = error
            self.durationMilliseconds = durationMilliseconds
        }
    }

    public let rid: Int64
    public let eventID: String
    public let type: String
    public let endpoint: String
    public let status: String
    public let attempts: Int64
    /// When the next attempt is due, in milliseconds since 1970.
    public let nextAttemptAt: Int64
    public let lastStatus: Int64?
    public let lastError: String?
    public let createdAt: String
    public let updatedAt: String
    /// The event's data (null when unreadable) and the attempt log: read
    /// only for one delivery (`delivery(rid:)`), nil in lists.
    public var data: JSONValue?
    public var attemptLog: [Attempt]?

    public init(rid: Int64, eventID: String, type: String, endpoint: String, status: String, attempts: Int64, nextAttemptAt: Int64,
                lastStatus: Int64?, lastError: String?, createdAt: String, updatedAt: String) {
        self.rid = rid
        self.eventID = eventID
        self.type = type
        self.endpoint = endpoint
        self.status = status
        self.attempts = attempts
        self.nextAttemptAt = nextAttemptAt
        self.lastStatus = lastStatus
        self.lastError = lastError
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }
}
