import JSON
import Store

/// One column of a list's order and its SQL type (for the `after` cursor's parameters).
struct PostgresOrderColumn {
    enum Kind { case int, numeric, text }
    let sql: String
    let kind: Kind
    let ascending: Bool
}

/// Lists on PostgreSQL: one statement per page (a scan; index walks are
/// not built yet), in MongoDB's order across types exactly as SQLite sorts:
/// a type bracket (null and missing, numbers, strings, objects, arrays,
/// booleans), then numbers by value, then strings byte by byte and
/// containers by their stored JSON text, then the row id.
extension PostgresDocumentReader {
    /// One page of `query` and, with `withTotal`, the number of all matches:
    /// counted by the page's own scan when its shape matched few rows last
    /// time (`PostgresListTotals`) and the page can tell, else by a count of
    /// its own in the same snapshot.
    func findInSnapshot(_ collection: String, _ query: FindQuery, scope: AccessScope, withTotal: Bool = false) throws -> ListPage {
        let layout = try catalog.layout(collection)
        guard let layout else {
            _ = try makeCompiler(nil).compile(query.filter)
            if let after = query.after { try KeysetCursor.check(token: after, seal: try cursorSeal()) }
            return ListPage(documents: [], total: withTotal ? 0 : nil)
        }
        useGenericPlans()
        var statement: PostgresListStatement
        var total: Int64?
        var rows: [(String, [SQLValue])]
        var boxWalk = true
        while true {
            statement = try listStatement(layout, query, scope: scope, withTotal: withTotal, boxWalk: boxWalk)
            let columns = statement.columns, countsTotal = statement.countsTotal
            // Marked large until the page succeeds: one stopped at its time limit
            // while counting in its scan leaves the shape to be counted apart next.
            if countsTotal { listTotals.record(statement.shape, total: .max) }
            rows = try db.query(statement.sql, statement.params) { row -> (String, [SQLValue]) in
                let values = columns.indices.map { i -> SQLValue in
                    guard let text = row.text(i + 1) else { return .null }
                    switch columns[i].kind {
                    case .int: return Int64(text).map { .int($0) } ?? .null
                    case .numeric, .text: return .text(text)
                    }
                }
                if countsTotal { total = row.int(columns.count + 1) }
                return (row.text(0) ?? "{}", values)
            }
            // The box's matches were too sparse for the walk's budget: gather them through the geo index.
            if statement.walkBudget != nil, rows.count < query.limit {
                boxWalk = false
                continue
            }
            // No row behind a gate: if arrays closed it, read the list again without key conditions on them.
            if try rows.isEmpty && !statement.gated.isEmpty && foundArrays(layout, statement.gated) { continue }
            break
        }
        // A page cut short by the last match tells the total itself (but not
        // one that starts past every match, nor limit 0: no row to tell by).
        if statement.readsEveryMatch, query.limit > 0, rows.count < query.limit, !rows.isEmpty || query.skip == 0 {
            total = Int64(query.skip + rows.count)
        }
        let next = rows.count == query.limit && query.limit > 0 ? try rows.last.map { KeysetCursor(order: statement.order, values: $0.1).token(try cursorSeal()) } : nil
        var page = ListPage(documents: rows.map(\.0), next: next)
        if withTotal {
            let counted = try total.map { Int($0) } ?? countInSnapshot(collection, filter: query.filter, scope: scope)
            listTotals.record(statement.shape, total: counted)
            page.total = counted
        }
        return page
    }

    /// The statement that reads one page of `query`. A nearest-first list
    /// runs its probe first (`nearestBound`), recorded in `probe`. With
    /// `withTotal`, its last column counts every match before LIMIT and
    /// OFFSET (`count(*) OVER ()`) when `listTotals` says the shape matched
    /// few rows, unless its condition is narrower than the filter: an
    /// `after` cursor's keyset or a nearest-first bound.
    func listStatement(_ layout: CollectionLayout, _ query: FindQuery, scope: AccessScope, withTotal: Bool = false,
                       boxWalk: Bool = false) throws -> PostgresListStatement {
        if boxWalk, let walk = try boxWalkStatement(layout, query, scope: scope) { return walk }
        let used = KeyedFields()
        let compiled = try makeListCompiler(layout, keyFields: try keyFields(layout, scope: scope, filter: query.filter), used: used).compile(query.filter)
        return try listStatement(layout, compiled, query, scope: scope, withTotal: withTotal, keyed: used.fields)
    }

    /// The statement of `compiled`, whose key conditions (`PostgresKeyConditions`)
    /// name the fields `keyed`: each gets its gate.
    func listStatement(_ layout: CollectionLayout, _ compiled: CompiledFilter, _ query: FindQuery,
                       scope: AccessScope, withTotal: Bool = false, keyed: Set<String> = [],
                       walk: PostgresBoxWalk? = nil) throws -> PostgresListStatement {
        let params = ParameterList(compiled.params)
        // Unsorted, a $nearSphere orders by its exact distance (as on SQLite), then the row.
        let near = query.sort.isEmpty ? compiled.nearestFirst : nil
        // Unsorted, a filter whose only indexed condition is a range on a top-level
        // field lists in that field's order (as on SQLite), so the page is a walk of
        // its index; in row order while the field holds an array (no key condition).
        let candidate = query.sort.isEmpty && near == nil
            ? PostgresKeyConditions.rangeField(query.filter, indexed: try valueIndexFields(layout)).flatMap { $0.contains(".") ? nil : $0 } : nil
        var rangeField = candidate.flatMap { keyed.contains($0) ? $0 : nil }
        if let candidate, let token = query.after {
            // A cursor names its order: its next page keeps it, even if an array came
            // or went at that field since (the field's order is exact generically too).
            let seal = try cursorSeal()
            if (try? KeysetCursor(token: token, order: "~\(candidate):1", count: 4, seal: seal)) != nil {
                rangeField = candidate
            } else if (try? KeysetCursor(token: token, order: "", count: 1, seal: seal)) != nil {
                rangeField = nil
            }
        }
        let sort: [(field: String, ascending: Bool)] = rangeField.map { [(field: $0, ascending: true)] } ?? query.sort
        let keys = near.map { [PostgresOrderColumn(sql: $0, kind: .numeric, ascending: true)] }
            ?? sort.flatMap { Self.orderColumns($0.field, ascending: $0.ascending, params.bind) }
        // A row-order list of a box walks its points table (`PostgresBoxWalk`), in the walk's row order
        // (`m.rid`), but only so far: a page not filled there is read again by the geo index
        // (`findInSnapshot`). Never where rows are hidden: visibility decides first there, and
        // how far a walk went must not depend on unreadable rows.
        var walking: PostgresBoxWalk?
        if let walk, near == nil, rangeField == nil, query.sort.isEmpty, query.limit > 0, case .all = scope.readRule { walking = walk }
        let columns = keys + [PostgresOrderColumn(sql: walking == nil ? "d.rid" : "m.rid", kind: .int, ascending: sort.first?.ascending ?? true)]
        let order = near != nil ? "~near" : rangeField.map { "~\($0):1" }
            ?? query.sort.map { "\($0.field):\($0.ascending ? 1 : -1)" }.joined(separator: ",")
        var keyset = ""
        var afterRow: SQLValue?
        if let token = query.after {
            let cursor = try KeysetCursor(token: token, order: order, count: columns.count, seal: try cursorSeal())
            keyset = " AND " + (try Self.after(columns, cursor.values, params.bind, rowWise: near == nil))
            afterRow = cursor.values.last
        }
        let visible = PostgresAccess.sql(scope.readRule, params.bind)
        // Where rows are hidden, each caller's lists are counted by their own history.
        let caller: String? = scope.hidesRows ? "\(scope.principal.userID ?? "")\u{1}\(scope.roles.joined(separator: ","))" : nil
        let shape = PostgresListTotals.shape(table: layout.table, condition: PostgresAccess.visibleFirst(visible, compiled.whereSQL), caller: caller)
        let gates = keyed.sorted().map { PostgresKeyConditions.gate(table: layout.table, field: $0) + " AND " }.joined()
        var condition = gates + PostgresAccess.visibleFirst(visible, "(\(compiled.whereSQL))\(keyset)")
        var probe: PostgresListStatement.Probe?
        var bounded = false
        if let near, visible == nil, let point = compiled.nearPoint {
            let wanted = query.skip > Int.max - query.limit ? Int.max : query.limit + query.skip
            if let bound = try nearestBound(layout, point, distance: near, condition: condition, params: params, wanted: wanted, probe: &probe) {
                condition += " AND \(bound)"
                bounded = true
            }
        }
        let from = walking?.from(table: layout.table, after: afterRow, params.bind) ?? "\(layout.table) AS d"
        let budgeted = walking?.budget
        // Bound after the nearest probe, which copies the parameters so far and must use each one.
        /// The answer's text of the row `alias`: the document, or its `fields`.
        var selectOf: (String) -> String = { "\($0).doc::text" }
        if let fields = query.fields {
            let names = (["_id"] + fields).map { params.bind(.text($0)) }.joined(separator: ",")
            selectOf = { "(SELECT '{' || string_agg(to_json(f.key)::text || ':' || f.value::text, ',' ORDER BY f.n) || '}'"
                + " FROM json_each(\($0).doc) WITH ORDINALITY AS f(key, value, n) WHERE f.key IN (\(names)))" }
        }
        let select = selectOf("d")
        let orderBy = columns.map { "\($0.sql) \($0.ascending ? "ASC" : "DESC")" }.joined(separator: ", ")
        let limit = params.bind(.int(Int64(query.limit))), skip = params.bind(.int(Int64(query.skip)))
        let readsEveryMatch = query.after == nil && !bounded && budgeted == nil
        let countsTotal = withTotal && readsEveryMatch && listTotals.countsInScan(shape)
        let page = "ORDER BY \(orderBy) LIMIT \(limit) OFFSET \(skip)"
        let sql: String
        if query.skip > 0, !countsTotal, probe == nil {
            // A deferred join: the skipped rows are read for their order keys only (the walk, or an
            // index-only scan of the primary key), and only the page's rows are fetched whole, each
            // by a subquery on its row id (a join could be planned as a hash join reading the whole
            // table, the generic plan knowing no LIMIT). The inner statement holds the whole
            // condition (visibility first), so it picks exactly the rows the one-statement page
            // would, in the same snapshot and order.
            let keys = columns.indices.map { "p.k\($0)" }
            let outerOrder = zip(columns, keys).map { "\($1) \($0.ascending ? "ASC" : "DESC")" }.joined(separator: ", ")
            sql = "SELECT (SELECT \(selectOf("w")) FROM \(layout.table) AS w WHERE w.rid = p.k\(columns.count - 1)), \(keys.joined(separator: ", "))"
                + " FROM (SELECT \(columns.enumerated().map { "\($1.sql) AS k\($0)" }.joined(separator: ", ")) FROM \(from)"
                + " WHERE \(condition) \(page)) AS p ORDER BY \(outerOrder)"
        } else {
            sql = "SELECT \(select), \(columns.map(\.sql).joined(separator: ", "))\(countsTotal ? ", count(*) OVER ()" : "") FROM \(from)"
                + " WHERE \(condition) \(page)"
        }
        return PostgresListStatement(sql: sql, params: params.values, columns: columns, order: order, probe: probe,
                                     shape: shape, readsEveryMatch: readsEveryMatch, countsTotal: countsTotal, gated: keyed,
                                     walkBudget: budgeted)
    }

    /// The order columns of one sort key: a built-in column, or a field's
    /// bracket, number and text (a declared index stores the same three, see
    /// `PostgresDocumentWriter+Indexes`). `document` is the `json` column's
    /// name; types, numbers and strings are read from its `jsonb` twin
    /// (`PostgresDialect.binaryBase`), a container's text from `json`.
    static func orderColumns(_ field: String, ascending: Bool, document: String = "d.doc",
                             _ bind: (SQLValue) -> String) -> [PostgresOrderColumn] {
        let dialect = PostgresDialect()
        switch field {
        case "_id": return [.init(sql: "d.id", kind: .text, ascending: ascending)]
        case "_createdAt": return [.init(sql: "d.created_at", kind: .text, ascending: ascending)]
        case "_updatedAt": return [.init(sql: "d.updated_at", kind: .text, ascending: ascending)]
        default:
            // As SQLite's `$."a"."b"`: each part a member name, never an array position.
            let ref = ValueRef.path(base: document, steps: field.split(separator: ".").map { .key(String($0)) })
            let json = dialect.json(ref, bind: bind), stored = dialect.text(ref, bind: bind)
            let type = "(\(PostgresDialect.type(ofJSON: json)))"
            let bracket = "CASE \(type) WHEN 'number' THEN 2 WHEN 'string' THEN 3 WHEN 'object' THEN 4 WHEN 'array' THEN 5 WHEN 'true' THEN 6 WHEN 'false' THEN 6 ELSE 1 END"
            // Never NULL (0 and '' outside their bracket, where they are constant): a keyset
            // page compares the row `(bracket, number, text, rid)` as one index condition.
            let number = "coalesce(\(dialect.numberOf(json)), 0)"
            let text = "(coalesce(CASE \(type) WHEN 'string' THEN \(json) #>> '{}' WHEN 'object' THEN \(stored)::text WHEN 'array' THEN \(stored)::text"
                + " WHEN 'true' THEN 'true' WHEN 'false' THEN 'false' END, '') COLLATE \"C\")"
            return [.init(sql: bracket, kind: .int, ascending: ascending), .init(sql: number, kind: .numeric, ascending: ascending),
                    .init(sql: text, kind: .text, ascending: ascending)]
        }
    }

    /// Rows strictly after the cursor's position in the columns' own
    /// directions. Each value must have its column's type, or the cursor is
    /// refused (400), never sent to the database to fail there.
    /// With `rowWise`, columns of one direction and no NULL in the cursor,
    /// one row comparison `(c1, …, cn) > (v1, …, vn)`: the same rows, and
    /// an index on the columns starts its walk there.
    static func after(_ columns: [PostgresOrderColumn], _ values: [SQLValue], _ bind: (SQLValue) -> String,
                      rowWise: Bool = false) throws(QueryError) -> String {
        let refusal = QueryError.invalid("after is not a cursor of this list's order; start again without after (or with the same sort and query).")
        var marks: [String] = []
        for (column, value) in zip(columns, values) {
            switch (column.kind, value) {
            // A cursor made before a field's number and text became never NULL
            // (coalesce(…, 0) and '', migration 8) holds NULL there: the same key now.
            case (.numeric, .null) where rowWise: marks.append("\(bind(.text("0")))::numeric")
            case (.text, .null) where rowWise: marks.append(bind(.text("")))
            case (_, .null): marks.append("NULL")
            case (.int, .int): marks.append(bind(value))
            case (.numeric, .text(let s)) where Double(s)?.isFinite == true && s.allSatisfy({ "0123456789.-+eE".contains($0) }):
                marks.append("\(bind(value))::numeric")
            case (.text, .text): marks.append(bind(value))
            default: throw refusal
            }
        }
        if rowWise, let first = columns.first, columns.allSatisfy({ $0.ascending == first.ascending }), !marks.contains("NULL") {
            return "((" + columns.map(\.sql).joined(separator: ", ") + ") \(first.ascending ? ">" : "<") (" + marks.joined(separator: ", ") + "))"
        }
        var terms: [String] = []
        for i in columns.indices {
            var parts = (0..<i).map { "\(columns[$0].sql) IS NOT DISTINCT FROM \(marks[$0])" }
            parts.append("\(columns[i].sql) \(columns[i].ascending ? ">" : "<") \(marks[i])")
            terms.append("(" + parts.joined(separator: " AND ") + ")")
        }
        return "(" + terms.joined(separator: " OR ") + ")"
    }
}
