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

extension StoredRow {
    /// The row a write read (`existingRow`), from what both engines' one
    /// SELECT says of it: 404 when the caller may not read it, 401 or 403
    /// when they may read but not change it, else the row itself.
    public static func forWrite(id: String, in collection: String, visible: Bool, writable: Bool, scope: AccessScope,
                                rowID: Int64, createdAt: String, updatedAt: String, text: String) throws -> StoredRow {
        guard visible else { throw StoreError.notFound("No document with _id \"\(id)\" in \(collection).") }
        guard writable else {
            throw scope.principal == .anonymous ? StoreError.unauthorized("Sign in to change documents in this collection.")
                : StoreError.forbidden("You may read this document but not change it.")
        }
        guard case .object(let document) = try JSONParser.parse(text) else { throw StoreError.invalid("stored document is not an object") }
        return StoredRow(rowID: rowID, createdAt: createdAt, updatedAt: updatedAt, document: document, text: text)
    }

    /// This row after the RFC 7396 merge `patch`, as both engines store it:
    /// the client's fields (the `_id` may not change) and the `_acl` the
    /// caller may set; `_id` and timestamps are the engine's `store` step.
    public func patched(with patch: JSONObject, id: String, scope: AccessScope) throws -> JSONObject {
        if let given = patch["_id"], given != .string(id) { throw StoreError.invalid("_id cannot be changed.") }
        var fields = patch
        fields["_acl"] = nil
        guard case .object(let merged) = JSONValue.object(document).mergePatched(with: .object(fields)) else {
            throw StoreError.invalid("The patch must be a JSON object.")
        }
        var patched = try NewDocument.clientFields(merged)
        patched["_acl"] = .object(try scope.updatedACL(existing: acl, client: patch["_acl"]))
        return patched
    }
}

extension StoredRow {
    /// `document` made ready to replace this row, as both engines store an
    /// update: its `_id`, the row's `_createdAt` and a later `_updatedAt`;
    /// then the caller's `update` rule (or level) judges the change.
    /// - Returns: the new `_updatedAt`.
    public func prepareUpdate(_ document: inout JSONObject, id: String, scope: AccessScope) throws -> String {
        let now = Timestamp.after(self.document["_updatedAt"]?.stringValue)
        document.prepend("_id", .string(id))
        document["_createdAt"] = .string(createdAt)
        document["_updatedAt"] = .string(now)
        try scope.checkUpdate(stored: self.document, updated: document)
        return now
    }
}
