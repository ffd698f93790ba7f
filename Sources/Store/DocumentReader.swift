import JSON

/// Runs reads on a query-only connection; one per reader thread.
public final class DocumentReader {
    let db: SQLiteConnection
    let catalog: Catalog
    let dialect: any SQLDialect = SQLiteDialect()
    /// The longest a list or count may run before it is stopped.
    public var timeLimit: Double = 10

    public init(path: String) throws {
        db = try SQLiteConnection(path: path, readOnly: true)
        catalog = Catalog(db: db)
    }

    /// The JSON text of document `id`, or nil when it is absent or the
    /// caller may not read it.
    public func get(_ collection: String, id: String, scope: AccessScope = .system, redaction: Redaction? = nil) throws -> String? {
        try scope.checkCollectionRead()
        guard let layout = try catalog.layout(collection) else { return nil }
        var params: [SQLValue] = [.text(id)]
        let bind = { (v: SQLValue) -> String in params.append(v); return "?\(params.count)" }
        let visible = scope.readPredicate(bind).map { " AND \($0)" } ?? ""
        let select = redaction?.selectSQL(bind) ?? "d.doc"
        return try db.prepare("SELECT \(select) FROM \(layout.table) AS d WHERE d.id = ?1\(visible)").firstRow(params) { $0.text(0) }
    }

    /// The matching documents' JSON texts, in order.
    public func find(_ collection: String, _ query: FindQuery, scope: AccessScope = .system, redaction: Redaction? = nil) throws -> [String] {
        try page(collection, query, withTotal: false, scope: scope, redaction: redaction).documents
    }

    /// One page of matches and, when asked, the total number of matches,
    /// both from one snapshot (the total agrees with the page).
    public func page(_ collection: String, _ query: FindQuery, withTotal: Bool, scope: AccessScope = .system,
                     redaction: Redaction? = nil) throws -> (documents: [String], total: Int?) {
        try db.readTransaction {
            let documents = try findInSnapshot(collection, query, scope: scope, redaction: redaction)
            let total = withTotal ? try countInSnapshot(collection, filter: query.filter, scope: scope) : nil
            return (documents, total)
        }
    }

    /// `find` inside a read transaction, so the multikey check and the query see one snapshot.
    func findInSnapshot(_ collection: String, _ query: FindQuery, scope: AccessScope, redaction: Redaction?) throws -> [String] {
        try scope.checkCollectionRead()
        guard let layout = try catalog.layout(collection) else {
            _ = try FilterCompiler(dialect: dialect).compile(query.filter) // still reject bad filters
            return []
        }
        let compiler = makeCompiler(layout, guarded: scope.readPredicate({ _ in "" }) != nil)
        let filter = try compiler.compile(query.filter)
        var orderBy: [String] = []
        if let near = filter.nearestFirst, query.sort.isEmpty { orderBy.append("\(near) ASC") }
        for key in query.sort { orderBy.append(contentsOf: sortTerms(key.field, ascending: key.ascending, compiler)) }
        orderBy.append("d.rid ASC")
        let visible = scope.readPredicate(compiler.bind)
        let document = redaction?.selectSQL(compiler.bind) ?? "d.doc"
        let select: String
        if let fields = query.fields {
            let names = (["_id"] + fields).map { compiler.bind(.text($0)) }.joined(separator: ",")
            select = "(SELECT json_group_object(key, CASE type WHEN 'true' THEN json('true') WHEN 'false' THEN json('false') ELSE value END) FROM json_each(\(document)) WHERE key IN (\(names)))"
        } else {
            select = document
        }
        let limit = compiler.bind(.int(Int64(query.limit)))
        let offset = compiler.bind(.int(Int64(query.skip)))
        let sql: String
        if visible == nil, let driver = filter.streamable, query.sort.isEmpty, filter.nearestFirst == nil {
            // Walk the index in row order and stop at the limit.
            sql = "SELECT \(select) FROM (\(driver)) AS m JOIN \(layout.table) AS d ON d.rid = m.rid ORDER BY m.rid LIMIT \(limit) OFFSET \(offset)"
        } else {
            sql = "SELECT \(select) FROM \(layout.table) AS d WHERE \(Self.visibleFirst(visible, filter.whereSQL)) ORDER BY \(orderBy.joined(separator: ", ")) LIMIT \(limit) OFFSET \(offset)"
        }
        return try db.withTimeLimit(timeLimit) { try db.prepare(sql).rows(compiler.params) { $0.text(0) } }
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
        let guarded = scope.readPredicate({ _ in "" }) != nil
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
            sql = "SELECT count(*) FROM \(layout.table) AS d WHERE \(Self.visibleFirst(scope.readPredicate(compiler.bind), compiled.whereSQL))"
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

    /// MongoDB's sort order across types: null and missing, numbers, strings,
    /// objects, arrays, booleans; then the value within its type.
    func sortTerms(_ field: String, ascending: Bool, _ compiler: FilterCompiler) -> [String] {
        let direction = ascending ? "ASC" : "DESC"
        switch field {
        case "_id": return ["d.id \(direction)"]
        case "_createdAt": return ["d.created_at \(direction)"]
        case "_updatedAt": return ["d.updated_at \(direction)"]
        default:
            let path = compiler.bind(.text(SQLiteDialect.jsonPath(field.split(separator: ".").map { .key(String($0)) })))
            let bracket = "CASE json_type(d.doc, \(path)) WHEN 'integer' THEN 2 WHEN 'real' THEN 2 WHEN 'text' THEN 3 WHEN 'object' THEN 4 WHEN 'array' THEN 5 WHEN 'false' THEN 6 WHEN 'true' THEN 6 ELSE 1 END"
            return ["\(bracket) \(direction)", "json_extract(d.doc, \(path)) \(direction)"]
        }
    }
}

extension DocumentReader {
    /// Every collection with its document count, by name.
    public func collectionSummaries() throws -> [(name: String, count: Int)] {
        let names = try db.prepare("SELECT name FROM _collections WHERE name <> 'users' ORDER BY name").rows { $0.text(0) }
        return try names.map { name in (name, try count(name, filter: .object(JSONObject()))) }
    }
}
