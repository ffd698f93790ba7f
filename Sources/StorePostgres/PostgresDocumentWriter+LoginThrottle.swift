import Store

/// The rows behind the log-in throttle on PostgreSQL: counters by key
/// (`_login_failures`) and the addresses each account logged in from
/// (`_login_known`), shared by every node.
///
/// On SQLite one writer thread makes each check-then-count atomic. Here
/// several nodes' writers count on the same rows, so reading a counter
/// first takes `pg_advisory_xact_lock(throttleLockKey)`, held until the
/// batch commits: another node's attempt reads the counters only after this
/// one's counts are committed, and no count is lost. One lock (not a row
/// lock per key) so that two batches can never wait for each other's keys
/// in opposite orders; it is held for a group commit's few milliseconds, and
/// only by batches that log someone in. Call these inside `commitBatch`.
extension PostgresDocumentWriter {
    /// The advisory-lock key of the log-in counters ("Roost" + 3, this area's migration).
    static let throttleLockKey: Int64 = 0x526F_6F73_7403

    /// Credentials by username, read inside the writer's transaction.
    public func credentials(username: String) throws -> CredentialRecord? {
        try PostgresAccountSQL.credentials(db, username: username)
    }

    /// Credentials by user id, read inside the writer's transaction (a
    /// signed-in user's password check counts against the throttle too).
    public func credentials(userID: String) throws -> CredentialRecord? {
        try PostgresAccountSQL.credentials(db, userID: userID)
    }

    /// The counter stored under `key`: (failures, window start, blocked until).
    /// Takes the throttle lock first (see above).
    public func loginCounter(_ key: String) throws -> (failures: Int64, windowStart: Int64, blockedUntil: Int64)? {
        try db.run("SELECT pg_advisory_xact_lock($1::bigint)", [.int(Self.throttleLockKey)])
        return try db.first("SELECT failures, window_start, blocked_until FROM _login_failures WHERE key = $1::text", [.text(key)]) {
            ($0.int(0) ?? 0, $0.int(1) ?? 0, $0.int(2) ?? 0)
        }
    }

    public func saveLoginCounter(_ key: String, failures: Int64, windowStart: Int64, blockedUntil: Int64) throws {
        try db.run("""
            INSERT INTO _login_failures (key, failures, window_start, blocked_until) VALUES ($1::text, $2::bigint, $3::bigint, $4::bigint)
            ON CONFLICT (key) DO UPDATE SET failures = excluded.failures, window_start = excluded.window_start,
              blocked_until = excluded.blocked_until
            """, [.text(key), .int(failures), .int(windowStart), .int(blockedUntil)])
    }

    public func deleteLoginCounter(_ key: String) throws {
        try db.run("DELETE FROM _login_failures WHERE key = $1::text", [.text(key)])
    }

    /// Deletes up to `limit` counters whose window began before `windowStartBefore`
    /// and whose block is over: they would start afresh anyway.
    public func pruneLoginCounters(windowStartBefore: Int64, now: Int64, limit: Int = 20) throws {
        try db.run("""
            DELETE FROM _login_failures WHERE key IN (SELECT key FROM _login_failures
            WHERE window_start < $1::bigint AND blocked_until <= $2::bigint LIMIT $3::bigint FOR UPDATE SKIP LOCKED)
            """, [.int(windowStartBefore), .int(now), .int(Int64(limit))])
    }

    /// Whether `userID` logged in (or signed up) from `address` at or after `since`.
    public func isKnownLoginAddress(userID: String, address: String, since: Int64) throws -> Bool {
        try db.first("SELECT 1 FROM _login_known WHERE user_id = $1::text AND address = $2::text AND last_success >= $3::bigint",
                     [.text(userID), .text(address), .int(since)]) { _ in true } ?? false
    }

    /// Records a successful log-in of `userID` from `address`; forgets a few
    /// records older than `forgetBefore`.
    public func rememberLoginAddress(userID: String, address: String, now: Int64, forgetBefore: Int64) throws {
        try db.run("""
            INSERT INTO _login_known (user_id, address, last_success) VALUES ($1::text, $2::text, $3::bigint)
            ON CONFLICT (user_id, address) DO UPDATE SET last_success = excluded.last_success
            """, [.text(userID), .text(address), .int(now)])
        try db.run("""
            DELETE FROM _login_known WHERE (user_id, address) IN (SELECT user_id, address FROM _login_known
            WHERE last_success < $1::bigint LIMIT 20 FOR UPDATE SKIP LOCKED)
            """, [.int(forgetBefore)])
    }
}
