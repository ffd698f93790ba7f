import JSON

/// Documents: create, replace, patch and delete under the caller's `AccessScope`.
public protocol DocumentsWriting: AnyObject {
    func newID() -> String
    func insert(into collection: String, _ body: JSONObject, scope: AccessScope) throws -> String
    func replace(in collection: String, id: String, _ body: JSONObject, scope: AccessScope) throws -> (created: Bool, text: String)
    func replace(in collection: String, id: String, _ body: JSONObject, existing: StoredRow?, scope: AccessScope) throws -> (created: Bool, text: String)
    func replaceableRow(in collection: String, id: String, scope: AccessScope) throws -> StoredRow?
    func existingRow(in collection: String, id: String, scope: AccessScope) throws -> StoredRow?
    func patch(in collection: String, id: String, _ patch: JSONObject, scope: AccessScope) throws -> String
    func patch(in collection: String, id: String, _ patch: JSONObject, existing: StoredRow?, scope: AccessScope) throws -> String
    func delete(from collection: String, id: String, scope: AccessScope) throws
    func delete(from collection: String, id: String, existing: StoredRow?, scope: AccessScope) throws
    func document(in collection: String, id: String) throws -> String?
}

extension DocumentsWriting {
    public func insert(into collection: String, _ body: JSONObject) throws -> String {
        try insert(into: collection, body, scope: .system)
    }

    public func replace(in collection: String, id: String, _ body: JSONObject) throws -> (created: Bool, text: String) {
        try replace(in: collection, id: id, body, scope: .system)
    }

    public func patch(in collection: String, id: String, _ patch: JSONObject) throws -> String {
        try self.patch(in: collection, id: id, patch, scope: .system)
    }

    public func delete(from collection: String, id: String) throws {
        try delete(from: collection, id: id, scope: .system)
    }
}
