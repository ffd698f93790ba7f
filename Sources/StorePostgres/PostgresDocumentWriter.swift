import JSON
import Logging
import Store

/// The writer on PostgreSQL: creates, replaces, patches and deletes
/// documents on one connection, in group commits, with the same methods,
/// rules and errors as `DocumentWriter`. Many nodes may each run one on the
/// same database: a taken `_id` is decided by the unique index, a row that
/// changed since it was read by `UPDATE … WHERE updated_at = <as read>`, and
/// change-feed positions by the feed lock (`PostgresDocumentWriter+Feed`).
public final class PostgresDocumentWriter {
    let db: PGConnection
    let catalog: PostgresCatalog
    let ids: DocumentID
    let logger: Logger
    /// Change rows of the open batch, written at its end under the feed lock.
    var pendingChanges: [PendingChange] = []
    /// How commits order their change rows; `.none` exists only to show, in
    /// a test, the gap the lock prevents.
    var feedOrdering = FeedOrdering.advisoryLock
    /// Called after a batch wrote its change rows, just before COMMIT (tests hold a commit open here).
    var beforeCommit: (() -> Void)?
    /// The declared reference fields whose `_refs` rows every write keeps in step.
    public internal(set) var references = ReferenceSchema.none
    /// The "no reference left" guard of deletes, deferred through a cascade.
    let referenceChecks = ReferenceChecks()
    /// Who this node's thumbnail-job claims are made as (`PostgresNode.id`; tests set one per connection).
    public var jobWorker = PostgresNode.id
    /// Seconds a thumbnail job claimed at upload stays this node's unless renewed (`PostgresNode.defaultLease`).
    public var claimLease: Double = PostgresNode.defaultLease

    public init(url: String, ids: DocumentID, logger: Logger) throws {
        db = try PGConnection(url: url)
        catalog = PostgresCatalog(db: db)
        self.ids = ids
        self.logger = logger
    }

    /// This node's name: `recordAttempt` counts only deliveries it still holds.
    public var nodeID = PostgresNode.id

    /// Applies pending migrations (one node at a time).
    public func migrate() throws { try PostgresMigrations.apply(on: db, logger: logger) }

    /// Runs `operations` in one transaction and returns each one's outcome
    /// after the commit. An operation that fails is undone alone (its
    /// savepoint); a failed commit fails them all.
    public func commitBatch<T>(_ operations: [(PostgresDocumentWriter) throws -> T]) -> [Result<T, any Error>] {
        pendingChanges = []
        var results: [Result<T, any Error>] = []
        do {
            try db.transaction {
                results = operations.map { operation in
                    let mark = pendingChanges.count
                    let result = Result { try db.transaction { try operation(self) } }.mapError { ($0 as? PGError)?.storeError ?? $0 }
                    if case .failure = result {
                        pendingChanges.removeSubrange(mark...)
                        catalog.forgetAll()
                    }
                    return result
                }
                if operations.count == 1, case .failure(let error) = results[0] { throw error }
                try writePendingChanges()
                beforeCommit?()
            }
        } catch {
            catalog.forgetAll()
            pendingChanges = []
            if operations.count == 1, case .failure? = results.first { return results }
            return operations.map { _ in .failure(Self.wrap(error)) }
        }
        return results
    }

    static func wrap(_ error: any Error) -> any Error {
        if let pg = error as? PGError { return pg.storeError }
        return StoreError.wrap(error)
    }

    /// Stores a new document; the client's `_id` is kept, otherwise one is made.
    /// - Returns: the stored document's JSON text.
    public func insert(into collection: String, _ body: JSONObject, scope: AccessScope = .system) throws -> String {
        let new = try NewDocument(body, scope: scope, ids: ids)
        let (id, now, document) = (new.id, new.now, new.document)
        let layout = try catalog.ensure(collection)
        let text = document.jsonText
        // ON CONFLICT keeps the transaction alive: a taken id is an answer, not an abort.
        let inserted = try db.first("INSERT INTO \(layout.table) (id, created_at, updated_at, doc) VALUES ($1::text, $2::text, $2::text, $3::json) ON CONFLICT (id) DO NOTHING RETURNING rid",
                                    [.text(id), .text(now), .text(text)]) { $0.int(0) }
        guard inserted != nil else {
            throw StoreError.conflict("A document with _id \"\(id)\" already exists in \(collection).")
        }
        try updateReferenceEntries(collection, id: id, from: nil, to: document, scope: scope)
        recordChange(collection, id: id, .create, previousText: nil)
        return text
    }

    /// The row `id` if it exists and the caller may change it. Throws 404
    /// when the caller may not see it, 403 when they see it but may not
    /// write; nil when it does not exist.
    public func existingRow(in collection: String, id: String, scope: AccessScope) throws -> StoredRow? {
        try scope.checkCollectionRead()
        // No row has an id with NUL (PostgreSQL's text holds none): absent, as on SQLite.
        guard !id.utf8.contains(0), let layout = try catalog.layout(collection) else { return nil }
        let params = ParameterList([.text(id)])
        let visible = PostgresAccess.sql(scope.readRule, params.bind) ?? "TRUE"
        let canWrite = PostgresAccess.sql(scope.writeRule, params.bind) ?? "TRUE"
        let sql = "SELECT rid, created_at, updated_at, doc::text, \(visible), \(canWrite) FROM \(layout.table) AS d WHERE d.id = $1::text"
        guard let row = try db.first(sql, params.values, { ($0.int(0) ?? 0, $0.text(1) ?? "", $0.text(2) ?? "", $0.text(3) ?? "", $0.bool(4) ?? false, $0.bool(5) ?? false) }) else {
            return nil
        }
        guard row.4 else { throw StoreError.notFound("No document with _id \"\(id)\" in \(collection).") }
        guard row.5 else { throw StoreError.forbidden("You may read this document but not change it.") }
        guard case .object(let document) = try JSONParser.parse(row.3) else { throw StoreError.invalid("stored document is not an object") }
        return StoredRow(rowID: row.0, createdAt: row.1, updatedAt: row.2, document: document, text: row.3)
    }

    /// Replaces the document `id`, or creates it when absent.
    public func replace(in collection: String, id: String, _ body: JSONObject, ifMatch: String? = nil,
                        scope: AccessScope = .system) throws -> (created: Bool, text: String) {
        if let given = body["_id"], given != .string(id) { throw StoreError.invalid("The body's _id does not match the URL.") }
        guard let existing = try existingRow(in: collection, id: id, scope: scope) else {
            if ifMatch != nil { throw PreconditionFailed(current: nil) }
            guard scope.mayChoose(id: id) else {
                throw StoreError.notFound("No document with _id \"\(id)\" in \(collection). \(scope.idNamespaceRule)")
            }
            var withID = body
            withID["_id"] = .string(id)
            return (true, try insert(into: collection, withID, scope: scope))
        }
        var document = try DocumentWriter.clientFields(body)
        document["_acl"] = .object(try scope.updatedACL(existing: existing.acl, client: body["_acl"]))
        try store(collection, existing, id: id, &document, ifMatch: ifMatch, scope: scope)
        return (false, document.jsonText)
    }

    /// Applies an RFC 7396 merge patch to the document `id`.
    public func patch(in collection: String, id: String, _ patch: JSONObject, ifMatch: String? = nil,
                      scope: AccessScope = .system) throws -> String {
        try self.patch(in: collection, id: id, patch, existing: try existingRow(in: collection, id: id, scope: scope),
                       ifMatch: ifMatch, scope: scope)
    }

    /// `patch` for a row already read with `existingRow` (nil: 404); it
    /// fails with a conflict if the row changed since that read.
    public func patch(in collection: String, id: String, _ patch: JSONObject, existing: StoredRow?, ifMatch: String? = nil,
                      scope: AccessScope) throws -> String {
        guard let existing else {
            throw StoreError.notFound("No document with _id \"\(id)\" in \(collection).")
        }
        if let given = patch["_id"], given != .string(id) { throw StoreError.invalid("_id cannot be changed.") }
        var fields = patch
        fields["_acl"] = nil
        guard case .object(let merged) = JSONValue.object(existing.document).mergePatched(with: .object(fields)) else {
            throw StoreError.invalid("The patch must be a JSON object.")
        }
        var document = try DocumentWriter.clientFields(merged)
        document["_acl"] = .object(try scope.updatedACL(existing: existing.acl, client: patch["_acl"]))
        try store(collection, existing, id: id, &document, ifMatch: ifMatch, scope: scope)
        return document.jsonText
    }

    /// Deletes the document `id`; with `ifMatch`, only while its `_updatedAt` is still that.
    public func delete(from collection: String, id: String, ifMatch: String? = nil, scope: AccessScope = .system) throws {
        try delete(from: collection, id: id, existing: try existingRow(in: collection, id: id, scope: scope), ifMatch: ifMatch, scope: scope)
    }

    /// `delete` for a row already read with `existingRow` (nil: 404).
    public func delete(from collection: String, id: String, existing: StoredRow?, ifMatch: String? = nil, scope: AccessScope) throws {
        guard let existing, let layout = try catalog.layout(collection) else {
            throw StoreError.notFound("No document with _id \"\(id)\" in \(collection).")
        }
        if let ifMatch, ifMatch != existing.updatedAt { throw PreconditionFailed(current: existing.updatedAt) }
        let params = ParameterList([.int(existing.rowID), .text(existing.updatedAt)])
        let canWrite = PostgresAccess.sql(scope.writeRule, params.bind).map { " AND \($0)" } ?? ""
        let deleted = try db.query("DELETE FROM \(layout.table) AS d WHERE d.rid = $1::bigint AND d.updated_at = $2::text\(canWrite) RETURNING 1", params.values) { _ in () }
        guard !deleted.isEmpty else { throw Self.changedMeanwhile(id) }
        try updateReferenceEntries(collection, id: id, from: existing.document, to: nil, scope: .system)
        try checkNotReferenced(collection, id: id)
        recordChange(collection, id: id, .delete, previousText: existing.text)
    }

    /// Overwrites `existing` with `document` if the row still holds what was read.
    func store(_ collection: String, _ existing: StoredRow, id: String, _ document: inout JSONObject,
                       ifMatch: String?, scope: AccessScope) throws {
        guard let layout = try catalog.layout(collection) else { throw StoreError.notFound("No collection \(collection).") }
        if let ifMatch, ifMatch != existing.updatedAt { throw PreconditionFailed(current: existing.updatedAt) }
        let now = Timestamp.after(existing.document["_updatedAt"]?.stringValue)
        document.prepend("_id", .string(id))
        document["_createdAt"] = .string(existing.createdAt)
        document["_updatedAt"] = .string(now)
        let params = ParameterList([.text(now), .text(document.jsonText), .int(existing.rowID), .text(existing.updatedAt)])
        let canWrite = PostgresAccess.sql(scope.writeRule, params.bind).map { " AND \($0)" } ?? ""
        let updated = try db.query("UPDATE \(layout.table) AS d SET updated_at = $1::text, doc = $2::json WHERE d.rid = $3::bigint AND d.updated_at = $4::text\(canWrite) RETURNING 1",
                                   params.values) { _ in () }
        guard !updated.isEmpty else { throw Self.changedMeanwhile(id) }
        try updateReferenceEntries(collection, id: id, from: existing.document, to: document, scope: scope)
        recordChange(collection, id: id, .update, previousText: existing.text)
    }

    /// Another writer (another node) changed or removed the row between this write's read and its update.
    static func changedMeanwhile(_ id: String) -> StoreError {
        .conflict("The document \"\(id)\" changed while this write was made; read it again and retry.")
    }

    /// A fresh document id, as `insert` would make.
    public func newID() -> String { ids.next() }
}

/// An `If-Match` that no longer holds: the row's current `_updatedAt` (nil
/// when it is gone). Handlers answer 412 with it as the ETag.
public struct PreconditionFailed: Error, Sendable {
    public let current: String?
}
