import JSON
import Logging
import Schema
import Store

/// The single writer: creates, replaces, patches and deletes documents, and
/// keeps their index entries in step, all on one connection and one thread.
///
/// Callers run several operations in one transaction (group commit) through
/// `commitBatch`; each operation sits in its own savepoint, so one failure
/// undoes only itself.
public final class DocumentWriter {
    let db: SQLiteConnection
    let catalog: Catalog
    let ids: DocumentID
    let logger: Logger
    /// The declared reference fields whose `_refs` rows every write keeps in step.
    public internal(set) var references = ReferenceSchema.none
    /// The "no reference left" guard of deletes, deferred through a cascade.
    let referenceChecks = ReferenceChecks()
    /// Whether writes to geo-indexed fields must hold points (`GeoPointCheck`);
    /// tests turn it off to store what older versions accepted.
    public var checksGeoPoints = true
    /// Each collection's JSON Schema (`useSchemas`).
    var schemas: @Sendable (String) -> JSONSchema? = { _ in nil }
    /// Each collection's declared geo-indexed paths (`useDeclaredGeoPaths`).
    var declaredGeoPaths: @Sendable (String) -> [String] = { _ in [] }
    /// Each collection's read-rule stamp (`useRuleStamps`), worked out for every row written.
    var ruleStamps: @Sendable (String) -> RuleStamp? = { _ in nil }
    /// How far `restampRows` got in each collection, and under which fingerprint.
    var restampCursors: [String: (fingerprint: Int64, after: Int64, done: Bool)] = [:]

    public init(path: String, synchronous: String = "NORMAL", ids: DocumentID, logger: Logger) throws {
        db = try SQLiteConnection(path: path, synchronous: synchronous)
        // Checkpoints run on the `Checkpointer` thread, not between commits.
        try db.exec("PRAGMA wal_autocheckpoint=0")
        // When the WAL restarts, its file is cut back to the checkpointer's
        // limit: a burst that grew it does not keep the space for good.
        try db.exec("PRAGMA journal_size_limit=\(Checkpointer.defaultWALLimit)")
        catalog = Catalog(db: db)
        self.ids = ids
        self.logger = logger
    }

    /// Applies pending migrations. Call once, before readers open.
    public func migrate() throws {
        try Migrations.apply(on: db, logger: logger)
        try buildDeferredSortIndexes()
    }

    /// Runs `operations` in one transaction and returns each one's outcome,
    /// only after the commit has reached the WAL.
    /// Errors thrown by an operation come back unchanged in its `Result`.
    public func commitBatch<T>(_ operations: [(DocumentWriter) throws -> T]) -> [Result<T, any Error>] {
        do {
            try db.prepare("BEGIN IMMEDIATE").run()
        } catch {
            return operations.map { _ in .failure(StoreError.wrap(error)) }
        }
        var results: [Result<T, any Error>]
        if operations.count == 1 {
            // Alone in its transaction, an operation needs no savepoint: on failure the whole transaction goes.
            results = [Result { try operations[0](self) }]
            if case .failure = results[0] {
                rollBack()
                return results
            }
        } else {
            results = operations.map { operation in
                let result = Result { try db.savepoint { try operation(self) } }
                if case .failure = result { catalog.forgetAll() }
                return result
            }
        }
        do {
            try db.prepare("COMMIT").run()
        } catch {
            rollBack()
            let failure = StoreError.wrap(error)
            return operations.map { _ in .failure(failure) }
        }
        return results
    }

    private func rollBack() {
        try? db.exec("ROLLBACK")
        catalog.forgetAll()
    }

    /// Stores a new document. The client's `_id` is kept; otherwise one is made.
    /// - Returns: the stored document's JSON text.
    public func insert(into collection: String, _ body: JSONObject, scope: AccessScope = .system) throws -> String {
        let new = try NewDocument(body, scope: scope, ids: ids)
        try checkACLPrincipals(new.document, existing: nil)
        let (id, now, document) = (new.id, new.now, new.document)
        let layout = try catalog.ensure(collection)
        if checksGeoPoints { try GeoPointCheck.check(document, previous: nil, paths: geoChecked(layout)) }
        try SchemaCheck.check(document, in: collection, schema: schemas(collection))
        let text = document.jsonText
        do {
            let (stamp, bits) = stampValues(collection, document)
            try db.prepare("INSERT INTO \(layout.table) (id, created_at, updated_at, doc, rs, rb) VALUES (?1, ?2, ?2, ?3, ?4, ?5)")
                .run([.text(id), .text(now), .text(text), stamp, bits])
        } catch let error as SQLiteError where error.isUniqueViolation {
            throw StoreError.conflict("A document with _id \"\(id)\" already exists in \(collection).")
        }
        try writeIndexEntries(layout, rowID: db.lastInsertRowID, document)
        try updateReferenceEntries(collection, id: id, from: nil, to: document, scope: scope)
        try recordChange(collection, id: id, .create, previous: nil)
        return text
    }

    /// `replace` for a row already read with `existingRow` (nil: create it).
    public func replace(in collection: String, id: String, _ body: JSONObject, existing: StoredRow?,
                        scope: AccessScope = .system) throws -> (created: Bool, text: String) {
        try checkBodyID(body, matches: id)
        guard let existing, let layout = try catalog.layout(collection) else {
            var withID = body
            withID["_id"] = .string(id)
            return (true, try insert(into: collection, withID, scope: scope))
        }
        var document = try NewDocument.clientFields(body)
        document["_acl"] = .object(try scope.updatedACL(existing: existing.acl, client: body["_acl"]))
        try store(layout, existing, id: id, &document, scope: scope)
        return (false, document.jsonText)
    }

    /// The row `id` if it exists and the caller may change it: the one read
    /// of a row before hooks see it. Throws 404 when the caller may not see
    /// it, 403 when they see it but may not write; nil when it does not exist.
    public func existingRow(in collection: String, id: String, scope: AccessScope) throws -> StoredRow? {
        guard let layout = try catalog.layout(collection) else {
            try scope.checkCollectionRead()
            return nil
        }
        return try writable(layout, id: id, scope: scope)
    }

    func writable(_ layout: CollectionLayout, id: String, scope: AccessScope) throws -> StoredRow? {
        try scope.checkCollectionRead()
        var params: [SQLValue] = [.text(id)]
        let bind = { (v: SQLValue) -> String in params.append(v); return "?\(params.count)" }
        let visible = scope.readPredicate(bind, layout: layout) ?? "1"
        let canWrite = scope.writePredicate(bind) ?? "1"
        let sql = "SELECT rid, created_at, doc, \(visible), \(canWrite), updated_at FROM \(layout.table) AS d WHERE d.id = ?1"
        guard let row = try db.prepare(sql).firstRow(params, { ($0.int(0), $0.text(1), $0.text(2), $0.int(3) != 0, $0.int(4) != 0, $0.text(5)) }) else {
            return nil
        }
        return try StoredRow.forWrite(id: id, in: layout.name, visible: row.3, writable: row.4, scope: scope,
                                      rowID: row.0, createdAt: row.1, updatedAt: row.5, text: row.2)
    }

    /// Applies an RFC 7396 merge patch to the document `id`.
    public func patch(in collection: String, id: String, _ patch: JSONObject, scope: AccessScope = .system) throws -> String {
        try self.patch(in: collection, id: id, patch, existing: try existingRow(in: collection, id: id, scope: scope), scope: scope)
    }

    /// `patch` for a row already read with `existingRow` (nil: 404).
    public func patch(in collection: String, id: String, _ patch: JSONObject, existing: StoredRow?, scope: AccessScope) throws -> String {
        guard let existing, let layout = try catalog.layout(collection) else {
            throw StoreError.notFound("No document with _id \"\(id)\" in \(collection).")
        }
        var document = try existing.patched(with: patch, id: id, scope: scope)
        try store(layout, existing, id: id, &document, scope: scope)
        return document.jsonText
    }

    /// Deletes the document `id` and its index entries.
    public func delete(from collection: String, id: String, scope: AccessScope = .system) throws {
        try delete(from: collection, id: id, existing: try existingRow(in: collection, id: id, scope: scope), scope: scope)
    }

    /// Deletes a row already read with `existingRow` (nil: 404).
    public func delete(from collection: String, id: String, existing: StoredRow?, scope: AccessScope) throws {
        guard let existing, let layout = try catalog.layout(collection) else {
            throw StoreError.notFound("No document with _id \"\(id)\" in \(collection).")
        }
        try scope.checkDelete(stored: existing.document)
        try db.prepare("DELETE FROM \(layout.table) WHERE rid = ?1").run([.int(existing.rowID)])
        try updateIndexEntries(layout, rowID: existing.rowID, from: existing.document, to: nil)
        try updateReferenceEntries(collection, id: id, from: existing.document, to: nil, scope: .system)
        try checkNotReferenced(collection, id: id)
        try recordChange(collection, id: id, .delete, previousText: existing.text)
    }

    /// Overwrites the stored row of `existing` with `document`, and moves its index entries.
    private func store(_ layout: CollectionLayout, _ existing: StoredRow, id: String, _ document: inout JSONObject, scope: AccessScope) throws {
        let now = try existing.prepareUpdate(&document, id: id, scope: scope)
        // After the rule: a caller it refuses hears 403, not which principals exist.
        try checkACLPrincipals(document, existing: existing.acl)
        if checksGeoPoints { try GeoPointCheck.check(document, previous: existing.document, paths: geoChecked(layout)) }
        try SchemaCheck.check(document, in: layout.name, schema: schemas(layout.name))
        let (stamp, bits) = stampValues(layout.name, document)
        try db.prepare("UPDATE \(layout.table) SET updated_at = ?1, doc = ?2, rs = ?4, rb = ?5 WHERE rid = ?3")
            .run([.text(now), .text(document.jsonText), .int(existing.rowID), stamp, bits])
        try updateIndexEntries(layout, rowID: existing.rowID, from: existing.document, to: document)
        try updateReferenceEntries(layout.name, id: id, from: existing.document, to: document, scope: scope)
        try recordChange(layout.name, id: id, .update, previousText: FeedPrevious.stored(before: existing, after: document))
    }
}

extension DocumentWriter {
    /// A fresh document id, as `insert` would make.
    public func newID() -> String { ids.next() }

    /// The stored JSON text of `id`, ignoring access rules (internal use).
    public func document(in collection: String, id: String) throws -> String? {
        guard let layout = try catalog.layout(collection) else { return nil }
        return try db.prepare("SELECT doc FROM \(layout.table) WHERE id = ?1").firstRow([.text(id)]) { $0.text(0) }
    }
}

extension DocumentWriter {
    /// The paths whose values must be points: the geo indexes written to and those declared but not built yet.
    func geoChecked(_ layout: CollectionLayout) -> Set<String> {
        Set(layout.maintainedGeoTables.keys).union(declaredGeoPaths(layout.name))
    }
}
