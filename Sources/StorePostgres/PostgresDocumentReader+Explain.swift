import JSON
import Store

/// PostgreSQL's own plan of a filter, for tests (`explain` is with the list
/// statement it explains, `PostgresListStatement`).
extension PostgresDocumentReader {
    /// PostgreSQL's `EXPLAIN` lines of a find with `filter` (no access rule, no order).
    public func plan(_ collection: String, filter: JSONValue) throws -> [String] {
        guard let layout = try catalog.layout(collection) else { return [] }
        let compiled = try FilterCompiler(dialect: dialect).compile(filter)
        return try db.query("EXPLAIN SELECT d.doc FROM \(layout.table) AS d WHERE \(compiled.whereSQL)", compiled.params) { $0.text(0) ?? "" }
    }
}

