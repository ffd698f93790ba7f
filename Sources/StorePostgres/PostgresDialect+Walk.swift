import Store

/// Paths through arrays of documents, for `PostgresDialect`: one `LATERAL`
/// subquery per step, each reading the rows of the one before, so the SQL
/// grows linearly with the path.
extension PostgresDialect {
    public func walk(from ref: ValueRef, steps: [PathWalkStep], alias: String, bind: (SQLValue) -> String) -> String {
        var items: [String] = []
        var current = ref
        for (i, step) in steps.enumerated() {
            let name = i == steps.count - 1 ? alias : "\(alias)_\(i)"
            items.append(self.step(from: current, step, alias: name, bind: bind))
            current = .element(alias: name)
        }
        return items.joined(separator: ", ")
    }

    /// One step as a UNION ALL of its (up to) three ways forward: the key of
    /// a value that is not an array, the key of each element that is a
    /// document, and, for a numeric key, the element at that position. Rows
    /// are `(type, value, json, expand)`, as `elements`' with `expand`.
    func step(from ref: ValueRef, _ step: PathWalkStep, alias: String, bind: (SQLValue) -> String) -> String {
        let e = "\(alias)_k"
        let type = typeOf(ref, bind: bind)
        let own: ValueRef
        switch ref {
        case .path(let base, let steps): own = .path(base: base, steps: steps + [.key(step.key)])
        case .element(let row):
            own = .path(base: "CASE WHEN \(row).type = 'object' THEN \(row).value END", steps: [.key(step.key)])
        }
        let inElement = ValueRef.path(base: "\(e).value", steps: [.key(step.key)])
        var sql = "LATERAL (SELECT \(typeOf(own, bind: bind)) AS type, \(valueOf(own, bind: bind)) AS value,"
            + " \(text(own, bind: bind)) AS json, TRUE AS expand"
            + " WHERE \(type) IS DISTINCT FROM 'array'"
            + " UNION ALL SELECT \(typeOf(inElement, bind: bind)), \(valueOf(inElement, bind: bind)), \(text(inElement, bind: bind)), TRUE"
            + " FROM \(elements(of: ref, alias: e, bind: bind)) WHERE \(type) = 'array' AND \(e).type = 'object'"
        if let index = step.index {
            let positional: ValueRef
            switch ref {
            case .path(let base, let steps): positional = .path(base: base, steps: steps + [.index(index)])
            case .element(let row): positional = .path(base: "\(row).value", steps: [.index(index)])
            }
            let positionalType = typeOf(positional, bind: bind)
            sql += " UNION ALL SELECT \(positionalType), \(valueOf(positional, bind: bind)), \(text(positional, bind: bind)), FALSE"
                + " WHERE \(type) = 'array' AND \(positionalType) IS NOT NULL"
        }
        return sql + ") AS \(alias)"
    }
}
