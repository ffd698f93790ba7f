import JSON
import Store

/// Reads on PostgreSQL, one connection per reader thread, with the same
/// methods, answers and errors as `DocumentReader`: get, find, page (with
/// the total from the same snapshot), count, and the change feed.
///
/// Access rules are inside the SQL exactly as on SQLite: a row the caller
/// may not read is filtered before the caller's filter and sort see it
/// (`PostgresAccess.visibleFirst`).
public final class PostgresDocumentReader {
    let db: PGConnection
    let catalog: PostgresCatalog
    /// This node's name on the webhook deliveries it claims; the same as its writer's `nodeID`.
    public var nodeID = PostgresNode.id
    /// Seconds a claim (a delivery, a thumbnail job) stays this node's unless renewed (`PostgresNode.defaultLease`).
    public var claimLease: Double = PostgresNode.defaultLease
    let dialect = PostgresDialect()
    /// The longest a list or count may run before it is stopped (`statement_timeout`).
    public var timeLimit: Double = 10
    /// How each list shape's total was last counted, and how big it was.
    var listTotals = PostgresListTotals()
    /// Who this node's thumbnail-job claims are made as (`PostgresNode.id`; tests set one per connection).
    public var jobWorker = PostgresNode.id
    /// The feed cursors' seal, read once (`cursorSeal()`).
    var seal: CursorSeal?
    /// Each collection table's declared value-index paths (`valueIndexFields`).
    var valueIndexes: [Int64: Set<String>] = [:]
    /// Points tables whose k-nearest index this connection has seen built (it is never dropped
    /// while its geo index stands; an index id is never reused).
    var nearestIndexes: Set<String> = []
    /// `table.field` seen holding an array: lists on it are compiled generically (`PostgresKeyConditions`).
    var arrayFields: Set<String> = []

    public init(url: String) throws {
        db = try PGConnection(url: url)
        catalog = PostgresCatalog(db: db)
        // Paths are literals in the statement (`PostgresDialect.keySQL`), so a
        // generic plan uses the declared indexes and planning is not paid per
        // request. No JIT: a filter's large expressions cost seconds to compile (11 s
        // for one differential filter on 300 rows) and run in milliseconds.
        try db.execute("SET jit = off")
    }

    /// Reads on the writer's connection, inside its transaction (scripts' before hooks).
    init(sharing db: PGConnection, catalog: PostgresCatalog) {
        self.db = db
        self.catalog = catalog
    }

    /// The JSON text of document `id`, or nil when it is absent or the caller
    /// may not read it; `redaction`'s fields removed as on SQLite.
    public func get(_ collection: String, id: String, scope: AccessScope = .system, redaction: Redaction? = nil) throws -> String? {
        try scope.checkCollectionRead()
        // PostgreSQL's text holds no NUL, so no row has such an id: 404 as on SQLite, not a 400.
        guard !id.utf8.contains(0), let layout = try catalog.layout(collection) else { return nil }
        let params = ParameterList([.text(id)])
        let visible = PostgresAccess.sql(scope.readRule, params.bind).map { " AND \($0)" } ?? ""
        let text: String?? = try db.first("SELECT d.doc::text FROM \(layout.table) AS d WHERE d.id = $1::text\(visible)", params.values) { $0.text(0) }
        return (text ?? nil).map { redaction?.applied(to: $0) ?? $0 }
    }

    /// The matching documents' JSON texts, in order.
    public func find(_ collection: String, _ query: FindQuery, scope: AccessScope = .system, redaction: Redaction? = nil) throws -> [String] {
        try page(collection, query, withTotal: false, scope: scope, redaction: redaction).documents
    }

    /// One page of matches, the cursor of the next page when this one is
    /// full, and, when asked, the total number of matches, from one snapshot.
    public func page(_ collection: String, _ query: FindQuery, withTotal: Bool, scope: AccessScope = .system,
                     redaction: Redaction? = nil) throws -> ListPage {
        try scope.checkCollectionRead()
        return try snapshot {
            var page = try findInSnapshot(collection, query, scope: scope, withTotal: withTotal)
            if let redaction { page.documents = page.documents.map(redaction.applied) }
            return page
        }
    }

    /// The number of documents matching `filter` that the caller may read.
    public func count(_ collection: String, filter: JSONValue, scope: AccessScope = .system) throws -> Int {
        try scope.checkCollectionRead()
        return try snapshot { try countInSnapshot(collection, filter: filter, scope: scope) }
    }

    func countInSnapshot(_ collection: String, filter: JSONValue, scope: AccessScope) throws -> Int {
        let layout = try catalog.layout(collection)
        guard let layout else {
            _ = try makeCompiler(nil).compile(filter)
            return 0
        }
        useGenericPlans()
        // Key conditions where they are exact (`PostgresKeyConditions`): a count of 0
        // behind a gate is counted again generically when arrays closed the gate.
        while true {
            let used = KeyedFields()
            let compiled = try makeListCompiler(layout, keyFields: try keyFields(layout, scope: scope, filter: filter), used: used).compile(filter)
            let params = ParameterList(compiled.params)
            let visible = PostgresAccess.sql(scope.readRule, params.bind)
            let gates = used.fields.sorted().map { PostgresKeyConditions.gate(table: layout.table, field: $0) + " AND " }.joined()
            let sql = "SELECT count(*) FROM \(layout.table) AS d WHERE \(gates)\(PostgresAccess.visibleFirst(visible, compiled.whereSQL))"
            let count: Int64 = try db.first(sql, params.values) { $0.int(0) ?? 0 } ?? 0
            if count == 0, !used.fields.isEmpty, try foundArrays(layout, used.fields) { continue }
            return Int(count)
        }
    }

    /// `body` in a read-only snapshot with the time limit. BEGIN and the
    /// limit go to the server with the body's first statement, in one
    /// exchange; COMMIT is sent and not waited for.
    func snapshot<T>(_ body: () throws -> T) throws -> T {
        do {
            return try db.transaction(begin: "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", waitForCommit: false) {
                db.deferTimeLimit(seconds: timeLimit)
                return try body()
            }
        } catch let error as PGError {
            throw error.storeError
        }
    }
}
