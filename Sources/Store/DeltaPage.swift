/// One page of a delta sync.
public struct DeltaPage: Sendable {
    /// The current JSON text of each entity that changed and that the caller
    /// may read and that matches the filter.
    public let changed: [String]
    /// Ids the caller could read at the cursor and can no longer see now.
    public let deleted: [String]
    public let cursor: FeedCursor
    /// True when another page follows at once (call again with `cursor`).
    public let more: Bool

    public init(changed: [String], deleted: [String], cursor: FeedCursor, more: Bool) {
        self.changed = changed
        self.deleted = deleted
        self.cursor = cursor
        self.more = more
    }
}
