import JSON
import Store

/// Read-only listings for the admin console on PostgreSQL, bounded as on
/// SQLite (a page, a count). `collectionDetails` reads `_indexes` (the
/// declared indexes' table) and `filePage` reads `_files` (file rows).
extension PostgresDocumentReader {
    /// Every collection with its document count, by name (bytewise, as SQLite orders).
    public func collectionSummaries() throws -> [(name: String, count: Int)] {
        let names = try db.query("SELECT name FROM _collections WHERE name <> 'users' ORDER BY name COLLATE \"C\"") { $0.text(0) ?? "" }
        return try names.map { name in (name, try count(name, filter: .object(JSONObject()))) }
    }

    /// Every collection but `users`, by name, with its count and indexes.
    public func collectionDetails(named: String?) throws -> [CollectionDetail] {
        let rows = try db.query("SELECT id, name FROM _collections WHERE name <> 'users' ORDER BY name COLLATE \"C\"") { ($0.int(0) ?? 0, $0.text(1) ?? "") }
        let indexes = try db.query("SELECT collection_id, path, kind FROM _indexes ORDER BY path COLLATE \"C\"") {
            (id: $0.int(0) ?? 0, path: $0.text(1) ?? "", kind: $0.text(2) ?? "")
        }
        return try rows.filter { named == nil || $0.1 == named }.map { id, name in
            CollectionDetail(name: name, count: try count(name, filter: .object(JSONObject())),
                             indexes: indexes.filter { $0.id == id }.map { ($0.path, $0.kind) })
        }
    }

    /// One page of file metadata documents, newest first, and the number of files, from one snapshot.
    public func filePage(limit: Int, skip: Int) throws -> (documents: [String], total: Int) {
        try snapshot {
            let documents = try db.query("SELECT doc::text FROM _files ORDER BY rid DESC LIMIT $1::bigint OFFSET $2::bigint",
                                         [.int(Int64(limit)), .int(Int64(skip))]) { $0.text(0) ?? "" }
            let total = try db.first("SELECT count(*) FROM _files") { Int($0.int(0) ?? 0) } ?? 0
            return (documents, total)
        }
    }

    /// `creator`'s own files, newest first (`GET /files`); only their rows are read, `after` included.
    /// A read rule on files (`scope`) hides those it does not admit.
    public func ownFiles(creator: String, limit: Int, after: String?, scope: AccessScope) throws -> [String] {
        let params = ParameterList([.text(creator), .int(Int64(limit))] + (after.map { [.text($0)] } ?? []))
        let position = after == nil ? "" : " AND d.rid < (SELECT rid FROM _files WHERE id = $3::text AND doc->'_acl'->>'creator' = $1::text)"
        let visible = PostgresAccess.sql(scope.readRule, params.bind).map { " AND \($0)" } ?? ""
        return try db.query("SELECT d.doc::text FROM _files AS d WHERE d.doc->'_acl'->>'creator' = $1::text\(position)\(visible) ORDER BY d.rid DESC LIMIT $2::bigint",
                            params.values) { $0.text(0) ?? "" }
    }

    /// `userID`'s live sessions, most recently used first (at most 200).
    public func sessions(userID: String, now: Int64) throws -> [SessionSummary] {
        try db.query("""
            SELECT left(token_hash, 16), created_at, last_seen, expires_at FROM _sessions
            WHERE user_id = $1::text AND expires_at > $2::bigint ORDER BY last_seen DESC LIMIT 200
            """, [.text(userID), .int(now)]) {
            SessionSummary(id: $0.text(0) ?? "", createdAt: $0.int(1) ?? 0, lastSeen: $0.int(2) ?? 0, expiresAt: $0.int(3) ?? 0)
        }
    }

    /// Webhook deliveries still waiting to be sent or retried.
    public func pendingDeliveryCount() throws -> Int {
        try db.first("SELECT count(*) FROM _webhook_deliveries WHERE status = 'pending'") { Int($0.int(0) ?? 0) } ?? 0
    }
}
