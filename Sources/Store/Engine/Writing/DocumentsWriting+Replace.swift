import JSON

/// The one rule on a PUT body's `_id`, for both engines: absent, or the URL's.
public func checkBodyID(_ body: JSONObject, matches id: String) throws {
    if let given = body["_id"], given != .string(id) {
        throw StoreError.invalid("The body's _id does not match the URL.")
    }
}

/// A PUT's engine-neutral rules, said once for both engines on top of
/// `existingRow` and `replace(…, existing:)`.
extension DocumentsWriting {
    /// Replaces the document `id`, or creates it when absent and the caller may.
    /// - Returns: whether it was created, and the stored JSON text.
    public func replace(in collection: String, id: String, _ body: JSONObject, scope: AccessScope) throws -> (created: Bool, text: String) {
        try checkBodyID(body, matches: id)
        return try replace(in: collection, id: id, body, existing: try replaceableRow(in: collection, id: id, scope: scope), scope: scope)
    }

    /// The row a PUT of `id` replaces, or nil when the caller may create it.
    /// An id the caller could not create answers 404 whether it is free or
    /// taken by a row the caller cannot see, so a PUT cannot probe for rows.
    public func replaceableRow(in collection: String, id: String, scope: AccessScope) throws -> StoredRow? {
        var hidden = false
        do {
            if let row = try existingRow(in: collection, id: id, scope: scope) { return row }
        } catch StoreError.notFound {
            hidden = true
        }
        guard !hidden && scope.mayChoose(id: id) else {
            let rule = scope.hidesRows ? " " + scope.idNamespaceRule : ""
            throw StoreError.notFound("No document with _id \"\(id)\" in \(collection).\(rule)")
        }
        return nil
    }
}
