import JSON
import Store

/// Paths through arrays of documents, for `SQLiteDialect`.
extension SQLiteDialect {
    /// One step is a flat subquery, the common `address.city` or `tags.0`.
    /// Longer paths are one recursive CTE whose level counts the steps
    /// taken: SQL nesting does not grow with the path, which SQLite's parser
    /// (a stack of about 100 entries) could not take past a dozen steps.
    public func walk(from ref: ValueRef, steps: [PathWalkStep], alias: String, bind: (SQLValue) -> String) -> String {
        if steps.count == 1 { return step(from: ref, steps[0], alias: alias, bind: bind) }
        let w = "\(alias)w", e = "\(alias)e", s = "\(alias)s"
        // The steps as one bound JSON array of [key path, position path or
        // null], read by level. (A VALUES table costs SQLite one SELECT per
        // row to prepare, and a filter may hold many long paths.)
        let table = JSONValue.array(steps.map { step in
            .array([.string(Self.jsonPath([.key(step.key)])), step.index.map { .string(Self.jsonPath([.index($0)])) } ?? .null])
        })
        let key = "json_extract(\(s).value, '$[0]')", position = "json_extract(\(s).value, '$[1]')"
        let json = ValueRef.json(ofRow: w)
        let object = "CASE WHEN \(w).type = 'object' THEN \(json) END"
        let element = ValueRef.json(ofRow: e)
        let next = "FROM \(w) JOIN json_each(\(bind(.text(table.jsonText)))) AS \(s) ON \(s).key = \(w).lvl"
        var sql = "(WITH RECURSIVE \(w)(lvl, type, value, expand) AS ("
            + "SELECT 0, \(typeOf(ref, bind: bind)), \(valueOf(ref, bind: bind)), 1"
            + " UNION ALL SELECT \(w).lvl + 1, json_type(\(object), \(key)), json_extract(\(object), \(key)), 1"
            + " \(next) WHERE \(w).type IS NOT 'array'"
            + " UNION ALL SELECT \(w).lvl + 1, json_type(\(element), \(key)), json_extract(\(element), \(key)), 1"
            + " \(next), json_each(\(json)) AS \(e) WHERE \(w).type = 'array' AND \(e).type = 'object'"
        if steps.contains(where: { $0.index != nil }) {
            sql += " UNION ALL SELECT \(w).lvl + 1, json_type(\(json), \(position)), json_extract(\(json), \(position)), 0"
                + " \(next) WHERE \(w).type = 'array' AND json_type(\(json), \(position)) IS NOT NULL"
        }
        return sql + ") SELECT type, value, expand FROM \(w) WHERE lvl = \(steps.count)) AS \(alias)"
    }

    /// A single step as a UNION ALL of its (up to) three ways forward.
    func step(from ref: ValueRef, _ step: PathWalkStep, alias: String, bind: (SQLValue) -> String) -> String {
        let e = "\(alias)e"
        let type = typeOf(ref, bind: bind)
        // Only a document has keys: a string row holding JSON-like text has none.
        let own: ValueRef
        switch ref {
        case .path: own = ref.child(.key(step.key), self)
        case .element(let row):
            own = .path(base: "CASE WHEN \(row).type = 'object' THEN \(ValueRef.json(ofRow: row)) END", steps: [.key(step.key)])
        }
        let inElement = ValueRef.element(alias: e).child(.key(step.key), self)
        var sql = "(SELECT \(typeOf(own, bind: bind)) AS type, \(valueOf(own, bind: bind)) AS value, 1 AS expand"
            + " WHERE \(type) IS NOT 'array'"
            + " UNION ALL SELECT \(typeOf(inElement, bind: bind)), \(valueOf(inElement, bind: bind)), 1"
            + " FROM \(elements(of: ref, alias: e, bind: bind)) WHERE \(type) = 'array' AND \(e).type = 'object'"
        if let index = step.index {
            let positional = ref.child(.index(index), self)
            let positionalType = typeOf(positional, bind: bind)
            sql += " UNION ALL SELECT \(positionalType), \(valueOf(positional, bind: bind)), 0"
                + " WHERE \(type) = 'array' AND \(positionalType) IS NOT NULL"
        }
        return sql + ") AS \(alias)"
    }
}
