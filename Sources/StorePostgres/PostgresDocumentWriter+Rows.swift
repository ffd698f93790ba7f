import JSON
import Store

/// The writer's row methods with `DocumentWriter`'s exact signatures and
/// semantics (the `DocumentWriting` requirements): replace of a row already
/// read, patch and delete by id (of a row already read: in the writer's own
/// file), and internal reads (a PUT's replaceable row is `DocumentWriting`'s
/// own, in `DocumentWriting+Replace`).
/// `If-Match` is checked by the caller against the row it read; the write
/// itself still fails with a conflict if another node changed the row since
/// (`UPDATE … WHERE updated_at = <as read>`).
extension PostgresDocumentWriter {
    /// `replace` for a row already read with `existingRow` (nil: create it).
    public func replace(in collection: String, id: String, _ body: JSONObject, existing: StoredRow?,
                        scope: AccessScope) throws -> (created: Bool, text: String) {
        try checkBodyID(body, matches: id)
        guard let existing, try catalog.layout(collection) != nil else {
            var withID = body
            withID["_id"] = .string(id)
            return (true, try insert(into: collection, withID, scope: scope))
        }
        var document = try NewDocument.clientFields(body)
        document["_acl"] = .object(try scope.updatedACL(existing: existing.acl, client: body["_acl"]))
        try store(collection, existing, id: id, &document, scope: scope)
        return (false, document.jsonText)
    }

    /// Applies an RFC 7396 merge patch to the document `id`.
    public func patch(in collection: String, id: String, _ patch: JSONObject, scope: AccessScope) throws -> String {
        try self.patch(in: collection, id: id, patch, existing: try existingRow(in: collection, id: id, scope: scope), scope: scope)
    }

    /// Deletes the document `id`.
    public func delete(from collection: String, id: String, scope: AccessScope) throws {
        try delete(from: collection, id: id, existing: try existingRow(in: collection, id: id, scope: scope), scope: scope)
    }

    /// The stored JSON text of `id`, ignoring access rules (internal use).
    public func document(in collection: String, id: String) throws -> String? {
        guard let layout = try catalog.layout(collection) else { return nil }
        let text: String?? = try db.first("SELECT doc::text FROM \(layout.table) WHERE id = $1::text", [.text(id)]) { $0.text(0) }
        return text ?? nil
    }
}
