import JSON
import Store

extension DocumentReader {
    /// What changed in `collection` after `since`, under the caller's rights
    /// of now, from one read snapshot. Without `since`: everything visible
    /// now (paged in row order), then a cursor to sync from.
    ///
    /// A page holds each entity once, in the order of its latest change, so
    /// an entity that changes again later shows up in a later page: a client
    /// that pages on never misses a change, whatever the writers do meanwhile.
    public func delta(_ collection: String, since: FeedCursor?, filter: JSONValue, limit: Int,
                      scope: AccessScope, redaction: Redaction? = nil) throws -> DeltaPage {
        try scope.checkCollectionRead()
        // The common case, nothing new since the cursor: one statement (one
        // snapshot) checks the cursor and probes the feed's index, without a
        // transaction, compiling the filter beyond its check or touching the table.
        if let since, since.afterRowID == nil,
           let head = try emptyDeltaHead(collection, since: since, level: scope.syncTag(collection)) {
            _ = try FilterCompiler(dialect: dialect).compile(filter) // a bad filter is still a 400
            return DeltaPage(changed: [], deleted: [], cursor: FeedCursor(epoch: since.epoch, level: since.level, seq: head, afterRowID: nil), more: false)
        }
        return try db.readTransaction {
            let (epoch, horizon) = try feedMeta()
            let head = try feedHead()
            let tag = scope.syncTag(collection)
            if let since {
                guard since.epoch == epoch, since.level == tag, since.seq >= horizon, since.seq <= head else {
                    throw StoreError.expired("The cursor is older than the retained changes, or from another database or permission level; sync again from the start.")
                }
            }
            let table = try tableName(collection)
            let guarded = scope.hidesRows
            let compiler = try table.layout.map { makeCompiler($0, guarded: guarded) } ?? FilterCompiler(dialect: dialect)
            compiler.useIndexes = compiler.useIndexes && table.layout != nil
            let compiled = try compiler.compile(filter)
            guard let tableSQL = table.sql else {
                return DeltaPage(changed: [], deleted: [], cursor: FeedCursor(epoch: epoch, level: tag, seq: since?.seq ?? head, afterRowID: nil), more: false)
            }
            let own = table.layout.flatMap { scope.visibleRows($0, compiler.bind) }.map { "\($0) AND " } ?? ""
            let matching = own + Self.visibleFirst(scope.readPredicate(compiler.bind, layout: table.layout), compiled.whereSQL)
            let document = redaction?.selectSQL(compiler.bind) ?? "d.doc"
            if since == nil || since?.afterRowID != nil {
                // The first full listing, in row order, pinned to the feed position it started at.
                let start = since?.seq ?? head
                let after = compiler.bind(.int(since?.afterRowID ?? 0))
                let rows = try db.withTimeLimit(timeLimit) {
                    try db.prepare("SELECT d.rid, \(document) FROM \(tableSQL) AS d WHERE d.rid > \(after) AND \(matching) ORDER BY d.rid LIMIT \(limit + 1)")
                        .rows(compiler.params) { ($0.int(0), $0.text(1)) }
                }
                let listed = DeltaPaging.listing(rows, rowID: \.0, limit: limit, start: start, epoch: epoch, level: tag)
                return DeltaPage(changed: listed.page.map(\.1), deleted: [], cursor: listed.cursor, more: listed.more)
            }
            let from = since!.seq
            let entries = try db.withTimeLimit(timeLimit) {
                try changedEntities(collection, table: table, since: since!, head: head, limit: limit, scope: scope)
            }
            let (pageIDs, cursor, more) = DeltaPaging.changes(entries, limit: limit, head: head,
                                                              since: since!, epoch: epoch, level: tag)
            guard !pageIDs.isEmpty else { return DeltaPage(changed: [], deleted: [], cursor: cursor, more: false) }
            let ids = compiler.bind(.text(JSONValue.array(pageIDs.map { .string($0) }).jsonText))
            let current = try db.withTimeLimit(timeLimit) {
                try db.prepare("SELECT d.id, \(document) FROM \(tableSQL) AS d WHERE d.id IN (SELECT value FROM json_each(\(ids))) AND \(matching)")
                    .rows(compiler.params) { ($0.text(0), $0.text(1)) }
            }
            let shown = Set(current.map(\.0))
            // Gone from view: reported when the caller could read it at the
            // cursor or since the sync began (`DeltaPaging.knownDeleted`).
            var deleted: [String] = []
            let hidden = pageIDs.filter { !shown.contains($0) }
            if !hidden.isEmpty {
                let list = JSONValue.array(hidden.map { .string($0) }).jsonText
                let states = try db.withTimeLimit(timeLimit) { try db.prepare("""
                    SELECT id, prev_doc FROM _changes WHERE coll = ?1 AND seq > ?2 AND seq <= ?3
                    AND id IN (SELECT value FROM json_each(?4)) ORDER BY seq
                    """).rows([.text(collection), .int(since!.base ?? from), .int(head), .text(list)]) {
                        ($0.text(0), $0.isNull(1) ? nil : $0.text(1))
                    } }
                let whole = try FeedPrevious.whole(states) { ids in
                    let list = compiler.bind(.text(JSONValue.array(ids.map { .string($0) }).jsonText))
                    return Dictionary(try db.prepare("SELECT d.id, d.doc FROM \(tableSQL) AS d WHERE d.id IN (SELECT value FROM json_each(\(list)))")
                        .rows(compiler.params) { ($0.text(0), $0.text(1)) }, uniquingKeysWith: { a, _ in a })
                }
                deleted = DeltaPaging.knownDeleted(hidden, states: whole, since: since!, scope: scope)
            }
            let changed = DeltaPaging.inPageOrder(current, ids: pageIDs).map(\.1)
            return DeltaPage(changed: changed, deleted: deleted, cursor: cursor, more: more)
        }
    }

    /// The entities of `collection` changed after `since` up to `head`, each
    /// with its latest position, in that order, up to `limit + 1`: only those
    /// the caller can read now or could read in a state the page may report
    /// as deleted (`DeltaPaging.knownDeleted`), so that neither a page's
    /// size nor its cursor counts others' private changes. Every row is
    /// visible on levels other than private, where the feed is read as is.
    func changedEntities(_ collection: String, table: (sql: String?, layout: CollectionLayout?), since: FeedCursor, head: Int64,
                         limit: Int, scope: AccessScope) throws -> [(id: String, seq: Int64)] {
        var params: [SQLValue] = [.text(collection), .int(since.seq), .int(head), .int(Int64(limit + 1)), .int(since.base ?? since.seq)]
        let bind = { (v: SQLValue) -> String in params.append(v); return "?\(params.count)" }
        guard let tableSQL = table.sql, let now = scope.readPredicate(bind), let then = scope.readPredicate(state: "p.prev_doc", bind) else {
            return try db.prepare("""
                SELECT id, max(seq) FROM _changes WHERE coll = ?1 AND seq > ?2 AND seq <= ?3
                GROUP BY id ORDER BY 2 LIMIT ?4
                """).rows(Array(params.prefix(4))) { (id: $0.text(0), seq: $0.int(1)) }
        }
        // A state is parsed only when it mentions the caller at all.
        let mentioned = scope.quotedReaderID.map { "instr(p.prev_doc, \(bind(.text($0)))) > 0" } ?? "p.prev_doc IS NOT NULL"
        let thenCheaply = "CASE WHEN \(mentioned) THEN coalesce(\(then), 0) ELSE 0 END"
        // The caller's own rows first (the read side table), so others' rows are never parsed.
        let own = table.layout.flatMap { scope.visibleRows($0, bind) }.map { "\($0) AND " } ?? ""
        let visibleNow = "EXISTS (SELECT 1 FROM \(tableSQL) AS d WHERE d.id = g.id AND \(own)\(now))"
        let sql = since.base == nil
            // Only the state at the cursor (before the first change after it) counts.
            ? """
              SELECT g.id, g.last FROM (
                  SELECT id, max(seq) AS last, min(seq) AS first FROM _changes
                  WHERE coll = ?1 AND seq > ?2 AND seq <= ?3 GROUP BY id) AS g
              WHERE \(visibleNow) OR EXISTS (SELECT 1 FROM _changes AS p WHERE p.seq = g.first AND \(thenCheaply))
              ORDER BY g.last LIMIT ?4
              """
            // Paging on: any state since the sync began (?5) counts; one scan judges them all.
            : """
              SELECT g.id, g.last FROM (
                  SELECT p.id, max(p.seq) AS last, max(\(thenCheaply)) AS seen FROM _changes AS p
                  WHERE p.coll = ?1 AND p.seq > ?5 AND p.seq <= ?3 GROUP BY p.id) AS g
              WHERE g.last > ?2 AND (g.seen OR \(visibleNow))
              ORDER BY g.last LIMIT ?4
              """
        return try db.prepare(sql).rows(params) { (id: $0.text(0), seq: $0.int(1)) }
    }

    /// The feed's head when `since` is valid (this database's epoch, the
    /// caller's level, retained, not past the head) and nothing in
    /// `collection` changed after it; otherwise nil (the full path decides).
    func emptyDeltaHead(_ collection: String, since: FeedCursor, level: String) throws -> Int64? {
        guard since.level == level else { return nil }
        let row = try db.prepare("""
            SELECT (SELECT value FROM _meta WHERE key = 'epoch'), (SELECT value FROM _meta WHERE key = 'feed_horizon'),
                   coalesce((SELECT max(seq) FROM _changes), 0),
                   EXISTS (SELECT 1 FROM _changes WHERE coll = ?1 AND seq > ?2)
            """).firstRow([.text(collection), .int(since.seq)]) { ($0.text(0), Int64($0.text(1)) ?? 0, $0.int(2), $0.int(3)) }
        guard let (epoch, horizon, newest, changed) = row else { return nil }
        let head = max(newest, horizon)
        guard since.epoch == epoch, since.seq >= horizon, since.seq <= head, changed == 0 else { return nil }
        return head
    }

    /// The database's epoch and the feed's horizon (changes at or below it are gone).
    public func feedMeta() throws -> (epoch: String, horizon: Int64) {
        let rows = try db.prepare("SELECT key, value FROM _meta WHERE key IN ('epoch', 'feed_horizon')").rows { ($0.text(0), $0.text(1)) }
        let meta = Dictionary(rows, uniquingKeysWith: { a, _ in a })
        return (meta["epoch"] ?? "", Int64(meta["feed_horizon"] ?? "0") ?? 0)
    }

    /// The last position ever handed out (0 before the first change): the
    /// newest row's, which compaction keeps; never below the horizon.
    public func feedHead() throws -> Int64 {
        try db.prepare("""
            SELECT max(coalesce((SELECT max(seq) FROM _changes), 0),
                       coalesce((SELECT CAST(value AS INTEGER) FROM _meta WHERE key = 'feed_horizon'), 0))
            """).firstRow { $0.int(0) } ?? 0
    }

    /// The table holding `collection`'s entities (nil SQL when nothing was ever written to it).
    func tableName(_ collection: String) throws -> (sql: String?, layout: CollectionLayout?) {
        if collection == FileMetadata.feedCollection { return ("_files", nil) }
        let layout = try catalog.layout(collection)
        return (layout?.table, layout)
    }
}
