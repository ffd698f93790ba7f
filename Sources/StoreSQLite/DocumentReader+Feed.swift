import JSON
import Store

extension DocumentReader {
    /// Up to `limit` changes after `seq`, in order, each with the entity
    /// before and as committed: the `after` of a change is the `before` of
    /// the entity's next change, or the row as it is now when none followed.
    public func changes(after seq: Int64, limit: Int) throws -> (changes: [FeedChange], head: Int64) {
        try db.readTransaction {
            let head = try feedHead()
            let rows: [FeedChange.Row] = try db.prepare("""
                SELECT seq, coll, id, op, at, prev_doc FROM _changes WHERE seq > ?1 AND seq <= ?2 ORDER BY seq LIMIT ?3
                """).rows([.int(seq), .int(head), .int(Int64(limit))]) {
                (seq: $0.int(0), coll: $0.text(1), id: $0.text(2), op: ChangeFeed.Operation(rawValue: $0.int(3)) ?? .update,
                 at: $0.int(4), before: $0.isNull(5) ? nil : $0.text(5))
            }
            let end = rows.last?.seq ?? seq
            let changes = try FeedChange.withAfterStates(rows) { try committedState($0, $1, after: end, head: head) }
            return (changes, head)
        }
    }

    /// The entity as of the feed position `end`: the `before` of its first
    /// change after `end`, else the row now.
    /// A reverse patch there is rebuilt from the entity's later changes and the row now.
    func committedState(_ collection: String, _ id: String, after end: Int64, head: Int64) throws -> String? {
        let later = "SELECT prev_doc FROM _changes WHERE coll = ?1 AND seq > ?2 AND id = ?3 ORDER BY seq"
        if end < head, let first = try db.prepare(later + " LIMIT 1")
            .firstRow([.text(collection), .int(end), .text(id)], { $0.isNull(0) ? Optional<String>.none : $0.text(0) }) {
            guard FeedPrevious.isPatch(first) else { return first }
            let chain = try db.prepare(later).rows([.text(collection), .int(end), .text(id)]) { $0.isNull(0) ? Optional<String>.none : $0.text(0) }
            return FeedPrevious.befores(chain, final: try currentText(collection, id)).first ?? nil
        }
        return try currentText(collection, id)
    }

    /// The entity's stored text now (nil: absent).
    func currentText(_ collection: String, _ id: String) throws -> String? {
        guard let table = try tableName(collection).sql else { return nil }
        return try db.prepare("SELECT doc FROM \(table) WHERE id = ?1").firstRow([.text(id)]) { $0.text(0) }
    }

    /// A filter compiled once and evaluated on single documents in memory:
    /// the same SQL the compiler makes for a list, run on a bound JSON text
    /// instead of a table, so live events match exactly what a list would.
    public func probe(_ filter: JSONValue) throws -> FilterProbe {
        let compiler = FilterCompiler(dialect: dialect)
        compiler.useIndexes = false
        let compiled = try compiler.compile(filter)
        let n = compiled.params.count
        let sql = "SELECT CASE WHEN (\(compiled.whereSQL)) THEN 1 ELSE 0 END FROM (SELECT ?\(n + 1) AS doc, ?\(n + 2) AS id, 0 AS rid, "
            + "json_extract(?\(n + 1), '$._createdAt') AS created_at, json_extract(?\(n + 1), '$._updatedAt') AS updated_at) AS d"
        return FilterProbe(db: db, sql: sql, params: compiled.params, matchesAll: filter.objectValue?.isEmpty ?? false)
    }
}

extension FilterProbe {
    /// A probe that runs `sql` on the reader's connection.
    convenience init(db: SQLiteConnection, sql: String, params: [SQLValue], matchesAll: Bool) {
        self.init(matchesAll: matchesAll) { text, id, timeLimit in
            try db.withTimeLimit(timeLimit) {
                try db.prepare(sql).firstRow(params + [.text(text), .text(id)]) { $0.int(0) != 0 } ?? false
            }
        }
    }
}
