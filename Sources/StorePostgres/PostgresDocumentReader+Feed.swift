import JSON
import Store

/// The change feed on PostgreSQL as live streams and delta sync read it,
/// with `DocumentReader`'s methods, answers and errors.
///
/// Positions become visible in order (the writers' feed lock, see
/// `PostgresDocumentWriter+Feed`): every transaction a snapshot does not
/// see holds positions above every position it sees. So the largest
/// position a snapshot sees is a safe head: reading up to it and moving a
/// cursor there never steps over a change that commits later.
extension PostgresDocumentReader {
    /// Seals and opens this database's feed cursors: the key in `_meta`
    /// (migration 5), one for all nodes, read once per reader.
    public func cursorSeal() throws -> CursorSeal {
        if let seal { return seal }
        let hex: String?? = try db.first("SELECT value FROM _meta WHERE key = 'cursor_key'") { $0.text(0) }
        let loaded = try CursorSeal(hexKey: hex ?? nil)
        seal = loaded
        return loaded
    }

    /// The database's epoch and the feed's horizon (changes at or below it are gone).
    public func feedMeta() throws -> (epoch: String, horizon: Int64) {
        let rows = try db.query("SELECT key, value FROM _meta WHERE key IN ('epoch', 'feed_horizon')") { ($0.text(0) ?? "", $0.text(1) ?? "") }
        let meta = Dictionary(rows, uniquingKeysWith: { a, _ in a })
        return (meta["epoch"] ?? "", Int64(meta["feed_horizon"] ?? "0") ?? 0)
    }

    /// The last position this snapshot sees handed out (0 before the first
    /// change): the newest row's, which compaction keeps; never below the horizon.
    public func feedHead() throws -> Int64 {
        try db.first("""
            SELECT greatest(coalesce((SELECT max(seq) FROM _changes), 0),
                            coalesce((SELECT value::bigint FROM _meta WHERE key = 'feed_horizon'), 0))
            """) { $0.int(0) ?? 0 } ?? 0
    }

    /// Up to `limit` changes after `seq`, in order, each with the entity
    /// before and as committed: the `after` of a change is the `before` of
    /// the entity's next change, or the row as it is now when none followed.
    public func changes(after seq: Int64, limit: Int) throws -> (changes: [FeedChange], head: Int64) {
        try snapshot {
            let head = try feedHead()
            let rows: [FeedChange.Row] = try db.query("""
                SELECT seq, coll, id, op, at, prev_doc FROM _changes WHERE seq > $1::bigint AND seq <= $2::bigint ORDER BY seq LIMIT $3::bigint
                """, [.int(seq), .int(head), .int(Int64(limit))]) {
                (seq: $0.int(0) ?? 0, coll: $0.text(1) ?? "", id: $0.text(2) ?? "",
                 op: ChangeFeed.Operation(rawValue: $0.int(3) ?? 0) ?? .update, at: $0.int(4) ?? 0, before: $0.text(5))
            }
            let end = rows.last?.seq ?? seq
            // The state after `end` of each entity whose last change here is not a delete: read together.
            var last: [String: (coll: String, id: String)] = [:]
            for row in rows.reversed() where last[row.coll + "\u{0}" + row.id] == nil && row.op != .delete {
                last[row.coll + "\u{0}" + row.id] = (row.coll, row.id)
            }
            let committed = try committedStates(Array(last.values), after: end, head: head)
            let changes = FeedChange.withAfterStates(rows) { committed[$0 + "\u{0}" + $1] ?? nil }
            return (changes, head)
        }
    }

    /// Each entity as of the feed position `end`, keyed `collection NUL id`:
    /// the `before` of its first change after `end`, else the row now (nil:
    /// absent). One statement for the feed and one per collection, not one per entity.
    func committedStates(_ entities: [(coll: String, id: String)], after end: Int64, head: Int64) throws -> [String: String?] {
        var states: [String: String?] = [:]
        guard !entities.isEmpty else { return states }
        if end < head {
            let keys = JSONValue.array(entities.map { .object(JSONObject([("c", .string($0.coll)), ("i", .string($0.id))])) }).jsonText
            let later = try db.query("""
                SELECT k.c, k.i, f.prev_doc FROM json_to_recordset($2::json) AS k(c text, i text)
                CROSS JOIN LATERAL (SELECT prev_doc FROM _changes WHERE coll = k.c AND id = k.i AND seq > $1::bigint
                                    ORDER BY seq LIMIT 1) AS f
                """, [.int(end), .text(keys)]) { ($0.text(0) ?? "", $0.text(1) ?? "", $0.text(2)) }
            var patched: [(coll: String, id: String)] = []
            for (coll, id, before) in later {
                if FeedPrevious.isPatch(before) { patched.append((coll, id)) } else { states[coll + "\u{0}" + id] = .some(before) }
            }
            // A reverse patch: rebuilt from the entity's later changes and the row now (`FeedPrevious`).
            if !patched.isEmpty {
                let now = try currentStates(patched)
                for entity in patched {
                    let chain = try db.query("SELECT prev_doc FROM _changes WHERE coll = $1::text AND id = $2::text AND seq > $3::bigint ORDER BY seq",
                                             [.text(entity.coll), .text(entity.id), .int(end)]) { $0.text(0) }
                    let key = entity.coll + "\u{0}" + entity.id
                    states[key] = .some(FeedPrevious.befores(chain, final: now[key] ?? nil).first ?? nil)
                }
            }
        }
        let current = try currentStates(entities.filter { states[$0.coll + "\u{0}" + $0.id] == nil })
        states.merge(current) { old, _ in old }
        return states
    }

    /// Each entity's stored text now, keyed `collection NUL id` (absent: no row). One statement per collection.
    func currentStates(_ entities: [(coll: String, id: String)]) throws -> [String: String?] {
        var states: [String: String?] = [:]
        for (collection, group) in Dictionary(grouping: entities, by: \.coll) {
            guard let table = try feedTable(collection).sql else { continue }
            let ids = JSONValue.array(group.map { .string($0.id) }).jsonText
            let rows = try db.query("SELECT id, doc::text FROM \(table) WHERE id IN (SELECT json_array_elements_text($1::json))",
                                    [.text(ids)]) { ($0.text(0) ?? "", $0.text(1)) }
            for (id, text) in rows { states[collection + "\u{0}" + id] = .some(text) }
        }
        return states
    }

    /// The table holding `collection`'s entities (nil SQL when nothing was
    /// ever written to it). Files live in `_files` (rid, id, doc), as on SQLite.
    func feedTable(_ collection: String) throws -> (sql: String?, layout: CollectionLayout?) {
        if collection == FileMetadata.feedCollection { return ("_files", nil) }
        let layout = try catalog.layout(collection)
        return (layout?.table, layout)
    }

    /// A filter compiled once and evaluated on single documents: the same
    /// SQL the compiler makes for a list, run on a bound JSON text instead
    /// of a table, so live events match exactly what a list would.
    public func probe(_ filter: JSONValue) throws -> FilterProbe {
        let compiled = try FilterCompiler(dialect: dialect).compile(filter)
        let params = ParameterList(compiled.params)
        let document = params.bind(.text("")), id = params.bind(.text(""))
        let sql = "SELECT CASE WHEN (\(compiled.whereSQL)) THEN 1 ELSE 0 END"
            + " FROM (SELECT (\(document))::json AS doc, (\(document))::jsonb AS body, (\(id)) COLLATE \"C\" AS id, 0::bigint AS rid) AS d"
        let fixed = Array(params.values.dropLast(2))
        let db = self.db
        return FilterProbe(matchesAll: filter.objectValue?.isEmpty ?? false) { text, id, timeLimit in
            try db.transaction(begin: "BEGIN READ ONLY", waitForCommit: false) {
                db.deferTimeLimit(seconds: timeLimit)
                return try db.first(sql, fixed + [.text(text), .text(id)]) { $0.int(0) == 1 } ?? false
            }
        }
    }
}
