import JSON

/// One committed change, as live streams deliver it.
public struct FeedChange: Sendable {
    public let seq: Int64
    public let collection: String
    public let id: String
    public let operation: ChangeFeed.Operation
    /// When it committed, in milliseconds since 1970.
    public let at: Int64
    /// The entity before the change (nil for a create).
    public let before: String?
    /// The entity as this change committed it (nil for a delete).
    public let after: String?

    public init(seq: Int64, collection: String, id: String, operation: ChangeFeed.Operation, at: Int64, before: String?, after: String?) {
        self.seq = seq
        self.collection = collection
        self.id = id
        self.operation = operation
        self.at = at
        self.before = before
        self.after = after
    }
}
