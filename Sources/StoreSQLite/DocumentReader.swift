import JSON
import Store

/// Runs reads on a query-only connection; one per reader thread.
public final class DocumentReader {
    let db: SQLiteConnection
    let catalog: Catalog
    let dialect: any SQLDialect = SQLiteDialect()
    /// The longest a list or count may run before it is stopped.
    public var timeLimit: Double = 10
    /// A `geo-walk` page first walks this many row ids (at least), or this
    /// many per row wanted, before it gathers the R*Tree's matches past them.
    public var geoWindowMinimum: Int64 = 4096
    public var geoWindowPerRow: Int64 = 64
    private var seal: CursorSeal?

    /// Seals and opens this database's feed cursors (its key, read once).
    public func cursorSeal() throws -> CursorSeal {
        if let seal { return seal }
        let loaded = try CursorSeal.load(db)
        seal = loaded
        return loaded
    }

    /// - Parameter neverWaits: for an event loop's own reader: a read that
    ///   would wait for a lock or the disk fails at once (`SQLiteConnection`).
    public init(path: String, neverWaits: Bool = false) throws {
        db = try SQLiteConnection(path: path, readOnly: true, neverWaits: neverWaits)
        catalog = Catalog(db: db)
    }

    /// Opens a read transaction that the reads after it join until
    /// `endSnapshot` (an event loop's reads of one turn): one snapshot, and
    /// the WAL's read lock (a mutex every connection of the process shares)
    /// taken once instead of once per read.
    public func beginSnapshot() throws {
        if !db.inTransaction { try db.prepare("BEGIN").run() }
    }

    /// Ends the read transaction `beginSnapshot` opened (nothing when none is open).
    public func endSnapshot() {
        if db.inTransaction { try? db.prepare("ROLLBACK").run() }
    }

    /// Reads on the writer's connection, inside its transaction (see `DocumentWriting.readerInTransaction`).
    init(sharing db: SQLiteConnection, catalog: Catalog) {
        self.db = db
        self.catalog = catalog
    }

    /// The JSON text of document `id`, or nil when it is absent or the
    /// caller may not read it.
    public func get(_ collection: String, id: String, scope: AccessScope = .system, redaction: Redaction? = nil) throws -> String? {
        try scope.checkCollectionRead()
        guard let layout = try catalog.layout(collection) else { return nil }
        var params: [SQLValue] = [.text(id)]
        let bind = { (v: SQLValue) -> String in params.append(v); return "?\(params.count)" }
        let visible = scope.readPredicate(bind, layout: layout).map { " AND \($0)" } ?? ""
        let select = redaction?.selectSQL(bind) ?? "d.doc"
        return try db.prepare("SELECT \(select) FROM \(layout.table) AS d WHERE d.id = ?1\(visible)").firstRow(params) { $0.text(0) }
    }

    /// The matching documents' JSON texts, in order.
    public func find(_ collection: String, _ query: FindQuery, scope: AccessScope = .system, redaction: Redaction? = nil) throws -> [String] {
        try page(collection, query, withTotal: false, scope: scope, redaction: redaction).documents
    }

    /// One page of matches, the cursor of the next page when this one is
    /// full, and, when asked, the total number of matches, all from one
    /// snapshot (the total agrees with the page).
    public func page(_ collection: String, _ query: FindQuery, withTotal: Bool, scope: AccessScope = .system,
                     redaction: Redaction? = nil) throws -> ListPage {
        try db.readTransaction {
            var page = try findInSnapshot(collection, query, scope: scope, redaction: redaction)
            page.total = withTotal ? try countInSnapshot(collection, filter: query.filter, scope: scope) : nil
            return page
        }
    }

    /// `find` inside a read transaction, so the plan's look-ups and the query see one snapshot.
    func findInSnapshot(_ collection: String, _ query: FindQuery, scope: AccessScope, redaction: Redaction?) throws -> ListPage {
        try scope.checkCollectionRead()
        guard let layout = try catalog.layout(collection) else {
            _ = try FilterCompiler(dialect: dialect).compile(query.filter) // still reject bad filters and cursors
            if let after = query.after { try KeysetCursor.check(token: after, seal: try cursorSeal()) }
            return ListPage(documents: [])
        }
        let plan = try listPlan(layout, query, scope: scope, redaction: redaction)
        return try db.withTimeLimit(timeLimit) { try run(plan, limit: query.limit, skip: query.skip) }
    }

    /// Runs `plan`'s segments in order until `limit` rows (after `skip`) are read.
    func run(_ plan: ListPlan, limit: Int, skip: Int) throws -> ListPage {
        var documents: [String] = []
        var distances: [Double]? = plan.distanceKey ? [] : nil
        var last: [SQLValue] = []
        var skipLeft = skip
        let limitParam = plan.params.count + 1
        for i in plan.segments.indices where documents.count < limit {
            let want = limit - documents.count
            if skipLeft > 0 && plan.segments.count > 1 && plan.strategy != .nearest {
                // Skip whole segments by counting them (at most `skipLeft` rows each).
                let condition = plan.segments[i].condition
                let n = Int(try db.prepare("SELECT count(*) FROM (SELECT 1 \(plan.from(i)) WHERE \(condition) LIMIT ?\(limitParam))")
                    .firstRow(plan.params + [.int(Int64(skipLeft))]) { $0.int(0) } ?? 0)
                if n < skipLeft { skipLeft -= n; continue }
            }
            let keyColumns = plan.keyColumns
            let rows = try db.prepare(plan.sql(i, limitParam: limitParam))
                .rows(plan.params + [.int(Int64(want)), .int(Int64(skipLeft))]) { row in
                    (row.text(0), (1...keyColumns).map { row.value(Int32($0)) })
                }
            if plan.strategy == .nearest {
                // Each step answers the whole page, or is too narrow and gives way to a wider one.
                guard rows.count == want || i == plan.segments.count - 1 else { continue }
            }
            skipLeft = 0
            documents += rows.map(\.0)
            if distances != nil {
                for row in rows {
                    guard case .double(let metres) = row.1[0], metres.isFinite else { distances = nil; break }
                    distances?.append(metres)
                }
            }
            if let tail = rows.last { last = tail.1 }
        }
        let next = documents.count == limit && limit > 0 ? KeysetCursor(order: plan.order, values: last).token(try cursorSeal()) : nil
        return ListPage(documents: documents, next: next, distances: distances)
    }

    /// How a list would be read: the strategy, and each statement with
    /// SQLite's plan for it (`?explain=true`, for operators).
    public func explain(_ collection: String, _ query: FindQuery, scope: AccessScope = .system) throws -> JSONValue {
        try scope.checkCollectionRead()
        guard let layout = try catalog.layout(collection) else { return .object(JSONObject([("strategy", .string("empty")), ("order", .string("")), ("statements", .array([]))])) }
        let plan = try listPlan(layout, query, scope: scope, redaction: nil)
        let limitParam = plan.params.count + 1
        let statements: [JSONValue] = try plan.segments.indices.map { i in
            let sql = plan.sql(i, limitParam: limitParam)
            let lines = try db.prepare("EXPLAIN QUERY PLAN " + sql).rows(plan.params + [.int(Int64(query.limit)), .int(0)]) { $0.text(3) }
            return .object(JSONObject([("sql", .string(sql)), ("plan", .array(lines.map { .string($0) }))]))
        }
        return .object(JSONObject([("strategy", .string(plan.strategy.rawValue)), ("order", .string(plan.order)), ("statements", .array(statements))]))
    }

    /// The number of documents matching `filter`.
    public func count(_ collection: String, filter: JSONValue, scope: AccessScope = .system) throws -> Int {
        try db.readTransaction { try countInSnapshot(collection, filter: filter, scope: scope) }
    }

    func countInSnapshot(_ collection: String, filter: JSONValue, scope: AccessScope) throws -> Int {
        try scope.checkCollectionRead()
        guard let layout = try catalog.layout(collection) else {
            _ = try FilterCompiler(dialect: dialect).compile(filter)
            return 0
        }
        let guarded = scope.hidesRows
        let compiler = makeCompiler(layout, guarded: guarded)
        let compiled = try compiler.compile(filter)
        let sql: String
        if let parts = compiled.indexOnly, !guarded {
            // Every condition is an index look-up and every row is visible:
            // count rids in the index without touching the documents. One
            // single-value look-up yields each rid once, and INTERSECT yields
            // distinct rids; only a lone multi-value look-up (an `$in` or a
            // range over an array field) can repeat a rid.
            let unique = compiled.streamable != nil || parts.count > 1
            sql = "SELECT count(\(unique ? "*" : "DISTINCT rid")) FROM (" + parts.joined(separator: " INTERSECT ") + ")"
        } else {
            let own = scope.visibleRows(layout, compiler.bind).map { "\($0) AND " } ?? ""
            sql = "SELECT count(*) FROM \(layout.table) AS d WHERE \(own)\(Self.visibleFirst(scope.readPredicate(compiler.bind, layout: layout), compiled.whereSQL))"
        }
        return Int(try db.withTimeLimit(timeLimit) { try db.prepare(sql).firstRow(compiler.params) { $0.int(0) } } ?? 0)
    }

    /// The WHERE clause of a read: the caller's filter is evaluated only on
    /// rows that pass `visible`. A CASE is evaluated in order whatever plan
    /// SQLite picks, so no condition, regex or error of the caller's can ever
    /// run on, or depend on, a row the caller may not read.
    static func visibleFirst(_ visible: String?, _ filter: String) -> String {
        guard let visible else { return filter }
        return "CASE WHEN \(visible) THEN (\(filter)) ELSE 0 END"
    }

    /// A compiler that asks this connection whether an index path is multikey.
    /// A `guarded` read (the caller sees only some rows) uses no index: an
    /// index look-up would compare the caller's values with every row's
    /// entries, visible or not.
    func makeCompiler(_ layout: CollectionLayout, guarded: Bool = false) -> FilterCompiler {
        let compiler = FilterCompiler(dialect: dialect, layout: layout)
        compiler.useIndexes = !guarded
        let db = self.db
        compiler.isMultikey = { path in
            do {
                return try db.prepare("SELECT 1 FROM \(layout.indexTable) WHERE path = ?1 AND k = 0").firstRow([.text(path)]) { _ in true } ?? false
            } catch {
                return true // when unsure, keep MongoDB's multikey semantics
            }
        }
        return compiler
    }

    /// The EXPLAIN QUERY PLAN lines of a find, for tests and operators.
    public func plan(_ collection: String, filter: JSONValue) throws -> [String] {
        guard let layout = try catalog.layout(collection) else { return [] }
        let compiler = makeCompiler(layout)
        let compiled = try compiler.compile(filter)
        return try db.prepare("EXPLAIN QUERY PLAN SELECT d.doc FROM \(layout.table) AS d WHERE \(compiled.whereSQL)")
            .rows(compiled.params) { $0.text(3) }
    }
}

extension DocumentReader {
    /// Every collection with its document count, by name.
    public func collectionSummaries() throws -> [(name: String, count: Int)] {
        let names = try db.prepare("SELECT name FROM _collections WHERE name <> 'users' ORDER BY name").rows { $0.text(0) }
        return try names.map { name in (name, try count(name, filter: .object(JSONObject()))) }
    }
}
