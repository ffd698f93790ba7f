import JSON
import Store

/// `_account_jobs` on PostgreSQL (`AccountJobsSQL` on SQLite): every node
/// may run them; a claim pushes the due time past a lease (`FOR UPDATE SKIP
/// LOCKED`), so two nodes never take the same job at once.
enum PostgresAccountJobsSQL {
    static let migration = (version: 17, sql: """
        CREATE TABLE _account_jobs (
            id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            kind text NOT NULL,
            user_id text COLLATE "C" NOT NULL,
            payload text,
            attempts integer NOT NULL DEFAULT 0,
            due_at bigint NOT NULL,
            last_error text,
            created_at bigint NOT NULL
        );
        CREATE INDEX _account_jobs_due ON _account_jobs (due_at);
        ALTER TABLE _identities ADD COLUMN client_id text;
        ALTER TABLE _identities ADD COLUMN refresh_token text;
        """)
}

extension PostgresDocumentWriter {
    public func addAccountJob(kind: String, userID: String, payload: String?, nowMilliseconds: Int64) throws {
        try db.run("INSERT INTO _account_jobs (kind, user_id, payload, due_at, created_at) VALUES ($1::text, $2::text, $3::text, $4::bigint, $4::bigint)",
                   [.text(kind), .text(userID), payload.map { .text($0) } ?? .null, .int(nowMilliseconds)])
    }

    public func claimAccountJobs(nowMilliseconds: Int64, leaseMilliseconds: Int64, limit: Int) throws -> [AccountJobRecord] {
        try db.query("""
            UPDATE _account_jobs SET due_at = $2::bigint WHERE id IN (SELECT id FROM _account_jobs
            WHERE due_at <= $1::bigint ORDER BY due_at, id LIMIT $3::bigint FOR UPDATE SKIP LOCKED)
            RETURNING id, kind, user_id, payload, attempts
            """, [.int(nowMilliseconds), .int(nowMilliseconds + leaseMilliseconds), .int(Int64(limit))]) {
            AccountJobRecord(id: $0.int(0) ?? 0, kind: $0.text(1) ?? "", userID: $0.text(2) ?? "", payload: $0.text(3), attempts: Int($0.int(4) ?? 0))
        }
    }

    public func finishAccountJob(id: Int64, attempts: Int, retryAt: Int64?, error: String?) throws {
        guard let retryAt else { return try db.run("DELETE FROM _account_jobs WHERE id = $1::bigint", [.int(id)]) }
        try db.run("UPDATE _account_jobs SET attempts = $2::integer, due_at = $3::bigint, last_error = $4::text WHERE id = $1::bigint",
                   [.int(id), .int(Int64(attempts)), .int(retryAt), error.map { .text($0) } ?? .null])
    }

    public func accountJobCounts() throws -> [String: Int] {
        var counts: [String: Int] = [:]
        for (kind, n) in try db.query("SELECT kind, count(*) FROM _account_jobs GROUP BY kind", [], { ($0.text(0) ?? "", Int($0.int(1) ?? 0)) }) {
            counts[kind] = n
        }
        return counts
    }

    public func setIdentityToken(provider: String, userID: String, clientID: String, token: String) throws -> Bool {
        try db.first("UPDATE _identities SET client_id = $3::text, refresh_token = $4::text WHERE provider = $1::text AND user_id = $2::text RETURNING 1",
                     [.text(provider), .text(userID), .text(clientID), .text(token)]) { _ in true } ?? false
    }

    public func identityToken(provider: String, userID: String) throws -> (clientID: String, token: String)? {
        try db.first("SELECT client_id, refresh_token FROM _identities WHERE provider = $1::text AND user_id = $2::text AND refresh_token IS NOT NULL",
                     [.text(provider), .text(userID)]) { (clientID: $0.text(0) ?? "", token: $0.text(1) ?? "") }
    }

    public func disownFile(id: String) throws -> Bool {
        let stored: String?? = try db.first("SELECT doc::text FROM _files WHERE id = $1::text FOR UPDATE", [.text(id)]) { $0.text(0) }
        guard let text = stored ?? nil, case .object(var document) = try JSONParser.parse(text) else { return false }
        guard var acl = document["_acl"]?.objectValue, acl["creator"] != nil, acl["creator"] != .null else { return true }
        acl["creator"] = .null
        document["_acl"] = .object(acl)
        try db.run("UPDATE _files SET doc = $2::json WHERE id = $1::text", [.text(id), .text(document.jsonText)])
        recordChange(FileMetadata.feedCollection, id: id, .update, previousText: text)
        return true
    }
}
