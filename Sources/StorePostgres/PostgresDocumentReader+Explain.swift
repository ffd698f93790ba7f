import JSON
import Store

/// How a read runs on PostgreSQL, for operators (`?explain=true`) and tests:
/// the statements a list runs and PostgreSQL's own plan for each.
extension PostgresDocumentReader {
    /// The strategy (every list is one scan statement on PostgreSQL), the
    /// order, and each statement with its `EXPLAIN` lines. The list runs
    /// once (within its limit) to collect its statements exactly.
    public func explain(_ collection: String, _ query: FindQuery, scope: AccessScope = .system) throws -> JSONValue {
        try scope.checkCollectionRead()
        guard try catalog.layout(collection) != nil else {
            return .object(JSONObject([("strategy", .string("empty")), ("order", .string("")), ("statements", .array([]))]))
        }
        let seen = StatementLog()
        db.observer = { sql, params in seen.statements.append((sql, params)) }
        defer { db.observer = nil }
        _ = try snapshot { try findInSnapshot(collection, query, scope: scope) }
        db.observer = nil
        let statements: [JSONValue] = try seen.statements.filter { !$0.sql.hasPrefix("SELECT set_config") }.map { sql, params in
            let lines = try db.query("EXPLAIN " + sql, params) { $0.text(0) ?? "" }
            return .object(JSONObject([("sql", .string(sql)), ("plan", .array(lines.map { .string($0) }))]))
        }
        let order = query.sort.map { "\($0.field):\($0.ascending ? 1 : -1)" }.joined(separator: ",")
        return .object(JSONObject([("strategy", .string("scan")), ("order", .string(order)), ("statements", .array(statements))]))
    }

    /// PostgreSQL's `EXPLAIN` lines of a find with `filter` (no access rule, no order).
    public func plan(_ collection: String, filter: JSONValue) throws -> [String] {
        guard let layout = try catalog.layout(collection) else { return [] }
        let compiled = try FilterCompiler(dialect: dialect).compile(filter)
        return try db.query("EXPLAIN SELECT d.doc FROM \(layout.table) AS d WHERE \(compiled.whereSQL)", compiled.params) { $0.text(0) ?? "" }
    }
}

/// The statements one read ran, in order.
private final class StatementLog {
    var statements: [(sql: String, params: [SQLValue])] = []
}
