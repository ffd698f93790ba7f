/// Paths through arrays of documents, for `SQLiteDialect`.
extension SQLiteDialect {
    /// One step is a flat subquery, the common `address.city` or `tags.0`.
    /// Longer paths are one recursive CTE whose level counts the steps
    /// taken: SQL nesting does not grow with the path, which SQLite's parser
    /// (a stack of about 100 entries) could not take past a dozen steps.
    public func walk(from ref: ValueRef, steps: [PathWalkStep], alias: String, bind: (SQLValue) -> String) -> String {
        if steps.count == 1 { return step(from: ref, steps[0], alias: alias, bind: bind) }
        let w = "\(alias)w", e = "\(alias)e"
        let n = steps.count
        // The key and position for the row's level, each bound once.
        var keyCases = "CASE \(w).lvl", indexCases = "CASE \(w).lvl"
        for (level, step) in steps.enumerated() {
            keyCases += " WHEN \(level) THEN \(bind(.text(Self.jsonPath([.key(step.key)]))))"
            if let i = step.index { indexCases += " WHEN \(level) THEN \(bind(.text(Self.jsonPath([.index(i)]))))" }
        }
        keyCases += " END"
        indexCases += " END"
        let json = ValueRef.json(ofRow: w)
        let object = "CASE WHEN \(w).type = 'object' THEN \(json) END"
        let element = ValueRef.json(ofRow: e)
        var sql = "(WITH RECURSIVE \(w)(lvl, type, value, expand) AS ("
            + "SELECT 0, \(typeOf(ref, bind: bind)), \(valueOf(ref, bind: bind)), 1"
            + " UNION ALL SELECT \(w).lvl + 1, json_type(\(object), \(keyCases)), json_extract(\(object), \(keyCases)), 1"
            + " FROM \(w) WHERE \(w).lvl < \(n) AND \(w).type IS NOT 'array'"
            + " UNION ALL SELECT \(w).lvl + 1, json_type(\(element), \(keyCases)), json_extract(\(element), \(keyCases)), 1"
            + " FROM \(w), json_each(\(json)) AS \(e) WHERE \(w).lvl < \(n) AND \(w).type = 'array' AND \(e).type = 'object'"
        if steps.contains(where: { $0.index != nil }) {
            sql += " UNION ALL SELECT \(w).lvl + 1, json_type(\(json), \(indexCases)), json_extract(\(json), \(indexCases)), 0"
                + " FROM \(w) WHERE \(w).lvl < \(n) AND \(w).type = 'array' AND json_type(\(json), \(indexCases)) IS NOT NULL"
        }
        return sql + ") SELECT type, value, expand FROM \(w) WHERE lvl = \(n)) AS \(alias)"
    }

    /// A single step as a UNION ALL of its (up to) three ways forward.
    func step(from ref: ValueRef, _ step: PathWalkStep, alias: String, bind: (SQLValue) -> String) -> String {
        let e = "\(alias)e"
        let type = typeOf(ref, bind: bind)
        // Only a document has keys: a string row holding JSON-like text has none.
        let own: ValueRef
        switch ref {
        case .path: own = ref.child(.key(step.key))
        case .element(let row):
            own = .path(base: "CASE WHEN \(row).type = 'object' THEN \(ValueRef.json(ofRow: row)) END", steps: [.key(step.key)])
        }
        let inElement = ValueRef.element(alias: e).child(.key(step.key))
        var sql = "(SELECT \(typeOf(own, bind: bind)) AS type, \(valueOf(own, bind: bind)) AS value, 1 AS expand"
            + " WHERE \(type) IS NOT 'array'"
            + " UNION ALL SELECT \(typeOf(inElement, bind: bind)), \(valueOf(inElement, bind: bind)), 1"
            + " FROM \(elements(of: ref, alias: e, bind: bind)) WHERE \(type) = 'array' AND \(e).type = 'object'"
        if let index = step.index {
            let positional = ref.child(.index(index))
            let positionalType = typeOf(positional, bind: bind)
            sql += " UNION ALL SELECT \(positionalType), \(valueOf(positional, bind: bind)), 0"
                + " WHERE \(type) = 'array' AND \(positionalType) IS NOT NULL"
        }
        return sql + ") AS \(alias)"
    }
}
