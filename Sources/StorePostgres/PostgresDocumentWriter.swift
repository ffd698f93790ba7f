import Schema
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
    /// The running batch operation's index (-1 outside `commitBatch`).
    var operation = -1
    /// The running operation's part (`holdWrites`), or -1.
    var part = -1
    /// Creates held back until the next statement or the batch's end (`+HeldInserts`).
    var held: [HeldInsert] = []
    /// Operations of the open batch whose held create was refused, with why.
    var heldFailures: [Int: any Error] = [:]
    /// Set when held rows of finished operations could not be sent: the batch fails.
    var heldRowsLost: (any Error)?
    /// Time spent sending held rows, on whoever's behalf (hooks do not count it as theirs).
    public internal(set) var heldSendingTime: Duration = .zero
    /// How commits order their change rows; `.none` exists only to show, in
    /// a test, the gap the lock prevents.
    var feedOrdering = FeedOrdering.advisoryLock
    /// Called after a batch wrote its change rows, just before COMMIT (tests hold a commit open here).
    var beforeCommit: (() -> Void)?
    /// `hasSubscribers` answers by event type, kept for the open batch only (nil outside one).
    var subscribers: [String: Bool]?
    /// The declared reference fields whose `_refs` rows every write keeps in step.
    public internal(set) var references = ReferenceSchema.none
    /// The "no reference left" guard of deletes, deferred through a cascade.
    let referenceChecks = ReferenceChecks()
    /// Each collection's JSON Schema (`useSchemas`).
    var schemas: @Sendable (String) -> JSONSchema? = { _ in nil }
    /// Each collection's declared geo-indexed paths (`useDeclaredGeoPaths`).
    var declaredGeoPaths: @Sendable (String) -> [String] = { _ in [] }
    /// Each table's geo-indexed paths (`GeoPointCheck`), read once; index changes forget them.
    var geoPaths: [Int64: [String]] = [:]
    var geoPathsGeneration = CatalogGeneration.current
    /// Who this node's thumbnail-job claims are made as (`PostgresNode.id`; tests set one per connection).
    public var jobWorker = PostgresNode.id
    /// Seconds a thumbnail job claimed at upload stays this node's unless renewed (`PostgresNode.defaultLease`).
    public var claimLease: Double = PostgresNode.defaultLease
    /// Creates per table, for ANALYZE after bulk loads (`+Statistics`).
    var growth = TableGrowth()
    /// Runs those ANALYZEs off this connection and thread (the engine gives
    /// it a URL named `roostd-analyze`; its connection opens at the first one).
    var analyzer: PostgresAnalyzer

    public init(url: String, ids: DocumentID, logger: Logger) throws {
        db = try PGConnection(url: url)
        analyzer = PostgresAnalyzer(url: url, logger: logger)
        catalog = PostgresCatalog(db: db)
        self.ids = ids
        self.logger = logger
        db.beforeStatement = { [unowned self] opensTransaction in try sendHeldInserts(opensTransaction: opensTransaction) }
    }

    /// This node's name: `recordAttempt` counts only deliveries it still holds.
    public var nodeID = PostgresNode.id

    /// Applies pending migrations (one node at a time).
    public func migrate() throws { try PostgresMigrations.apply(on: db, logger: logger) }

    /// Runs `operations` in one transaction and returns each one's outcome
    /// after the commit. An operation that fails is undone alone (its
    /// savepoint); a failed commit fails them all. BEGIN, each savepoint and
    /// the batch's end (feed lock, change rows, NOTIFY, COMMIT) travel with
    /// the statements that need answers (`PGConnection+Transaction`).
    public func commitBatch<T>(_ operations: [(PostgresDocumentWriter) throws -> T]) -> [Result<T, any Error>] {
        pendingChanges = []
        (held, heldFailures, heldRowsLost) = ([], [:], nil)
        // Endpoints committed by another node since the last batch are seen by this one.
        subscribers = [:]
        defer { (subscribers, operation, part, held, heldFailures, heldRowsLost) = (nil, -1, -1, [], [:], nil) }
        var results: [Result<T, any Error>] = []
        do {
            try db.transaction {
                for (index, run) in operations.enumerated() {
                    (operation, part) = (index, -1)
                    let result = Result {
                        try db.transaction {
                            let outcome = Result { try run(self) }
                            // Its held create, sent by a later statement of its own, was refused:
                            // that is its outcome, whatever happened after the create.
                            if let refused = heldFailures[index] { throw refused }
                            return try outcome.get()
                        }
                    }.mapError { ($0 as? PGError)?.storeError ?? $0 }
                    if case .failure = result {
                        pendingChanges.removeAll { $0.operation == index }
                        held.removeAll { $0.operation == index }
                        catalog.forgetAll()
                        subscribers = [:]
                    }
                    results.append(result)
                }
                (operation, part) = (-1, -1)
                try sendHeldInserts(opensTransaction: false)
                if let heldRowsLost { throw heldRowsLost }
                for (index, refused) in heldFailures where results.indices.contains(index) {
                    if case .success = results[index] { results[index] = .failure(refused) }
                }
                if operations.count == 1, case .failure(let error) = results[0] { throw error }
                try writePendingChanges()
                if let beforeCommit {
                    try db.flush()  // the feed lock taken and the rows written before the hook runs
                    beforeCommit()
                }
            }
        } catch {
            catalog.forgetAll()
            pendingChanges = []
            if operations.count == 1, case .failure? = results.first { return results }
            return operations.map { _ in .failure(Self.wrap(error)) }
        }
        analyzeGrownTables()
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
        try checkACLPrincipals(new.document, existing: nil)
        let (id, now, document) = (new.id, new.now, new.document)
        let layout = try catalog.ensure(collection)
        try GeoPointCheck.check(document, previous: nil, paths: try geoIndexed(layout).union(declaredGeoPaths(collection)))
        try SchemaCheck.check(document, in: collection, schema: schemas(collection))
        let text = document.jsonText
        growth.add(layout.table)
        // An id already held goes the direct way, after the held rows: the server decides (bytes, not Unicode equivalence).
        if mayHoldInsert, !held.contains(where: { $0.table == layout.table && $0.id.utf8.elementsEqual(id.utf8) }) {
            held.append(HeldInsert(operation: operation, part: part, table: layout.table, collection: collection, id: id, now: now, text: text))
        } else {
            // ON CONFLICT keeps the transaction alive: a taken id is an answer, not an abort.
            let inserted = try db.first("INSERT INTO \(layout.table) (id, created_at, updated_at, doc) VALUES ($1::text, $2::text, $2::text, $3::json) ON CONFLICT (id) DO NOTHING RETURNING rid",
                                        [.text(id), .text(now), .text(text)]) { $0.int(0) }
            guard inserted != nil else { throw Self.taken(id, in: collection) }
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
        return try StoredRow.forWrite(id: id, in: collection, visible: row.4, writable: row.5, scope: scope,
                                      rowID: row.0, createdAt: row.1, updatedAt: row.2, text: row.3)
    }

    /// `patch` for a row already read with `existingRow` (nil: 404); it
    /// fails with a conflict if the row changed since that read.
    public func patch(in collection: String, id: String, _ patch: JSONObject, existing: StoredRow?, scope: AccessScope) throws -> String {
        guard let existing else {
            throw StoreError.notFound("No document with _id \"\(id)\" in \(collection).")
        }
        var document = try existing.patched(with: patch, id: id, scope: scope)
        try store(collection, existing, id: id, &document, scope: scope)
        return document.jsonText
    }

    /// Deletes a row already read with `existingRow` (nil: 404); the access
    /// check was that read's. It fails with a conflict if the row changed since.
    public func delete(from collection: String, id: String, existing: StoredRow?, scope: AccessScope) throws {
        guard let existing, let layout = try catalog.layout(collection) else {
            throw StoreError.notFound("No document with _id \"\(id)\" in \(collection).")
        }
        try scope.checkDelete(stored: existing.document)
        let deleted = try db.query("DELETE FROM \(layout.table) AS d WHERE d.rid = $1::bigint AND d.updated_at = $2::text RETURNING 1",
                                   [.int(existing.rowID), .text(existing.updatedAt)]) { _ in () }
        guard !deleted.isEmpty else { throw Self.changedMeanwhile(id) }
        try updateReferenceEntries(collection, id: id, from: existing.document, to: nil, scope: .system)
        try checkNotReferenced(collection, id: id)
        recordChange(collection, id: id, .delete, previousText: existing.text)
    }

    /// Overwrites `existing` with `document` if the row still holds what was read.
    func store(_ collection: String, _ existing: StoredRow, id: String, _ document: inout JSONObject, scope: AccessScope) throws {
        guard let layout = try catalog.layout(collection) else { throw StoreError.notFound("No collection \(collection).") }
        let now = try existing.prepareUpdate(&document, id: id, scope: scope)
        // After the rule: a caller it refuses hears 403, not which principals exist.
        try checkACLPrincipals(document, existing: existing.acl)
        try GeoPointCheck.check(document, previous: existing.document, paths: try geoIndexed(layout).union(declaredGeoPaths(collection)))
        try SchemaCheck.check(document, in: collection, schema: schemas(collection))
        let params = ParameterList([.text(now), .text(document.jsonText), .int(existing.rowID), .text(existing.updatedAt)])
        let canWrite = PostgresAccess.sql(scope.writeRule, params.bind).map { " AND \($0)" } ?? ""
        let updated = try db.query("UPDATE \(layout.table) AS d SET updated_at = $1::text, doc = $2::json WHERE d.rid = $3::bigint AND d.updated_at = $4::text\(canWrite) RETURNING 1",
                                   params.values) { _ in () }
        guard !updated.isEmpty else { throw Self.changedMeanwhile(id) }
        try updateReferenceEntries(collection, id: id, from: existing.document, to: document, scope: scope)
        recordChange(collection, id: id, .update, previousText: FeedPrevious.stored(before: existing, after: document))
    }

    /// Another writer (another node) changed or removed the row between this write's read and its update.
    static func changedMeanwhile(_ id: String) -> StoreError {
        .conflict("The document \"\(id)\" changed while this write was made; read it again and retry.")
    }

    /// A fresh document id, as `insert` would make.
    public func newID() -> String { ids.next() }
}

extension PostgresDocumentWriter {
    /// The geo-indexed paths of `layout`'s collection.
    func geoIndexed(_ layout: CollectionLayout) throws -> Set<String> {
        let generation = CatalogGeneration.current
        if generation != geoPathsGeneration { geoPaths = [:]; geoPathsGeneration = generation }
        if let known = geoPaths[layout.tableID] { return Set(known) }
        let paths = try db.query("SELECT path FROM _indexes WHERE collection_id = $1::bigint AND kind = 'geo'", [.int(layout.tableID)]) { $0.text(0) ?? "" }
        geoPaths[layout.tableID] = paths
        return Set(paths)
    }
}
