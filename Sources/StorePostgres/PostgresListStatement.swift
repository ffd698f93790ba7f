import JSON
import Store

/// The statement that reads one page of a list on PostgreSQL, the columns
/// of its order (for the next page's cursor), and, for a nearest-first
/// list, the probe it ran first through the geo index.
struct PostgresListStatement {
    struct Probe {
        let sql: String
        let params: [SQLValue]
    }

    let sql: String
    let params: [SQLValue]
    let columns: [PostgresOrderColumn]
    let order: String
    let probe: Probe?
    /// The list's shape, for `PostgresListTotals`.
    let shape: Int
    /// The condition is the filter's (no `after` keyset, no nearest bound):
    /// the rows before OFFSET and after the page are all matches too.
    let readsEveryMatch: Bool
    /// The last column is the number of all matches (`count(*) OVER ()`), the same on every row.
    let countsTotal: Bool
    /// The fields whose key conditions the statement uses, each behind its gate (`PostgresKeyConditions`).
    var gated: Set<String> = []
    /// A box's walk of its points table, bounded to this many points (`PostgresBoxWalk`).
    var walkBudget: Int?
}

extension PostgresDocumentReader {
    /// How a list would be read (`?explain=true`, for operators): its
    /// strategy and each statement with PostgreSQL's plan for it, in the
    /// shape `DocumentReader.explain` gives on SQLite.
    public func explain(_ collection: String, _ query: FindQuery, scope: AccessScope = .system) throws -> JSONValue {
        try scope.checkCollectionRead()
        return try snapshot {
            let layout = try catalog.layout(collection)
            guard let layout else {
                _ = try makeCompiler(nil).compile(query.filter)
                return .object(JSONObject([("strategy", .string("empty")), ("order", .string("")), ("statements", .array([]))]))
            }
            // The statement the list runs: without key conditions on fields that hold arrays.
            // A box's bounded walk first, as the list runs it (its fallback is the geo index's gather).
            var statement = try listStatement(layout, query, scope: scope, boxWalk: true)
            if !statement.gated.isEmpty, try foundArrays(layout, statement.gated) { statement = try listStatement(layout, query, scope: scope, boxWalk: true) }
            let parts = (statement.probe.map { [($0.sql, $0.params)] } ?? []) + [(statement.sql, statement.params)]
            var trees: [String] = []
            let statements: [JSONValue] = try parts.map { sql, params in
                let lines = try db.query("EXPLAIN " + sql, params) { $0.text(0) ?? "" }
                let tree = try db.first("EXPLAIN (FORMAT JSON) " + sql, params) { $0.text(0) ?? "" } ?? "[]"
                trees.append(tree)
                return .object(JSONObject([("sql", .string(sql)), ("plan", .array(lines.map { .string($0) })),
                                           ("tree", (try? JSONParser.parse(tree)) ?? .array([]))]))
            }
            let strategy = statement.probe != nil ? "nearest-knn"
                : PostgresPlanStrategy.name(ofJSONPlan: trees.last ?? "", insertionOrder: statement.order.isEmpty)
            return .object(JSONObject([("strategy", .string(strategy)), ("order", .string(statement.order)), ("statements", .array(statements))]))
        }
    }
}

extension PostgresDocumentReader {
    /// The EXPLAIN lines of a find's filter, for tests and operators
    /// (`DocumentReader.plan`); empty for a collection never written.
    public func plan(_ collection: String, filter: JSONValue) throws -> [String] {
        try snapshot {
            guard let layout = try catalog.layout(collection) else { return [] }
            let compiled = try makeCompiler(layout).compile(filter)
            return try db.query("EXPLAIN SELECT d.doc FROM \(layout.table) AS d WHERE \(compiled.whereSQL)", compiled.params) { $0.text(0) ?? "" }
        }
    }
}
