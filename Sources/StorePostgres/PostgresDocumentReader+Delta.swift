import JSON
import Store

/// Delta sync on PostgreSQL: `DocumentReader.delta`'s pages, cursors and
/// errors, from one REPEATABLE READ snapshot per page.
///
/// The head a page moves its cursor to is the largest position its
/// snapshot sees, which no still-open transaction can fall below (see
/// `PostgresDocumentReader+Feed`), so a client that pages on never skips a
/// change committed late by another node.
extension PostgresDocumentReader {
    /// What changed in `collection` after `since`, under the caller's rights
    /// of now. Without `since`: everything visible now (paged in row order),
    /// then a cursor to sync from. See `DocumentReader.delta`.
    public func delta(_ collection: String, since: FeedCursor?, filter: JSONValue, limit: Int,
                      scope: AccessScope, redaction: Redaction? = nil) throws -> DeltaPage {
        try scope.checkCollectionRead()
        let tag = scope.syncTag(collection)
        // The common case, nothing new since the cursor: one statement (one
        // snapshot), after the filter's check (a bad filter is still a 400).
        if let since, since.afterRowID == nil, let head = try emptyDeltaHead(collection, since: since, level: tag) {
            _ = try FilterCompiler(dialect: dialect).compile(filter)
            return DeltaPage(changed: [], deleted: [], cursor: FeedCursor(epoch: since.epoch, level: since.level, seq: head, afterRowID: nil), more: false)
        }
        return try snapshot {
            let (epoch, horizon) = try feedMeta()
            let head = try feedHead()
            if let since {
                guard since.epoch == epoch, since.level == tag, since.seq >= horizon, since.seq <= head else {
                    throw StoreError.expired("The cursor is older than the retained changes, or from another database or permission level; sync again from the start.")
                }
            }
            let compiled = try FilterCompiler(dialect: dialect).compile(filter)
            guard let table = try feedTable(collection).sql else {
                return DeltaPage(changed: [], deleted: [], cursor: FeedCursor(epoch: epoch, level: tag, seq: since?.seq ?? head, afterRowID: nil), more: false)
            }
            let params = ParameterList(compiled.params)
            let matching = PostgresAccess.visibleFirst(PostgresAccess.sql(scope.readRule, params.bind), compiled.whereSQL)
            let shape = { (text: String, id: String) in redaction.map { Self.redact(text, id: id, $0) } ?? text }
            if since == nil || since?.afterRowID != nil {
                // The first full listing, in row order, pinned to the feed position it started at.
                let start = since?.seq ?? head
                let after = params.bind(.int(since?.afterRowID ?? 0)), count = params.bind(.int(Int64(limit + 1)))
                let rows = try db.query("SELECT d.rid, d.id, d.doc::text FROM \(table) AS d WHERE d.rid > \(after) AND \(matching) ORDER BY d.rid LIMIT \(count)",
                                        params.values) { ($0.int(0) ?? 0, $0.text(1) ?? "", $0.text(2) ?? "{}") }
                let listed = DeltaPaging.listing(rows, rowID: \.0, limit: limit, start: start, epoch: epoch, level: tag)
                return DeltaPage(changed: listed.page.map { shape($0.2, $0.1) }, deleted: [], cursor: listed.cursor, more: listed.more)
            }
            let entries = try changedEntities(collection, table: table, since: since!, head: head, limit: limit, scope: scope)
            let (pageIDs, cursor, more) = DeltaPaging.changes(entries, limit: limit, head: head,
                                                              since: since!, epoch: epoch, level: tag)
            guard !pageIDs.isEmpty else { return DeltaPage(changed: [], deleted: [], cursor: cursor, more: false) }
            let ids = params.bind(.text(JSONValue.array(pageIDs.map { .string($0) }).jsonText))
            let current = try db.query("SELECT d.id, d.doc::text FROM \(table) AS d WHERE d.id IN (SELECT json_array_elements_text(\(ids)::json)) AND \(matching)",
                                       params.values) { ($0.text(0) ?? "", $0.text(1) ?? "{}") }
            let shown = Set(current.map(\.0))
            let hidden = pageIDs.filter { !shown.contains($0) }
            let deleted = try hiddenKnown(hidden, collection, since: since!, head: head, scope: scope)
            let changed = DeltaPaging.inPageOrder(current, ids: pageIDs).map { shape($0.1, $0.0) }
            return DeltaPage(changed: changed, deleted: deleted, cursor: cursor, more: more)
        }
    }

    /// The entities of `collection` changed after `since` up to `head`, each
    /// with its latest position, in that order, up to `limit + 1`: only those
    /// the caller can read now or could read in a state the page may report
    /// as deleted. See `DocumentReader.changedEntities`; here an entity's
    /// states are one probe of `_changes_entity` each.
    func changedEntities(_ collection: String, table: String, since: FeedCursor, head: Int64, limit: Int,
                         scope: AccessScope) throws -> [(id: String, seq: Int64)] {
        let params = ParameterList([.text(collection), .int(since.seq), .int(head), .int(Int64(limit + 1))])
        guard let now = PostgresAccess.sql(scope.readRule, params.bind),
              let readable = PostgresAccess.sql(scope.readRule, body: "(p.prev_doc::jsonb)", params.bind) else {
            return try db.query("""
                SELECT id, max(seq) FROM _changes WHERE coll = $1::text AND seq > $2::bigint AND seq <= $3::bigint
                GROUP BY id ORDER BY 2 LIMIT $4::bigint
                """, [.text(collection), .int(since.seq), .int(head), .int(Int64(limit + 1))]) { (id: $0.text(0) ?? "", seq: $0.int(1) ?? 0) }
        }
        // A state is parsed only when it mentions the caller at all.
        let mentioned = scope.quotedReaderID.map { "strpos(p.prev_doc, \(params.bind(.text($0)))) > 0" } ?? "p.prev_doc IS NOT NULL"
        let then = "CASE WHEN \(mentioned) THEN \(readable) ELSE FALSE END"
        // At the cursor only the state before the first change after it
        // counts; paging on, any state since the sync began.
        let before = since.base.map { base in """
            EXISTS (SELECT 1 FROM _changes AS p WHERE p.coll = $1::text AND p.id = g.id
                    AND p.seq > \(params.bind(.int(base))) AND p.seq <= $3::bigint AND \(then))
            """ } ?? "EXISTS (SELECT 1 FROM _changes AS p WHERE p.seq = g.first AND \(then))"
        return try db.query("""
            SELECT g.id, g.last FROM (
                SELECT id, max(seq) AS last, min(seq) AS first FROM _changes
                WHERE coll = $1::text AND seq > $2::bigint AND seq <= $3::bigint GROUP BY id) AS g
            WHERE EXISTS (SELECT 1 FROM \(table) AS d WHERE d.id = g.id AND \(now)) OR \(before)
            ORDER BY g.last LIMIT $4::bigint
            """, params.values) { (id: $0.text(0) ?? "", seq: $0.int(1) ?? 0) }
    }

    /// Of the entities gone from view, those the caller could read at the
    /// cursor or since the sync began (`DeltaPaging.knownDeleted`), their
    /// states read in one statement.
    func hiddenKnown(_ hidden: [String], _ collection: String, since: FeedCursor, head: Int64, scope: AccessScope) throws -> [String] {
        guard !hidden.isEmpty else { return [] }
        let list = JSONValue.array(hidden.map { .string($0) }).jsonText
        // One probe of `_changes_entity` per entity (LATERAL), never a join the planner may misjudge.
        let states = try db.query("""
            SELECT k.id, c.prev_doc FROM (SELECT DISTINCT json_array_elements_text($4::json) AS id) AS k
            CROSS JOIN LATERAL (SELECT seq, prev_doc FROM _changes
                                WHERE coll = $1::text AND id = k.id AND seq > $2::bigint AND seq <= $3::bigint) AS c
            ORDER BY c.seq
            """, [.text(collection), .int(since.base ?? since.seq), .int(head), .text(list)]) { ($0.text(0) ?? "", $0.text(1)) }
        let whole = try FeedPrevious.whole(states) { ids in
            try currentStates(ids.map { (coll: collection, id: $0) }).reduce(into: [String: String]()) { out, entry in
                if let text = entry.value { out[String(entry.key.drop { $0 != "\u{0}" }.dropFirst())] = text }
            }
        }
        return DeltaPaging.knownDeleted(hidden, states: whole, since: since, scope: scope)
    }

    /// The feed's head when `since` is valid (this database's epoch, the
    /// caller's level, retained, not past the head) and nothing in
    /// `collection` changed after it; otherwise nil (the full path decides).
    func emptyDeltaHead(_ collection: String, since: FeedCursor, level: String) throws -> Int64? {
        guard since.level == level else { return nil }
        let row = try db.first("""
            SELECT (SELECT value FROM _meta WHERE key = 'epoch'), (SELECT value FROM _meta WHERE key = 'feed_horizon'),
                   coalesce((SELECT max(seq) FROM _changes), 0),
                   EXISTS (SELECT 1 FROM _changes WHERE coll = $1::text AND seq > $2::bigint)
            """, [.text(collection), .int(since.seq)]) { ($0.text(0), Int64($0.text(1) ?? "") ?? 0, $0.int(2) ?? 0, $0.bool(3) ?? true) }
        guard let (epoch, horizon, newest, changed) = row else { return nil }
        let head = max(newest, horizon)
        guard since.epoch == epoch, since.seq >= horizon, since.seq <= head, !changed else { return nil }
        return head
    }

    /// `text` without `redaction`'s top-level fields, unless it is the
    /// excepted row (the caller's own record). `json` keeps the text as
    /// written, so the fields go in Swift, in the document's own order.
    static func redact(_ text: String, id: String, _ redaction: Redaction) -> String {
        guard !redaction.fields.isEmpty, id != redaction.exceptID, case .object(var document)? = try? JSONParser.parse(text) else { return text }
        for field in redaction.fields { document[field] = nil }
        return document.jsonText
    }
}
