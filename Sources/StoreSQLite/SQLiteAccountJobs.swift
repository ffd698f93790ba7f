import JSON
import Store

/// `_account_jobs` on SQLite (`AccountJobsWriting`): what an account
/// deletion leaves for after its answer, and Apple refresh tokens.
enum AccountJobsSQL {
    static let migration = """
        CREATE TABLE _account_jobs (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            kind TEXT NOT NULL,
            user_id TEXT NOT NULL,
            payload TEXT,
            attempts INTEGER NOT NULL DEFAULT 0,
            due_at INTEGER NOT NULL,
            last_error TEXT,
            created_at INTEGER NOT NULL
        );
        CREATE INDEX _account_jobs_due ON _account_jobs(due_at);
        ALTER TABLE _identities ADD COLUMN client_id TEXT;
        ALTER TABLE _identities ADD COLUMN refresh_token TEXT;
        """
}

extension DocumentWriter {
    public func addAccountJob(kind: String, userID: String, payload: String?, nowMilliseconds: Int64) throws {
        try db.prepare("INSERT INTO _account_jobs (kind, user_id, payload, due_at, created_at) VALUES (?1, ?2, ?3, ?4, ?4)")
            .run([.text(kind), .text(userID), payload.map { .text($0) } ?? .null, .int(nowMilliseconds)])
    }

    public func claimAccountJobs(nowMilliseconds: Int64, leaseMilliseconds: Int64, limit: Int) throws -> [AccountJobRecord] {
        let jobs = try db.prepare("SELECT id, kind, user_id, payload, attempts FROM _account_jobs WHERE due_at <= ?1 ORDER BY due_at, id LIMIT ?2")
            .rows([.int(nowMilliseconds), .int(Int64(limit))]) {
                AccountJobRecord(id: $0.int(0), kind: $0.text(1), userID: $0.text(2), payload: $0.isNull(3) ? nil : $0.text(3), attempts: Int($0.int(4)))
            }
        let lease = try db.prepare("UPDATE _account_jobs SET due_at = ?2 WHERE id = ?1")
        for job in jobs { try lease.run([.int(job.id), .int(nowMilliseconds + leaseMilliseconds)]) }
        return jobs
    }

    public func finishAccountJob(id: Int64, attempts: Int, retryAt: Int64?, error: String?) throws {
        guard let retryAt else { return try db.prepare("DELETE FROM _account_jobs WHERE id = ?1").run([.int(id)]) }
        try db.prepare("UPDATE _account_jobs SET attempts = ?2, due_at = ?3, last_error = ?4 WHERE id = ?1")
            .run([.int(id), .int(Int64(attempts)), .int(retryAt), error.map { .text($0) } ?? .null])
    }

    public func accountJobCounts() throws -> [String: Int] {
        var counts: [String: Int] = [:]
        for (kind, n) in try db.prepare("SELECT kind, count(*) FROM _account_jobs GROUP BY kind").rows([], { ($0.text(0), Int($0.int(1))) }) {
            counts[kind] = n
        }
        return counts
    }

    public func setIdentityToken(provider: String, userID: String, clientID: String, token: String) throws -> Bool {
        try db.prepare("UPDATE _identities SET client_id = ?3, refresh_token = ?4 WHERE provider = ?1 AND user_id = ?2")
            .run([.text(provider), .text(userID), .text(clientID), .text(token)])
        return db.changes > 0
    }

    public func identityToken(provider: String, userID: String) throws -> (clientID: String, token: String)? {
        try db.prepare("SELECT client_id, refresh_token FROM _identities WHERE provider = ?1 AND user_id = ?2 AND refresh_token IS NOT NULL")
            .firstRow([.text(provider), .text(userID)]) { (clientID: $0.isNull(0) ? "" : $0.text(0), token: $0.text(1)) }
    }

    public func disownFile(id: String) throws -> Bool {
        guard let text = try db.prepare("SELECT doc FROM _files WHERE id = ?1").firstRow([.text(id)], { $0.text(0) }),
              case .object(var document) = try JSONParser.parse(text) else { return false }
        guard var acl = document["_acl"]?.objectValue, acl["creator"] != nil, acl["creator"] != .null else { return true }
        acl["creator"] = .null
        document["_acl"] = .object(acl)
        try db.prepare("UPDATE _files SET doc = ?2 WHERE id = ?1").run([.text(id), .text(document.jsonText)])
        try recordChange(FileMetadata.feedCollection, id: id, .update, previousText: text)
        return true
    }
}
