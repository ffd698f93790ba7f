import JSON
import Store

/// Read-only listings for the admin console: every query is bounded (a
/// page, an indexed count), so none grows with the size of a collection
/// beyond SQLite's `count(*)`.
extension DocumentReader {
    /// Every collection but `users`, by name, with its count and indexes.
    public func collectionDetails(named: String?) throws -> [CollectionDetail] {
        let rows = try db.prepare("SELECT id, name FROM _collections WHERE name <> 'users' ORDER BY name").rows { ($0.int(0), $0.text(1)) }
        let indexes = try db.prepare("SELECT collection_id, path, kind FROM _indexes ORDER BY path")
            .rows { (id: $0.int(0), path: $0.text(1), kind: $0.text(2)) }
        return try rows.filter { named == nil || $0.1 == named }.map { id, name in
            CollectionDetail(name: name, count: try count(name, filter: .object(JSONObject())),
                             indexes: indexes.filter { $0.id == id }.map { ($0.path, $0.kind) })
        }
    }

    /// One page of file metadata documents, newest first, and the number of files.
    public func filePage(limit: Int, skip: Int) throws -> (documents: [String], total: Int) {
        try db.readTransaction {
            let documents = try db.prepare("SELECT doc FROM _files ORDER BY rid DESC LIMIT ?1 OFFSET ?2")
                .rows([.int(Int64(limit)), .int(Int64(skip))]) { $0.text(0) }
            let total = try db.prepare("SELECT count(*) FROM _files").firstRow { Int($0.int(0)) } ?? 0
            return (documents, total)
        }
    }

    /// `creator`'s own files, newest first (`GET /files`); only their rows are read, `after` included.
    /// A read rule on files (`scope`) hides those it does not admit.
    public func ownFiles(creator: String, limit: Int, after: String?, scope: AccessScope) throws -> [String] {
        var params: [SQLValue] = [.text(creator), .int(Int64(limit))] + (after.map { [.text($0)] } ?? [])
        let position = after == nil ? "" : " AND d.rid < (SELECT rid FROM _files WHERE id = ?3 AND json_extract(doc, '$._acl.creator') = ?1)"
        let bind = { (v: SQLValue) -> String in params.append(v); return "?\(params.count)" }
        let visible = scope.readPredicate(bind).map { " AND \($0)" } ?? ""
        return try db.prepare("SELECT d.doc FROM _files AS d WHERE json_extract(d.doc, '$._acl.creator') = ?1\(position)\(visible) ORDER BY d.rid DESC LIMIT ?2")
            .rows(params) { $0.text(0) }
    }

    /// `userID`'s live sessions, most recently used first (at most 200).
    public func sessions(userID: String, now: Int64) throws -> [SessionSummary] {
        try db.prepare("""
            SELECT substr(token_hash, 1, 16), created_at, last_seen, expires_at FROM _sessions
            WHERE user_id = ?1 AND expires_at > ?2 ORDER BY last_seen DESC LIMIT 200
            """).rows([.text(userID), .int(now)]) {
            SessionSummary(id: $0.text(0), createdAt: $0.int(1), lastSeen: $0.int(2), expiresAt: $0.int(3))
        }
    }

    /// Webhook deliveries still waiting to be sent or retried (an index count).
    public func pendingDeliveryCount() throws -> Int {
        try db.prepare("SELECT count(*) FROM _webhook_deliveries WHERE status = 'pending'").firstRow { Int($0.int(0)) } ?? 0
    }
}

extension DocumentWriter {
    /// Revokes `userID`'s sessions: the one whose hash starts with `id`, or
    /// all of them when `id` is nil. Returns how many ended.
    public func revokeSessions(userID: String, id: String?) throws -> Int {
        if let id {
            guard id.count == 16, id.allSatisfy(\.isHexDigit) else { return 0 }
            try db.prepare("DELETE FROM _sessions WHERE user_id = ?1 AND substr(token_hash, 1, 16) = ?2").run([.text(userID), .text(id)])
        } else {
            try db.prepare("DELETE FROM _sessions WHERE user_id = ?1").run([.text(userID)])
        }
        return db.changes
    }
}
