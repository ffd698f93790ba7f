import Store

/// The rows behind the log-in throttle: counters by key (`_login_failures`)
/// and the addresses each account has logged in from (`_login_known`).
/// Only the writer changes them, one job at a time, which is what makes a
/// check-then-count atomic.
extension DocumentWriter {
    /// Credentials by username, read inside the writer's transaction.
    public func credentials(username: String) throws -> CredentialRecord? {
        try AccountSQL.credentials(db, username: username)
    }

    /// Credentials by user id, read inside the writer's transaction (a
    /// signed-in user's password check counts against the throttle too).
    public func credentials(userID: String) throws -> CredentialRecord? {
        try AccountSQL.credentials(db, userID: userID)
    }

    /// The counter stored under `key`: (failures, window start, blocked until).
    public func loginCounter(_ key: String) throws -> (failures: Int64, windowStart: Int64, blockedUntil: Int64)? {
        try db.prepare("SELECT failures, window_start, blocked_until FROM _login_failures WHERE key = ?1")
            .firstRow([.text(key)]) { ($0.int(0), $0.int(1), $0.int(2)) }
    }

    public func saveLoginCounter(_ key: String, failures: Int64, windowStart: Int64, blockedUntil: Int64) throws {
        try db.prepare("""
            INSERT INTO _login_failures (key, failures, window_start, blocked_until) VALUES (?1, ?2, ?3, ?4)
            ON CONFLICT(key) DO UPDATE SET failures = ?2, window_start = ?3, blocked_until = ?4
            """).run([.text(key), .int(failures), .int(windowStart), .int(blockedUntil)])
    }

    public func deleteLoginCounter(_ key: String) throws {
        try db.prepare("DELETE FROM _login_failures WHERE key = ?1").run([.text(key)])
    }

    /// Deletes up to `limit` counters whose window began before `windowStartBefore`
    /// and whose block is over: they would start afresh anyway.
    public func pruneLoginCounters(windowStartBefore: Int64, now: Int64, limit: Int = 20) throws {
        try db.prepare("""
            DELETE FROM _login_failures WHERE rowid IN (SELECT rowid FROM _login_failures
            WHERE window_start < ?1 AND blocked_until <= ?2 LIMIT ?3)
            """).run([.int(windowStartBefore), .int(now), .int(Int64(limit))])
    }

    /// Whether `userID` logged in (or signed up) from `address` at or after `since`.
    public func isKnownLoginAddress(userID: String, address: String, since: Int64) throws -> Bool {
        try db.prepare("SELECT 1 FROM _login_known WHERE user_id = ?1 AND address = ?2 AND last_success >= ?3")
            .firstRow([.text(userID), .text(address), .int(since)]) { _ in true } ?? false
    }

    /// Records a successful log-in of `userID` from `address`; forgets a few
    /// records older than `forgetBefore`.
    public func rememberLoginAddress(userID: String, address: String, now: Int64, forgetBefore: Int64) throws {
        try db.prepare("""
            INSERT INTO _login_known (user_id, address, last_success) VALUES (?1, ?2, ?3)
            ON CONFLICT(user_id, address) DO UPDATE SET last_success = ?3
            """).run([.text(userID), .text(address), .int(now)])
        try db.prepare("DELETE FROM _login_known WHERE rowid IN (SELECT rowid FROM _login_known WHERE last_success < ?1 LIMIT 20)")
            .run([.int(forgetBefore)])
    }
}
