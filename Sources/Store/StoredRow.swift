import JSON

/// A document row as the writer read it before changing it: the row a
/// caller may change (`existingRow`), handed back to `replace`, `patch` or
/// `delete` so hooks and the write see the same state. Either engine.
public struct StoredRow: Sendable {
    /// The engine's row id (SQLite `rid`, PostgreSQL identity).
    public let rowID: Int64
    public let createdAt: String
    /// As read: on PostgreSQL the write must still find it (lost updates).
    public let updatedAt: String
    /// The stored document, `_acl` included.
    public let document: JSONObject
    /// Its JSON text as stored: the change feed's `prev_doc`, never serialised again.
    public let text: String
    public var acl: JSONObject? { document["_acl"]?.objectValue }

    public init(rowID: Int64, createdAt: String, updatedAt: String, document: JSONObject, text: String) {
        self.rowID = rowID
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.document = document
        self.text = text
    }
}
