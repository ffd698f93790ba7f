import Store

/// Row-order lists of a `$geoWithin $box` on PostgreSQL, as SQLite serves
/// them: a box that holds many points is tested row by row along the
/// primary key, which stops at the page, instead of gathering every point
/// of the box through the geo index and sorting them by row (a cost that
/// grows with the box's matches, so with the collection).
///
/// Whether a box is dense is not known before: the walk is bounded to
/// `budget` rows from the page's start (`d.rid <=` the budget's last row,
/// one index-only descent of the primary key). A page filled within them is
/// exact (those rows are a prefix of the row order); otherwise the reader
/// runs the list again with the geo index's candidates (`findInSnapshot`).
/// Each row meets a cheap sieve (`PostgresDialect.boxSieve`) before the exact test.
extension PostgresDocumentReader {
    /// Rows a box's walk may test: a hundred per row of the page and those
    /// skipped (a box of 1% of the points fills it), within [2,000, 50,000].
    static func boxWalkBudget(skip: Int, limit: Int) -> Int {
        let wanted = skip > Int.max - limit ? Int.max : skip + limit
        return wanted > 500 ? 50_000 : max(2_000, 100 * wanted)
    }

    /// The list's statement with its `$box` conditions tested on each row of
    /// a bounded walk of the primary key, or nil when the list has no box on
    /// a geo-indexed field or is not one the walk serves (sorted, nearest-first,
    /// a range field's order, rows hidden from the caller).
    func boxWalkStatement(_ layout: CollectionLayout, _ query: FindQuery, scope: AccessScope) throws -> PostgresListStatement? {
        guard query.sort.isEmpty, query.limit > 0 else { return nil }
        let used = KeyedFields()
        let compiler = makeListCompiler(layout, keyFields: try keyFields(layout, scope: scope, filter: query.filter), used: used)
        guard let candidates = compiler.geoCandidates else { return nil }
        var boxes = 0
        compiler.geoCandidates = { path, region, bind in
            // Asked with a bind of its own: the compiler's parameters are only those its SQL uses.
            if case .box(let minX, let maxX, let minY, let maxY) = region, candidates(path, region, { _ in "NULL" }) != nil {
                boxes += 1
                // Not an index condition: the planner walks the primary key, sieving before the exact test.
                return PostgresDialect().boxSieve(document: FilterCompiler.documentColumn, path: path.components,
                                                  minX: minX, maxX: maxX, minY: minY, maxY: maxY, bind: bind)
            }
            return candidates(path, region, bind)
        }
        let compiled = try compiler.compile(query.filter)
        guard boxes > 0 else { return nil }
        let statement = try listStatement(layout, compiled, query, scope: scope, keyed: used.fields,
                                          walkBudget: Self.boxWalkBudget(skip: query.skip, limit: query.limit))
        return statement.walkBudget == nil ? nil : statement
    }
}
