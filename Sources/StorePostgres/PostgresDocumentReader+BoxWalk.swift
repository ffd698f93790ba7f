import Store

/// The walk of a `$geoWithin $box` list in row order: a box's points table
/// (`PostgresGeoPoints`) read along its primary key, an index-only scan
/// whose entries hold each point's `x` and `y`, so testing a row costs a
/// comparison, not a parse of the document; only the rows inside the box
/// are fetched, by row id, and meet the rest of the filter, stopping at the
/// page. Gathering every point of the box through the GiST index and
/// sorting them by row would cost the box's matches, which grow with the
/// collection.
///
/// Whether a box is dense is not known before: the walk is bounded to
/// `budget` points from the page's start (a prefix of the row order, so a
/// page filled within them is exact); otherwise the reader runs the list
/// again with the geo index's candidates (`findInSnapshot`).
struct PostgresBoxWalk {
    /// The points table of the box's field.
    let points: String
    let minX: Double, maxX: Double, minY: Double, maxY: Double
    let budget: Int

    /// Points a walk may test: a hundred per row of the page and those
    /// skipped (a box of 1% of the points fills it), within [2,000, 50,000].
    static func budget(skip: Int, limit: Int) -> Int {
        let wanted = skip > Int.max - limit ? Int.max : skip + limit
        return wanted > 500 ? 50_000 : max(2_000, 100 * wanted)
    }

    /// The FROM clause: the walked rows inside the box as `m` (`m.rid`, in
    /// row order), each one's row as `d` (a LATERAL subquery behind `OFFSET 0`,
    /// never flattened into a join the planner could turn into a scan of the table).
    func from(table: String, after: SQLValue?, _ bind: (SQLValue) -> String) -> String {
        let start = after.map { " WHERE q.rid > \(bind($0))" } ?? ""
        // float8 parameters: a numeric one is converted again on every row under a generic plan.
        func bound(_ v: Double) -> String { PostgresDialect.asFloat8(bind(.double(v))) }
        return "(SELECT w.rid FROM (SELECT q.rid, q.x, q.y FROM \(points) AS q\(start) ORDER BY q.rid LIMIT \(bind(.int(Int64(budget))))) AS w"
            + " WHERE w.x BETWEEN \(bound(minX)) AND \(bound(maxX)) AND w.y BETWEEN \(bound(minY)) AND \(bound(maxY))) AS m"
            + " CROSS JOIN LATERAL (SELECT * FROM \(table) AS d0 WHERE d0.rid = m.rid OFFSET 0) AS d"
    }
}

extension PostgresDocumentReader {
    /// The list's statement as a walk of its box's points table, or nil when
    /// the filter has no `$box` that every match must meet on a field with a
    /// filled points table, or the list is not one the walk serves (sorted,
    /// nearest-first, a range field's order, rows hidden from the caller).
    func boxWalkStatement(_ layout: CollectionLayout, _ query: FindQuery, scope: AccessScope) throws -> PostgresListStatement? {
        guard query.sort.isEmpty, query.limit > 0, case .all = scope.readRule else { return nil }
        let budget = PostgresBoxWalk.budget(skip: query.skip, limit: query.limit)
        var walk: PostgresBoxWalk?
        for (path, minX, maxX, minY, maxY) in Self.requiredBoxes(try Filter(query.filter).clauses) {
            guard let points = try geoIndex(layout, path.description)?.points else { continue }
            walk = PostgresBoxWalk(points: points, minX: minX, maxX: maxX, minY: minY, maxY: maxY, budget: budget)
            break
        }
        guard let walk else { return nil }
        let used = KeyedFields()
        let compiler = makeListCompiler(layout, keyFields: try keyFields(layout, scope: scope, filter: query.filter), used: used)
        // No GiST conditions: the walk reads no index of the table but its primary key, and on each
        // fetched row a candidate's test (`ll_to_earth` of the parsed point) would cost more than the
        // exact tests, which read the points tables.
        compiler.geoCandidates = nil
        let compiled = try compiler.compile(query.filter)
        let statement = try listStatement(layout, compiled, query, scope: scope, keyed: used.fields, walk: walk)
        return statement.walkBudget == nil ? nil : statement
    }

    /// The `$box`es of `clauses` that every match meets: those of the top
    /// level and of its `$and`s (not under `$or`, `$nor`, `$not` or `$elemMatch`).
    static func requiredBoxes(_ clauses: [Filter.Clause]) -> [(FieldPath, Double, Double, Double, Double)] {
        clauses.flatMap { clause -> [(FieldPath, Double, Double, Double, Double)] in
            switch clause {
            case .group(.and, let entries): return entries.flatMap { requiredBoxes($0) }
            case .field(let path, let ops):
                return ops.compactMap {
                    if case .geoWithin(.box(let minX, let maxX, let minY, let maxY)) = $0 { return (path, minX, maxX, minY, maxY) }
                    return nil
                }
            default: return []
            }
        }
    }
}
